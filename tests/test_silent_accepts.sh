#!/bin/sh
# Smaller silent accepts (issue 30 item 6), each refused or warned of now:
# a torch-trace dur beyond one hour (2^64 us was written as 1.8e22 ns) and
# an ops.csv holding one; bytes after the trace's JSON, after the gzip data
# or in a second gzip member; numeric options written in hexadecimal or
# with leading spaces; plan --lp-start past the LP model's last operator
# (it wrapped round); a coexec row whose segment lies outside its model
# named by FILE:LINE:COLUMN in train, adapt and eval.
# Usage: sh tests/test_silent_accepts.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_silent_accepts.sh PAIRSIGHT}
case $CLI in /*) ;; *) CLI=$PWD/$CLI ;; esac
. tests/clitest.sh
PY=/usr/bin/python3
[ -x $PY ] || { echo "skip: no $PY"; exit 77; }

# Torch traces.
$PY - "$T" <<'PYEOF'
import gzip, json, sys
d = sys.argv[1]
t = open("tests/data/torch_trace.json").read()
j = json.loads(t)
for e in j["traceEvents"] if isinstance(j, dict) else j:
    if e.get("cat", "").lower() == "kernel":
        e["dur"] = 18446744073709551616
        break
open(f"{d}/big.json", "w").write(json.dumps(j))
open(f"{d}/trail.json", "w").write(t + "\n garbage{")
g = gzip.compress(t.encode())
open(f"{d}/two.json.gz", "wb").write(g + gzip.compress(t.encode()))
open(f"{d}/gtrail.json.gz", "wb").write(g + b"JUNKJUNK")
PYEOF
imp() { expect "$1" "$CLI" import torch-trace "$T/$2" --model x --tpcs 54 --out "$T/o.csv" -q; }
imp 1 big.json
has "$T/err" "dur 1.84467e+19 us: must be in 0..3600000000 (one hour"
imp 0 trail.json
has "$T/err" "trail.json:18:2: 8 bytes after the trace's JSON ignored"
imp 0 two.json.gz
has "$T/err" "after the trace's JSON ignored (in the decompressed text: a second gzip member?)"
imp 0 gtrail.json.gz
has "$T/err" "gtrail.json.gz: 8 bytes after the gzip data ignored"
imp 0 ../../$PWD/tests/data/torch_trace.json
[ -s "$T/err" ] && fail "a clean trace warned: $(cat "$T/err")"
printf 'gpu,model,batch,op,name,tpcs,duration_ns\nA100-SXM4-40GB,x,1,0,k,54,1.8e22\n' >"$T/h.csv"
expect 1 "$CLI" check "$T/h.csv"
has "$T/err" "h.csv:2:7: duration_ns: 1.8e+22: must be in (0, 3.6e+12]"

# Numeric options.
expect 0 "$CLI" simulate --gpu a100 --experiments 30 --runs 1 --threads 1 --seed 3 --out "$T/c" -q
TR="train --ops $T/c/ops.csv --coexec $T/c/coexec.csv --out $T/x.psm --threads 1 -q"
for bad in "--rounds|0x10" "--rounds| 5" "--rounds|5 " "--etas|0x1p-2" "--etas|0.3,inf" "--depths|3,0x4" \
    "--etas| 0.3"; do
    # shellcheck disable=SC2086
    expect 2 "$CLI" $TR "${bad%%|*}" "${bad#*|}"
    has "$T/err" "bad value"
done
expect 2 "$CLI" simulate --gpu a100 --experiments " 3" --out "$T/d" -q
expect 2 "$CLI" simulate --gpu a100 --experiments 0x3 --out "$T/d" -q

# plan --lp-start past the LP model's operators.
expect 0 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/m.psm" --threads 1 --depths 3 \
    --rounds 4 -q
n_lp=$(awk -F, '$2 == "bert-base" && $3 == 8 && $6 == 54 { n++ } END { print n }' "$T/c/ops.csv")
expect 1 "$CLI" plan --model "$T/m.psm" --ops "$T/c/ops.csv" --hp resnet50:8 --lp bert-base:8 --slo-factor 1.3 \
    --lp-start 1000000
has "$T/err" "lp_start 1000000 is outside bert-base's"

# A coexec row with a segment outside its model: FILE:LINE:COLUMN.
first=$(awk -F, 'NR == 2 { print $1 }' "$T/c/coexec.csv")
for col in 5 6; do
    awk -F, -v OFS=, -v e="$first" -v c=$col 'NR > 1 && $1 == e { $c = 2147483647 } 1' "$T/c/coexec.csv" >"$T/big.csv"
    expect 1 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/big.csv" --out "$T/y.psm" --threads 1 --rounds 2 -q
    has "$T/err" "pairsight: train: $T/big.csv:2:$col: coexec row 1 (experiment $first): hp: segment"
    expect 1 "$CLI" adapt --model "$T/m.psm" --ops "$T/c/ops.csv" --coexec "$T/big.csv" --out "$T/y.psm" -q
    has "$T/err" "pairsight: adapt: $T/big.csv:2:$col: coexec row 1"
    expect 1 "$CLI" eval --model "$T/m.psm" --ops "$T/c/ops.csv" --coexec "$T/big.csv"
    has "$T/err" "pairsight: eval: $T/big.csv:2:$col: coexec row 1"
done
finish test_silent_accepts
