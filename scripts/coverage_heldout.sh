#!/bin/sh
# Coverage of the calibrated bounds on campaigns the model never saw
# (docs/planner.md, "Coverage"): two held-out campaigns of run.sh's 20 pairs
# (seeds 5 and 6, 2,000 experiments x 5 runs) and a second long set (seed 4,
# 400 experiments, as run.sh's), scored with the model scripts/run.sh trained.
# Prints the coverage tables and writes RUNDIR/heldout/{h5,h6,long4}.json
# (eval --json-out), which scripts/results.sh turns into docs/planner.md's table.
# Usage: scripts/coverage_heldout.sh [RUNDIR]   (default: out/; scripts/run.sh calls it)
set -eu
cd "$(dirname "$0")/.."
run=${1:-out}
ps=build/pairsight
[ -f "$run/model.psm" ] || { echo "coverage_heldout: no $run/model.psm: run scripts/run.sh first" >&2; exit 1; }
P=$(sed -n 's/^P="\$P,\(.*\)"$/\1/p; s/^P="\([^$].*\)"$/\1/p' scripts/run.sh | paste -sd, -)
tmp=$run/heldout
mkdir -p "$tmp"
for seed in 5 6; do
    $ps simulate --gpu a100 --pairs "$P" --experiments 2000 --runs 5 --seed $seed --out "$tmp/h$seed" -q
    echo "== held-out seed $seed"
    $ps eval --model "$run/model.psm" --ops "$run/ops.csv" --train "$run/coexec.csv" \
        --coexec "$tmp/h$seed/coexec.csv" --experiments accuracy --json-out "$tmp/h$seed.json" | sed -n '/^Calibrated upper bounds/,/^$/p'
done
$ps simulate --gpu a100 --pairs "$P" --min-len 24 --max-len 96 --splits 8/46,19/35,30/24,41/13 \
    --experiments 400 --runs 1 --seed 4 --out "$tmp/long4" -q
echo "== long seed 4"
$ps eval --model "$run/model.psm" --ops "$run/ops.csv" --coexec "$run/coexec.csv" \
    --long "$tmp/long4/coexec.csv" --long-ops "$tmp/long4/ops.csv" --experiments long \
    --json-out "$tmp/long4.json" | sed -n '/^Calibrated upper bounds/,/^$/p'
