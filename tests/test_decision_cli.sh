#!/bin/sh
# predict --coverage, plan and replay as a user drives them, on a small
# simulated campaign. Usage: sh tests/test_decision_cli.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_decision_cli.sh PAIRSIGHT}
. tests/clitest.sh

expect 0 "$CLI" simulate --gpu a100 --models resnet50,bert-base --experiments 400 --runs 2 --threads 1 --seed 5 \
    --out "$T/c" -q
expect 0 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/m.psm" \
    --threads 1 --depths 4 --etas 0.3 --rounds 40 -q --json
has "$T/out" '"n_calib":80'

# predict --coverage: two more columns, each bound above its point.
awk -F, 'BEGIN { OFS = "," } NR <= 41 { print $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }' \
    "$T/c/coexec.csv" >"$T/q.csv"
expect 0 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/q.csv" --coverage 0.9 --out "$T/p.csv" -q
head -1 "$T/p.csv" | grep -q ',hp_delta_pred,lp_delta_pred,hp_ns_upper,lp_ns_upper$' ||
    fail "bound header: $(head -1 "$T/p.csv")"
awk -F, 'NR > 1 && !($16 > $12 && $17 > $13) { bad++ } END { exit bad > 0 }' "$T/p.csv" ||
    fail "a bound is not above its point"
expect 2 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/q.csv" --coverage 1.2
has "$T/err" "--coverage"

# plan: a JSON plan within its budget; resnet50 has 175 operators, 11 segments.
expect 0 "$CLI" plan --model "$T/m.psm" --ops "$T/c/ops.csv" --hp resnet50:8 --lp bert-base:8 --slo-factor 1.3 \
    --out "$T/plan.json" -q
has "$T/plan.json" '"schema":"pairsight.plan.v1"'
has "$T/plan.json" '"lp_model":"bert-base"'
/usr/bin/python3 - "$T/plan.json" <<'EOF' || fail "plan over budget or malformed"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["feasible"] and p["planned_ns"] <= p["budget_ns"]
assert abs(sum(s["step_ns"] for s in p["segments"]) - p["planned_ns"]) < 1e-3 * p["planned_ns"]
assert sum(s["hp_len"] for s in p["segments"]) == 175
# The split in SMs (issue 39): green-context counts per step, one MPS static partition.
sp = p["sm_split"]
assert sp["total_tpcs"] > 0 and sp["total_sms"] == sp["total_tpcs"] * sp["sms_per_tpc"], sp
for s in p["segments"]:
    assert s["hp_sms"] == s["hp_tpcs"] * sp["sms_per_tpc"] and s["lp_sms"] == s["lp_tpcs"] * sp["sms_per_tpc"], s
co = [s for s in p["segments"] if s["lp_len"] > 0]
m = sp["mps_static_partition"]
if not co:
    assert m is None, m
else:
    assert m["client_env"] == "CUDA_MPS_SM_PARTITION" and m["hp_sms"] + m["lp_sms"] == sp["total_sms"], m
    work = {}
    for s in co:
        work[s["hp_sms"]] = work.get(s["hp_sms"], 0) + s["lp_work_ns"]
    assert work[m["hp_sms"]] == max(work.values()), (m, work)
    assert abs(m["lp_work_share"] - work[m["hp_sms"]] / sum(work.values())) < 1e-9, m
EOF
expect 2 "$CLI" plan --model "$T/m.psm" --ops "$T/c/ops.csv" --hp resnet50:8 --lp bert-base:8
has "$T/err" "give one of --slo-ns and --slo-factor"
expect 2 "$CLI" plan --model "$T/m.psm" --ops "$T/c/ops.csv" --hp resnet50 --lp bert-base:8 --slo-ns 1e6
has "$T/err" "--hp"
expect 1 "$CLI" plan --model "$T/m.psm" --ops "$T/c/ops.csv" --hp vgg16:8 --lp bert-base:8 --slo-ns 1e6
has "$T/err" "vgg16"

# replay: the same latencies twice for a seed (the table's planning times
# are timings); JSON with every policy.
R="--model $T/m.psm --ops $T/c/ops.csv --coexec $T/c/coexec.csv --hp resnet50:8 --lp bert-base:8 --requests 40 --warmup 20"
# shellcheck disable=SC2086
expect 0 "$CLI" replay $R --seed 9 -q --latencies "$T/l1.csv"
has "$T/out" "pairsight_bound"
# shellcheck disable=SC2086
expect 0 "$CLI" replay $R --seed 9 -q --latencies "$T/l2.csv"
cmp -s "$T/l1.csv" "$T/l2.csv" || fail "replay latencies differ for one seed"
# --latencies is written whole or not at all: no temporary file left beside
# it, and a folder that is missing is an error naming the option.
ls "$T" | grep -q 'l1.csv.' && fail "replay left a temporary file: $(ls "$T")"
# shellcheck disable=SC2086
expect 1 "$CLI" replay $R --seed 9 -q --latencies "$T/nodir/l.csv"
has "$T/err" "latencies"
# shellcheck disable=SC2086
expect 0 "$CLI" replay $R --seed 9 -q --json --latencies "$T/lat.csv"
for p in dedicated static orion intensity pairsight pairsight_bound oracle; do
    has "$T/out" "\"$p\":{\"slo_attainment\""
done
has "$T/out" '"schema":"pairsight.replay.v1"'
has "$T/out" '"stretch"'
# The ceiling's fields (docs/planner.md, "The ceiling"): LP throughput split
# into its idle and co-located parts, the ceiling over orion, the rate
# needed; the stretch tuned (null) or fixed ("none": no cap).
has "$T/out" '"lp_idle":'
has "$T/out" '"lp_colo":'
has "$T/out" '"lp_ceiling":'
has "$T/out" '"lp_rate_needed":'
has "$T/out" '"goal_ratio":1.5'
has "$T/out" '"time_value":1'
has "$T/out" '"stretch_fixed":null'
# shellcheck disable=SC2086
expect 0 "$CLI" replay $R --seed 9 -q --json --stretch 1e9 --time-value 0 --policies pairsight,pairsight_bound
has "$T/out" '"stretch_fixed":"none"'
has "$T/out" '"time_value":0'
has "$T/out" '"pairsight":{"slo_attainment"'
has "$T/out" '"lp_ceiling":null'
[ "$(wc -l <"$T/lat.csv")" -eq $((7 * 40 + 1)) ] || fail "latencies: $(wc -l <"$T/lat.csv") lines"
# orion's threshold fixed (--orion-lp-tpcs, docs/planner.md "Orion's own
# setting"): the LP side gets those TPCs, reported as such; a split not
# profiled is refused with the reason.
expect 0 "$CLI" replay --ops "$T/c/ops.csv" --hp resnet50:8 --lp bert-base:8 --policies dedicated,orion \
    --orion-lp-tpcs 5 --requests 50 --warmup 10 -q --json
has "$T/out" '"orion_lp_tpcs":5'
expect 1 "$CLI" replay --ops "$T/c/ops.csv" --hp resnet50:8 --lp bert-base:8 --policies dedicated,orion \
    --orion-lp-tpcs 6 --requests 50 --warmup 10 -q
has "$T/err" "orion LP TPCs 6: no split of 54 TPCs with LP 6 is profiled for both resnet50 and bert-base"
expect 2 "$CLI" replay --ops "$T/c/ops.csv" --hp resnet50:8 --lp bert-base:8 --policies orion,nope
has "$T/err" "--policies"
expect 2 "$CLI" replay --ops "$T/c/ops.csv" --hp resnet50:8 --lp bert-base:8
has "$T/err" "need --model"
expect 2 "$CLI" replay --ops "$T/c/ops.csv" --hp resnet50:8 --lp bert-base:8 --policies dedicated --load 1
has "$T/err" "--load"

# calibrate: composed-segment bounds from a long campaign; the model file
# changes, predict --coverage still works on long queries; errors.
expect 0 "$CLI" simulate --gpu a100 --models resnet50,bert-base --min-len 20 --max-len 40 --experiments 60 \
    --runs 1 --threads 1 --seed 6 --out "$T/long" -q
expect 0 "$CLI" calibrate --model "$T/m.psm" --ops "$T/long/ops.csv" --coexec "$T/long/coexec.csv" --out "$T/mc.psm" -q
cmp -s "$T/m.psm" "$T/mc.psm" && fail "calibrate wrote the same model"
printf 'gpu,hp_model,hp_batch,hp_start,hp_len,lp_model,lp_batch,lp_start,lp_len,hp_tpcs,lp_tpcs\n' >"$T/lq.csv"
printf 'A100-SXM4-40GB,resnet50,8,0,40,bert-base,8,0,40,27,27\n' >>"$T/lq.csv"
expect 0 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/lq.csv" --coverage 0.9 --out "$T/l1.csv" -q
expect 0 "$CLI" predict --model "$T/mc.psm" --ops "$T/c/ops.csv" --queries "$T/lq.csv" --coverage 0.9 --out "$T/l2.csv" -q
cmp -s "$T/l1.csv" "$T/l2.csv" && fail "the composed calibration left a long bound unchanged"
expect 2 "$CLI" calibrate --model "$T/m.psm" --ops "$T/long/ops.csv" --coexec "$T/long/coexec.csv" --out "$T/m.psm"
expect 1 "$CLI" calibrate --model "$T/m.psm" --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/mx.psm"
has "$T/err" "longer than the window"
finish test_decision_cli
