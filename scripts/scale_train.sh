#!/bin/sh
# Training at scale (docs/prediction.md, "Training memory"): simulate
# campaigns of 73k, 728k and 7.28M samples (14 runs per experiment) and train
# each with one grid point, under /usr/bin/time -v. The 7.28M step takes
# about 50 CPU-minutes and 6.2 GB.
#
# usage: scripts/scale_train.sh [OUTDIR [EXPERIMENTS...]]
#   OUTDIR       where campaigns, models and logs go (default out/scale)
#   EXPERIMENTS  campaign sizes in experiments (default 5200 52000 520000)
# Prints one line per size: samples, peak RSS (KB), CPU s, wall, test MAPE.
set -eu
case ${1:-} in -h | --help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${PAIRSIGHT:-$root/build/pairsight}
out=${1:-out/scale}
[ $# -gt 0 ] && shift
sizes=${*:-5200 52000 520000}
[ -x "$bin" ] || { echo "scale_train.sh: $bin not built (scripts/test.sh builds it)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "scale_train.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
for e in $sizes; do
    d=$out/e$e
    mkdir -p "$d"
    if [ ! -s "$d/coexec.csv" ]; then
        /usr/bin/time -v "$bin" simulate --experiments "$e" --runs 14 --out "$d" -q 2> "$d/sim.time"
    fi
    /usr/bin/time -v "$bin" train --ops "$d/ops.csv" --coexec "$d/coexec.csv" --out "$d/m.psm" \
        --depths 8 --etas 0.1 --threads 2 --json > "$d/train.json" 2> "$d/train.time"
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$d/train.time")
    cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.1f", s }' "$d/train.time")
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$d/train.time")
    mape=$(sed -n 's/.*"test_mape":\[\([^]]*\)\].*/\1/p' "$d/train.json")
    echo "experiments $e: peak RSS $rss KB, CPU $cpu s, wall $wall, test MAPE HP,LP $mape"
done
