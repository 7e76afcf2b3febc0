#!/bin/sh
# pairsight colocate's issue-17 commands as a user drives them: sparse tables
# (only exclusive_tput), auto, per-k output, --unseen-pairs, predict --as time,
# the GPU warning, --transfer, place and eval --place.
CLI=${1:?usage: test_colocate_place_cli.sh PAIRSIGHT}
F=tests/data/colocate
. tests/clitest.sh
check() { what=$1; shift; if "$@"; then echo "[ ok ] $what"; else fail "$what"; fi; }
expect_rc() { want=$1; shift; "$@" >/dev/null 2>"$T/err"; [ $? = "$want" ] || { cat "$T/err" >&2; return 1; }; }
SW="--workloads $F/sparse_workloads.csv"
SC="--colocations $F/sparse_colocations.csv"
check "eval on a sparse table: rules dropped, auto and per-k reported" sh -c "'$CLI' colocate eval $SW $SC \
    --seeds 2 --predictors kace_lr,ratio,lowrank,auto --json -q > '$T/e.json' &&
    grep -q '\"dropped\":\[\"memcap\",\"sm\",\"mem\",\"best_rule\",\"xu_rf\"\]' '$T/e.json' &&
    grep -q '\"auto\":{\"of\":\"chosen\"' '$T/e.json' && grep -q '\"per_k\":{\"2\":{\"targets\"' '$T/e.json' &&
    grep -q '\"4\":{\"targets\"' '$T/e.json' && grep -q '\"auto_chosen\":{\"' '$T/e.json' &&
    ! grep -q '\"memcap\":' '$T/e.json'"
check "eval text shows 2-/3-/4-way columns and auto's choices" sh -c "'$CLI' colocate eval $SW $SC --seeds 1 \
    --predictors ratio,lowrank,auto -q | grep -q '2-way.*3-way.*4-way' &&
    '$CLI' colocate eval $SW $SC --seeds 1 --predictors ratio,lowrank,auto -q | grep -q '^auto chose: '"
check "eval --unseen-pairs reports time MAPE" sh -c "'$CLI' colocate eval $SW $SC --unseen-pairs --seeds 1 \
    --predictors ratio,lowrank --json -q | grep -q '\"mode\":\"unseen_pairs\".*\"lowrank\":{[^}]*\"time_mape\":[0-9]'"
check "train --kind auto says what it chose" sh -c "'$CLI' colocate train $SW $SC --kind auto --out '$T/a.psc' 2>&1 |
    grep -q 'auto chose '"
check "... and the model file records it and the GPU" sh -c "grep -q '^auto 1' '$T/a.psc' && grep -q '^gpu SIMGPU$' '$T/a.psc'"
check "eval reports auto's rule, its mean weights and every rule's figure" sh -c "'$CLI' colocate eval \
    $SW $SC --seeds 1 --predictors ratio,lowrank,auto --json -q > '$T/r.json' &&
    grep -q '\"auto_rule\":\"within\"' '$T/r.json' && grep -q '\"auto_weights\":{\"' '$T/r.json' &&
    grep -q '\"auto_rules\":{\"blend\":{\"mean\":0\.[0-9]*,\"per_k\":{\"2\":' '$T/r.json' &&
    grep -q '\"pick\":{\"mean\":0\.[0-9]*,\"per_k\":{\"2\":[^}]*},\"weights\":{\"' '$T/r.json' &&
    grep -q '\"within\":{\"mean\":0\.[0-9]*,' '$T/r.json' &&
    '$CLI' colocate eval $SW $SC --seeds 1 --predictors ratio,lowrank,auto --auto-rule blend --json -q |
    grep -q '\"auto_rule\":\"blend\"'"
check "train --kind auto saves the blend: weights, then each blended model" sh -c "'$CLI' colocate train $SW $SC \
    --kind auto --out '$T/b.psc' 2>&1 | grep -q 'auto chose the blend [a-z_]* 0\.[0-9]*' &&
    grep -q '^section blend ' '$T/b.psc' && grep -q '^weight 0\.[0-9e-]* lowrank$' '$T/b.psc' &&
    [ \$(grep -c '^section model ' '$T/b.psc') -ge 2 ] &&
    '$CLI' colocate predict --model '$T/b.psc' $SW $SC --as time --out '$T/bt.csv' &&
    awk -F, 'NR>1 && \$NF+0 > 0 {n++} END {exit !(n > 100)}' '$T/bt.csv'"
check "train --auto-rule pick saves one kind" sh -c "'$CLI' colocate train $SW $SC --kind auto --auto-rule pick \
    --out '$T/p.psc' 2>&1 | grep -q 'auto chose [a-z_]* (cross' && ! grep -q '^section blend ' '$T/p.psc' &&
    grep -q '^auto 1' '$T/p.psc'"
check "train --auto-rule blend saves a blend" sh -c "'$CLI' colocate train $SW $SC --kind auto --auto-rule blend \
    --out '$T/w.psc' 2>&1 | grep -q 'auto chose the blend [a-z_]* 0\.[0-9]*' && grep -q '^section blend ' '$T/w.psc'"
check "--auto-rule other is refused" expect_rc 2 "$CLI" colocate train $SW $SC --kind auto --auto-rule best \
    --out "$T/x.psc"
check "colocate_table.sh: one column per k, auto under both rules and minus the best" sh -c "scripts/colocate_table.sh \
    --pairsight '$CLI' --out '$T/tab' --tables fixture3,sim-sparse --seeds 1 --predictors ratio,lowrank,auto \
    > '$T/tab.md' 2>/dev/null && grep -q '^| policy | fixture3 | sim-sparse 2 | sim-sparse 3 | sim-sparse 4 |$' '$T/tab.md' &&
    grep -q '^| \*\*auto (within)\*\* | \*\*[01]\.[0-9]*\*\* |' '$T/tab.md' && grep -q '^| auto (pick) - best | [+-]0' '$T/tab.md' &&
    grep -q '^| auto (blend) - best | [+-]0' '$T/tab.md' &&
    grep -q '^\* sim-sparse (1 runs): blend weights [a-z].*; within weights [a-z]' '$T/tab.md' &&
    grep -q '^auto (within) minus the best predictor: worst [+-]0\.[0-9]*; within 0.01 on [0-4] of 4 columns$' '$T/tab.md' &&
    [ -s '$T/tab/times.txt' ]"
printf '%s\n' '{"runs":2,"auto_rule":"blend","policies":{"random":0.5,"kace_lr":0.9,"lowrank":0.95,' \
    '"auto":0.94},"per_k":{"2":{"policies":{}}},"auto_other":{"rule":"pick","mean":0.96},' \
    '"auto_weights":{"lowrank":0.7,"kace_lr":0.3},"auto_chosen":{"lowrank":2}}' > "$T/toy.json"
check "colocate_table.py: auto minus the best predictor, per rule" sh -c "/usr/bin/python3 scripts/colocate_table.py \
    '$T/toy.json' > '$T/toy.md' && grep -q '^| auto (blend) - best | -0.010 |$' '$T/toy.md' &&
    grep -q '^| auto (pick) - best | +0.010 |$' '$T/toy.md' &&
    grep -q '^auto (blend) minus the best predictor: worst -0.010; within 0.01 on 1 of 1 columns$' '$T/toy.md' &&
    grep -q '^\* toy (2 runs): blend weights lowrank 0.70, kace_lr 0.30; pick chose lowrank 2$' '$T/toy.md'"
check "train lowrank" "$CLI" colocate train $SW $SC --kind lowrank --out "$T/lr.psc"
check "predict --as time adds iteration time and slowdown" sh -c "'$CLI' colocate predict --model '$T/lr.psc' $SW \
    $SC --as time --out '$T/t.csv' && head -1 '$T/t.csv' | grep -q ',tput_pred,batch,iter_time_s_pred,alone_iter_time_s,slowdown_pred$' &&
    awk -F, 'NR==2 && \$4==\"res_batch8-train\" && \$8==8 {ok=1} END {exit !ok}' '$T/t.csv'"
# time = batch / predicted tput; slowdown = time / alone time
check "... time and slowdown agree with the throughput" sh -c "awk -F, 'function rel(a, b) { return (a > b ? a - b : b - a) / b }
    NR > 1 { if (rel(\$9, \$8 / \$7) > 1e-6 || rel(\$11, \$9 / \$10) > 1e-6 || \$11 <= 0) bad = 1; n++ }
    END { exit bad || n < 100 }' '$T/t.csv'"
check "--as time with a sum model: 1" expect_rc 1 sh -c "'$CLI' colocate train $SW $SC --kind kace_lr --out '$T/k.psc' &&
    '$CLI' colocate predict --model '$T/k.psc' $SW $SC --as time"
check "--as bogus: 2" expect_rc 2 "$CLI" colocate predict --model "$T/lr.psc" $SW $SC --as bogus
sed 's/^SIMGPU,/OTHERGPU,/' $F/sparse_workloads.csv > "$T/w2.csv"
sed 's/,SIMGPU,/,OTHERGPU,/' $F/sparse_colocations.csv > "$T/c2.csv"
check "predict on another GPU warns" sh -c "'$CLI' colocate predict --model '$T/lr.psc' --workloads '$T/w2.csv' \
    --colocations '$T/c2.csv' 2>&1 >/dev/null | grep -q 'warning: model trained on GPU SIMGPU, predicting for OTHERGPU'"
check "... and not on its own" sh -c "! '$CLI' colocate predict --model '$T/lr.psc' $SW $SC 2>&1 >/dev/null | grep -q warning"
(cat $F/sparse_workloads.csv; tail -n +2 "$T/w2.csv") > "$T/w12.csv"
check "eval --transfer trains on one GPU, scores another" sh -c "'$CLI' colocate eval --workloads '$T/w12.csv' $SC \
    --transfer '$T/c2.csv' --seeds 1 --predictors ratio,lowrank --json -q | grep -q '\"mode\":\"transfer\"'"
check "place --json puts every job, K per GPU at most" sh -c "'$CLI' colocate place --model '$T/lr.psc' $SW \
    --jobs res_batch8-train*2,lm_batch8-train,rec_batch16-train,tfm_batch32-train --gpus 3 --json > '$T/p.json' &&
    grep -q '\"exact\":true' '$T/p.json' && grep -q '\"waiting\":\[\]' '$T/p.json' &&
    [ \$(grep -o '\"job\":' '$T/p.json' | wc -l) = 5 ]"
check "place on two GPU types" sh -c "'$CLI' colocate place --model '$T/lr.psc' --workloads '$T/w12.csv' \
    --jobs res_batch8-train,lm_batch8-train,rec_batch16-train --gpus 1:SIMGPU,1:OTHERGPU --max-per-gpu 2 --json |
    grep -q '\"type\":\"OTHERGPU\"'"
check "place with more jobs than room: some wait" sh -c "'$CLI' colocate place --model '$T/lr.psc' $SW \
    --jobs res_batch8-train*5 --gpus 2 --json | grep -q '\"waiting\":\[\"res_batch8-train\"\]'"
check "place with an unknown job: 1" expect_rc 1 "$CLI" colocate place --model "$T/lr.psc" $SW --jobs nosuch --gpus 1
check "place --gpus 0: 2" expect_rc 2 "$CLI" colocate place --model "$T/lr.psc" $SW --jobs res_batch8-train --gpus 0
check "place without --jobs: 2" expect_rc 2 "$CLI" colocate place --model "$T/lr.psc" $SW --gpus 1
check "eval --place scores placements" sh -c "'$CLI' colocate eval $SW $SC --place --cases 4x2,8x4 --seeds 2 \
    --predictors lowrank --json -q | grep -q '\"cases\":\[{\"jobs\":4,\"gpus\":2,\"mixes\":2,\"exact\":2,\"ratio\":{\"oracle\":1'"
check "eval --cases 4y2: 2" expect_rc 2 "$CLI" colocate eval $SW $SC --place --cases 4y2
check "--unseen with --transfer: 2" expect_rc 2 "$CLI" colocate eval $SW $SC --unseen --transfer "$T/c2.csv"
finish test_colocate_place_cli
