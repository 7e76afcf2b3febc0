#!/bin/sh
# The twin's calibration observations (docs/simulator.md, "Calibration"):
# Fig. 1d from the observation test, Fig. 2's correlations, the DRAM-rate
# groups and the intensity-rule residual from two simulated campaigns of one
# seed. The no-co-runner ablation and Table II come from scripts/run.sh
# (out/eval.json). Seeds 11-12 chose the physics; report others.
# Usage: scripts/twin_observe.sh [SEED] [OUTDIR] [EXPERIMENTS]
#        (default seed 21, /tmp/twin_observe, 12000 single-operator experiments)
#        SIMFLAGS="--launch gated" passes flags to both simulate runs.
set -eu
cd "$(dirname "$0")/.."
seed=${1:-21}
out=${2:-/tmp/twin_observe}
n=${3:-12000}
ps=${PS:-build/pairsight}
[ -x "$ps" ] || { echo "twin_observe: build first (scripts/test.sh)" >&2; exit 1; }
mkdir -p "$out/op" "$out/seg"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
echo "== Fig. 1d (tests/test_simulate.c, fixed segments)" >&2
if [ -x build/test_simulate ]; then
    build/test_simulate 2>&1 | grep "resnet50 HP on" || true
fi
echo "== single-operator campaign, seed $seed" >&2
$ps simulate --gpu a100 --min-len 1 --max-len 1 --splits 11/43,27/27,43/11 \
    --experiments "$n" --runs 3 --seed "$seed" ${SIMFLAGS:-} --out "$out/op" -q
echo "== segment campaign, seed $((seed + 1000))" >&2
$ps simulate --gpu a100 --experiments 3000 --runs 3 --seed "$((seed + 1000))" ${SIMFLAGS:-} --out "$out/seg" -q
"$py" scripts/twin_observe.py "$out/op/ops.csv" "$out/op/coexec.csv" "$out/seg/ops.csv" "$out/seg/coexec.csv" \
    --json "$out/observe.json"
