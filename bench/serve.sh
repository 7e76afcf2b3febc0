#!/bin/sh
# pairsight serve under wrk on loopback, against the in-process
# ps_model_predict on the same queries in the same run (bench/bench_serve.c):
# single-query and 1,000-query POST /v1/predict at 1 and 2 server threads,
# requests/s, predictions/s, p50/p99 latency, and the ratio to in-process;
# then single queries paced by wrk's delay() at about 1,000 requests/s on one
# connection, for the p99 at that rate. Times are wall clock on whatever
# machine this runs on: on a shared one, say so beside the figures. Each
# http line also gives the server's CPU time over its run (all its threads,
# from /proc) as predictions per CPU second against the in-process call's
# (bench_serve's inproc_cpu), cpu_ratio: the measure that a shared machine
# disturbs least.
# usage: bench/serve.sh BUILD MODEL OPS COEXEC [SECONDS]
set -eu
B=${1:?usage: bench/serve.sh BUILD MODEL OPS COEXEC [SECONDS]}
MODEL=$2 OPS=$3 CX=$4 SECS=${5:-5}
command -v wrk >/dev/null || { echo "bench/serve.sh: wrk not found (apt-get install wrk)" >&2; exit 2; }
T=$(mktemp -d /tmp/ps_serve_bench.XXXXXX)
trap 'kill "$pid" 2>/dev/null; rm -rf "$T"' EXIT
pid=
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)
awk -F, 'BEGIN { OFS = "," } NR <= 1001 { print $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }' "$CX" >"$T/q.csv"
/usr/bin/python3 - "$T" <<'PY'
import csv, json, sys
t = sys.argv[1]
rows = list(csv.DictReader(open(t + "/q.csv")))
ints = {"hp_batch", "hp_start", "hp_len", "lp_batch", "lp_start", "lp_len", "hp_tpcs", "lp_tpcs"}
q = [{k: (int(v) if k in ints else v) for k, v in r.items()} for r in rows]
json.dump({"queries": q[:1]}, open(t + "/one.json", "w"))
json.dump({"queries": q[:1000]}, open(t + "/thousand.json", "w"))
for name in ("one", "thousand"):
    open("%s/%s.lua" % (t, name), "w").write(
        'wrk.method = "POST"\nlocal f = io.open("%s/%s.json")\nwrk.body = f:read("*a")\nf:close()\n'
        'wrk.headers["Content-Type"] = "application/json"\n' % (t, name))
open(t + "/paced.lua", "w").write(open(t + "/one.lua").read() + "function delay() return 1 end\n")
PY
"$B/bench_serve" "$MODEL" "$OPS" "$T/q.csv" "$T/one.json" "$T/thousand.json" | tee "$T/inproc.txt"
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for threads in 1 2; do
    "$B/pairsight" serve --model "$MODEL" --ops "$OPS" --listen 127.0.0.1:$port --threads $threads -q \
        --max-connections 64 2>"$T/serve.log" &
    pid=$!
    for _ in $(seq 50); do curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 0.1; done
    for name in one thousand; do
        n=1; [ $name = thousand ] && n=1000
        c0=$(ticks $pid)
        wrk -t $threads -c $((2 * threads)) -d "${SECS}s" --latency -s "$T/$name.lua" \
            http://127.0.0.1:$port/v1/predict >"$T/wrk.txt"
        cpu=$(($(ticks $pid) - c0))
        ref=$(awk -v b=$n -v t=$threads '$2 == "batch=" b && $3 == "threads=" t { sub("preds_per_s=", "", $4); print $4 }' \
            "$T/inproc.txt")
        ref_cpu=$(awk -v b=$n '$1 == "handler" && $2 == "batch=" b { sub("inproc_cpu=", "", $4); print $4 }' "$T/inproc.txt")
        awk -v n=$n -v t=$threads -v ref="$ref" -v cpu="$cpu" -v hz="$hz" -v ref_cpu="$ref_cpu" '
            / 50%/ { p50 = $2 } / 99%/ { p99 = $2 } /Requests\/sec/ { rps = $2 } / Non-2xx/ { bad = $NF }
            / requests in / { reqs = $1 }
            END { cs = cpu / hz; pc = cs > 0 ? reqs * n / cs : 0
                  printf "http batch=%d threads=%d req_per_s=%.0f preds_per_s=%.0f p50=%s p99=%s inproc=%.0f ratio=%.2f non2xx=%d",
                         n, t, rps, rps * n, p50, p99, ref, rps * n / ref, bad
                  printf " cpu_s=%.2f preds_per_cpu_s=%.0f inproc_cpu=%.0f cpu_ratio=%.2f\n", cs, pc, ref_cpu, pc / ref_cpu }' \
            "$T/wrk.txt"
    done
    if [ $threads = 1 ]; then
        wrk -t 1 -c 1 -d "${SECS}s" --latency -s "$T/paced.lua" http://127.0.0.1:$port/v1/predict >"$T/wrk.txt"
        awk '/ 50%/ { p50 = $2 } / 99%/ { p99 = $2 } /Requests\/sec/ { rps = $2 }
             END { printf "paced batch=1 threads=1 req_per_s=%.0f p50=%s p99=%s\n", rps, p50, p99 }' "$T/wrk.txt"
    fi
    kill $pid
    wait $pid || true
done
