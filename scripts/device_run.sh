#!/bin/sh
# The one prepared command of a GPU machine lent for minutes (issue 36): run
# from the tree with the device bundle beside it (scripts/device_bundle.sh),
# nothing built there, at most 9 minutes, at most 8 files under OUT, each
# written as soon as its step ends so that a run cut short still returns
# what it measured. The steps, in order:
#
#   1. `collect info` (info.json; the SMs each green context is granted)
#   2. smoke, failing fast: MobileNetV2 profiled at two TPC counts and one
#      co-execution beside itself; on failure the run stops here
#   3. device_validate.sh's campaign (MobileNetV2 beside BERT-base over five
#      splits, counters, the fixed cost, check, and the score table of the
#      twin and of a PairSight model trained on a simulated campaign of the
#      GPU against the measurements): campaign.tar.gz, table.txt
#   4. python -m pairsight.profile_tpcs for resnet50 and bert-base at five TPC
#      counts (green contexts): profile_tpcs.tar.gz
#
# Files under OUT (at most 8): log.txt (everything printed), info.json,
# smoke.tar.gz, campaign.tar.gz, table.txt, profile_tpcs.tar.gz,
# summary.txt (each step's status and seconds).
#
# usage: scripts/device_run.sh [--bundle DIR] [--backend cuda|fake] [--out DIR]
#                              [--smoke-only] [--quick] [--limit SECONDS] [--no-torch]
#   --bundle DIR   the device bundle (default device-bundle/)
#   --backend NAME cuda, or fake for a dry run without a GPU (default cuda)
#   --out DIR      where the files go (default $OUT, else device-out/)
#   --smoke-only   steps 1 and 2 only: the short first call
#   --quick        device_validate --quick (the dry run of the tests)
#   --limit N      seconds for the whole run (default 530); the steps get
#                  what is left, each under `timeout`
#   --no-torch     skip step 4
#
# Two calls on the machine (docs/collector.md, "On a GPU machine"): first
# `device-bundle/run sh scripts/device_run.sh --smoke-only` with a short
# timeout (~150 s: start-up failures cost little), then the full run with
# a timeout of 570 s.
set -u

BUNDLE=device-bundle
BACKEND=cuda
OUTDIR=${OUT:-device-out}
SMOKE_ONLY=0
QUICK=""
LIMIT=530
TORCH=1
while [ $# -gt 0 ]; do
    case "$1" in
    --bundle) BUNDLE=${2:?}; shift 2 ;;
    --backend) BACKEND=${2:?}; shift 2 ;;
    --out) OUTDIR=${2:?}; shift 2 ;;
    --smoke-only) SMOKE_ONLY=1; shift ;;
    --quick) QUICK=--quick; shift ;;
    --limit) LIMIT=${2:?}; shift 2 ;;
    --no-torch) TORCH=0; shift ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "device_run: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
case "$BUNDLE" in /*) ;; *) BUNDLE=$ROOT/$BUNDLE ;; esac
case "$OUTDIR" in /*) ;; *) OUTDIR=$ROOT/$OUTDIR ;; esac
[ -x "$BUNDLE/run" ] || { echo "device_run: no bundle at $BUNDLE (scripts/device_bundle.sh --out $BUNDLE)" >&2; exit 2; }
mkdir -p "$OUTDIR" || exit 1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/device_run.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
RUN=$BUNDLE/run
CLI=$BUNDLE/bin/pairsight
LOG=$OUTDIR/log.txt
SUMMARY=$OUTDIR/summary.txt
: > "$LOG"
: > "$SUMMARY"
start=$(date +%s)
left() { echo $((LIMIT - ($(date +%s) - start))); }
say() { echo "== $* ($(($(date +%s) - start)) s)" >> "$LOG"; }
# run_step NAME SECONDS CMD...: CMD under timeout, its output into the log;
# its status and time into the summary.
run_step() {
    name=$1 secs=$2
    shift 2
    [ "$secs" -gt 5 ] || { echo "$name skipped: no time left" >> "$SUMMARY"; return 124; }
    say "$name (at most $secs s)"
    t0=$(date +%s)
    timeout -k 5 "$secs" "$@" >> "$LOG" 2>&1
    rc=$?
    echo "$name exit $rc in $(($(date +%s) - t0)) s" >> "$SUMMARY"
    [ $rc -eq 0 ] || say "$name failed (exit $rc; 124: out of time)"
    return $rc
}
pack() { # NAME.tar.gz FOLDER: the folder's files, packed into OUT
    tar -C "$2" -czf "$OUTDIR/$1.tmp" . && mv "$OUTDIR/$1.tmp" "$OUTDIR/$1"
}
B="--backend $BACKEND"
{
    echo "device_run on $(uname -n), $(date -u +%Y-%m-%dT%H:%M:%SZ), backend $BACKEND, limit $LIMIT s"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
    head -n 200 "$BUNDLE/MANIFEST" 2>/dev/null | tail -n 1
} >> "$LOG" 2>&1

# 1. The device.
run_step info 60 "$RUN" collect info $B || { cat "$LOG"; exit 1; }
"$RUN" collect info $B --json > "$OUTDIR/info.json" 2>> "$LOG"
sed -n '/^== info/,$p' "$LOG" | tail -n +2
T=$(sed -n 's/.*"tpc_count": *\([0-9]*\).*/\1/p' "$OUTDIR/info.json")
VALID=$(sed -n 's/.*"valid_tpcs": *\[\([0-9, ]*\)\].*/\1/p' "$OUTDIR/info.json" | tr -d ' ')
# The valid counts nearest T/8, T/4, T/2, 3T/4 and T itself.
pick() {
    echo "$VALID" | tr ',' '\n' | awk -v T="$T" -v F="$1" 'BEGIN { best = -1 }
        { d = ($1 - T * F) ^ 2; if (best < 0 || d < bd) { best = $1; bd = d } } END { print best }'
}

# 2. Smoke: two TPC counts, one co-execution; stop at the first failure.
S1=$(pick 0.25)
S2=$(pick 0.5)
mkdir -p "$WORK/smoke"
export RUN B WORK S1 S2
# shellcheck disable=SC2016
SMOKE='D=$WORK/smoke
"$RUN" collect profile $B --db "$D/smoke.db" --model mobilenetv2 --batch 8 --tpcs "$S1,$S2" --runs 3 &&
"$RUN" collect coexec $B --db "$D/smoke.db" --hp mobilenetv2:8 --lp mobilenetv2:8 --tpcs "$S1,$S2" \
    --experiments 1 --runs 3 &&
"$RUN" collect export --db "$D/smoke.db" --ops "$D/ops.csv" --coexec "$D/coexec.csv" &&
"$RUN" check "$D/ops.csv" "$D/coexec.csv"'
echo "smoke: TPC counts $S1,$S2 of $T" >> "$LOG"
run_step smoke 120 sh -c "$SMOKE"
rc=$?
rm -f "$WORK/smoke/smoke.db"*
pack smoke.tar.gz "$WORK/smoke"
if [ $rc -ne 0 ]; then
    tail -n 30 "$LOG"
    echo "device_run: the smoke step failed: stopping (log.txt)" >&2
    exit 1
fi
tail -n 8 "$LOG"
[ "$SMOKE_ONLY" = 1 ] && { cat "$SUMMARY"; exit 0; }

# 3. device_validate's campaign, through the bundle; 60 s kept for step 4.
budget=$(($(left) - 60 * TORCH * 2))
run_step validate "$budget" "$RUN" sh scripts/device_validate.sh $B --cli "$CLI" --out "$WORK/validate" \
    --limit "$budget" $QUICK
vrc=$?
if [ -d "$WORK/validate" ]; then
    rm -f "$WORK/validate"/campaign.db* "$WORK/validate"/*.psm
    rm -rf "$WORK/validate/sim"
    [ -f "$WORK/validate/table.txt" ] && cp "$WORK/validate/table.txt" "$OUTDIR/table.txt"
    pack campaign.tar.gz "$WORK/validate"
fi
grep -A12 "^== measured vs predicted" "$LOG" | head -n 14

# 4. PyTorch at five TPC counts (green contexts), imported by the bundle's CLI.
if [ "$TORCH" = 1 ]; then
    mkdir -p "$WORK/tpcs"
    COUNTS="$(pick 0.125),$(pick 0.25),$(pick 0.5),$(pick 0.75),$T"
    export PYTHONPATH="$ROOT/python:$ROOT/examples/own_model${PYTHONPATH:+:$PYTHONPATH}"
    for m in "resnet50 torchvision.models:resnet50 3x224x224" "bert-base bert_nn:bert_base 128:int64"; do
        # shellcheck disable=SC2086
        set -- $m
        secs=$(($(left) / 2))
        [ "$1" = bert-base ] && secs=$(left)
        if [ "$BACKEND" = fake ]; then
            echo "profile_tpcs $1: skipped on the fake backend (it needs a GPU)" >> "$SUMMARY"
            continue
        fi
        run_step "profile_tpcs $1" "$secs" "$RUN" python3 -m pairsight.profile_tpcs "$2" --input "$3" --batch 8 \
            --tpcs "$COUNTS" --method green --name "$1" --out "$WORK/tpcs/$1"
    done
    pack profile_tpcs.tar.gz "$WORK/tpcs"
fi
echo "device_run: $(($(date +%s) - start)) s of $LIMIT" >> "$SUMMARY"
cat "$SUMMARY"
[ $vrc -eq 0 ]
