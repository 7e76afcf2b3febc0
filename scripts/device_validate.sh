#!/bin/sh
# Device validation of the collector and of the predictors, for one H100 or
# H200 (or any NVIDIA GPU with green contexts), in one command that writes
# everything under one folder:
#
#   1. build with PS_CUDA (build-cuda/), `collect info`
#   2. profile MobileNetV2 (memory-bound) and BERT-base (compute-bound) at
#      batch 8 on 5 TPC counts that form 5 SM splits, with their counters
#   3. 100 co-execution experiments x 10 runs over those 5 splits, and the
#      fixed cost of a co-execution (empty segments) on each split
#   4. export ops.csv and coexec.csv and `check` them
#   5. score on these measurements (a) the twin's predictions for the same
#      segment pairs and splits (`collect twin --gpu GPU`) and (b) a
#      PairSight model trained on a simulated campaign of GPU (the measured
#      GPU where the catalog knows it, else the H200); print the
#      table of measured vs predicted slowdown (MAPE per side, correlation)
#      and the measured fixed co-execution cost.
#
# usage: scripts/device_validate.sh [--backend cuda|fake] [--cli PATH] [--no-build]
#                                   [--out DIR] [--limit SECONDS] [--quick]
#   --backend NAME  cuda, or fake to run every step without a GPU (default cuda)
#   --cli PATH      a pairsight binary to use (implies --no-build)
#   --no-build      do not configure and build build-cuda/
#   --out DIR       where everything goes (default build-cuda/validate)
#   --limit N       fail when the whole run, build included, takes longer (default 540)
#   --quick         a small simulated campaign and one training setting (CI)
set -eu

NAME=device_validate
OUT=build-cuda/validate
LIMIT=540
QUICK=0
. "$(dirname "$0")/device_lib.sh"
device_options "$@"
device_clock
device_build quiet

mkdir -p "$OUT"
DB="$OUT/campaign.db"
rm -f "$DB" "$DB-wal" "$DB-shm"
B="--backend $BACKEND --db $DB -q"

step "device"
"$CLI" collect info --backend "$BACKEND" | tee "$OUT/info.txt"
"$CLI" collect info --backend "$BACKEND" --json > "$OUT/info.json"
# Five TPC counts forming five splits x/(S-x) with S as large as the GPU
# allows: x near S/8, S/4, S/2, 3S/4 and 7S/8, all of them valid counts.
TPCS=$(sed -n 's/.*"tpc_count": *\([0-9]*\).*"valid_tpcs": *\[\([0-9, ]*\)\].*/\1 \2/p' "$OUT/info.json" | tr ',' ' ' |
    awk '{ T = $1; for (i = 2; i <= NF; i++) if ($i < T) ok[$i] = 1
           for (S = T; S >= 8; S--) {
               if (S % 2 || !(S / 2 in ok)) continue
               best1 = best2 = 0
               for (v in ok) { v += 0; if (v >= S / 2 || !((S - v) in ok)) continue
                   if (!best1 || (v - S / 8) ^ 2 < (best1 - S / 8) ^ 2) best1 = v
                   if (!best2 || (v - S / 4) ^ 2 < (best2 - S / 4) ^ 2) best2 = v }
               if (best1 && best2 && best1 != best2) {
                   if (best1 > best2) { t = best1; best1 = best2; best2 = t }
                   print best1 "," best2 "," S / 2 "," S - best2 "," S - best1; exit } } }')
[ -n "$TPCS" ] || { echo "device_validate: no five splits among the valid TPC counts" >&2; exit 1; }
SPLITS=$(echo "$TPCS" | awk -F, '{ for (i = 1; i <= 5; i++) printf("%s%d/%d", i > 1 ? "," : "", $i, $(6 - i)) }')
echo "TPC counts: $TPCS"
echo "splits: $SPLITS"

step "profile mobilenetv2 batch 8 (memory-bound)"
"$CLI" collect profile $B --model mobilenetv2 --batch 8 --tpcs "$TPCS"
step "profile bert-base batch 8 (compute-bound)"
"$CLI" collect profile $B --model bert-base --batch 8 --tpcs "$TPCS"
step "counters (CUPTI range profiler)"
for m in mobilenetv2 bert-base; do
    if ! "$CLI" collect counters $B --model $m --batch 8; then
        echo "device_validate: no counters for $m (see the message above); continuing without them"
    fi
done
step "100 co-executions x 10 runs, mobilenetv2 beside bert-base, 5 splits"
"$CLI" collect coexec $B --hp mobilenetv2:8 --lp bert-base:8 --tpcs "$TPCS" --experiments 100 --runs 10
step "fixed co-execution cost (empty segments)"
"$CLI" collect fixed-cost --backend "$BACKEND" --splits "$SPLITS" --runs 30 | tee "$OUT/fixed_cost.txt"
"$CLI" collect fixed-cost --backend "$BACKEND" --splits "$SPLITS" --runs 30 --json > "$OUT/fixed_cost.json"

step "export and check"
"$CLI" collect export --db "$DB" --ops "$OUT/ops.csv" --coexec "$OUT/coexec.csv" -q
"$CLI" check "$OUT/ops.csv" "$OUT/coexec.csv"
"$CLI" collect status --db "$DB" | tee "$OUT/status.txt"

# The predictors are for the simulator's model of the measured GPU where the
# catalog knows it (collect names it as the catalog does: H100-SXM, H200,
# ...), else of the H200; scoring reads the measured tables under that name
# (a fake or unknown GPU is relabelled in copies; the measured files stay
# as written).
GPU=$(sed -n 's/.*"gpu": *"\([^"]*\)".*/\1/p' "$OUT/info.json")
SIMGPU=H200
"$CLI" simulate --list | awk '/^  / { print $1 }' | grep -qxF "$GPU" && SIMGPU=$GPU
sim=$(echo "$SIMGPU" | tr 'A-Z' 'a-z')
if [ "$GPU" = "$SIMGPU" ]; then
    cp "$OUT/ops.csv" "$OUT/ops_sim.csv"
    cp "$OUT/coexec.csv" "$OUT/coexec_sim.csv"
else
    echo "scoring reads $GPU's measurements as $SIMGPU's"
    sed "s/^$GPU,/$SIMGPU,/" "$OUT/ops.csv" > "$OUT/ops_sim.csv"
    sed "s/,$GPU,/,$SIMGPU,/" "$OUT/coexec.csv" > "$OUT/coexec_sim.csv"
fi

step "(a) the twin's predictions (collect twin --gpu $sim)"
"$CLI" collect twin --queries "$OUT/coexec_sim.csv" --gpu "$sim" --out "$OUT/twin.csv"

if [ "$QUICK" = 1 ]; then
    SIM="--experiments 300"; TRAIN="--depths 6 --etas 0.3 --rounds 60"
else
    SIM="--experiments 2000"; TRAIN=""
fi
step "(b) PairSight trained on a simulated $SIMGPU campaign"
rm -rf "$OUT/sim"
"$CLI" simulate --gpu "$sim" $SIM --seed 18 --out "$OUT/sim" -q
# shellcheck disable=SC2086
"$CLI" train --ops "$OUT/sim/ops.csv" --coexec "$OUT/sim/coexec.csv" --out "$OUT/sim.psm" $TRAIN -q
cut -d, -f1-12 "$OUT/twin.csv" > "$OUT/queries.csv"
"$CLI" predict --model "$OUT/sim.psm" --ops "$OUT/ops_sim.csv" --queries "$OUT/queries.csv" \
    --out "$OUT/pairsight.csv" -q

step "measured vs predicted slowdown"
PRED="twin-$sim=$OUT/twin.csv,pairsight-sim-$sim=$OUT/pairsight.csv"
"$CLI" collect score --ops "$OUT/ops_sim.csv" --coexec "$OUT/coexec_sim.csv" --pred "$PRED" | tee "$OUT/table.txt"
"$CLI" collect score --ops "$OUT/ops_sim.csv" --coexec "$OUT/coexec_sim.csv" --pred "$PRED" --json > "$OUT/table.json"
echo
cat "$OUT/fixed_cost.txt"

device_finish "; everything is in $OUT"
