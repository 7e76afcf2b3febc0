#!/bin/sh
# pairsight colocate as a user drives it: help, eval on 3- and 4-way files,
# train -> predict -> select, and the exit codes of bad usage and bad input.
CLI=${1:?usage: test_colocate_cli.sh PAIRSIGHT}
F=tests/data/colocate
T=$(mktemp -d /tmp/ps_colocate.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
fail=0
check() { # description, command...
    what=$1; shift
    if "$@"; then echo "[ ok ] $what"; else echo "[FAIL] $what"; fail=1; fi
}
expect_rc() { # expected-rc, command...
    want=$1; shift
    "$@" >/dev/null 2>"$T/err"; got=$?
    [ "$got" = "$want" ] || { echo "rc $got, want $want: $*" >&2; cat "$T/err" >&2; return 1; }
}
W="--workloads $F/workloads.csv --scaling $F/workload_scaling.csv"

check "help lists every flag" sh -c "'$CLI' colocate --help | grep -q -- '--train-frac F' &&
    '$CLI' colocate --help | grep -q -- '--candidates LIST' && '$CLI' help colocate | grep -q 'default 20'"
for k in 3 4; do
    check "eval --json on a $k-way file" sh -c "'$CLI' colocate eval $W --colocations $F/colocations$k.csv \
        --train-frac 0.5 --seeds 2 --trees 5 --epochs 10 --rounds 30 --json -q > '$T/e$k.json' &&
        grep -q '\"policies\":{\"oracle\":1' '$T/e$k.json' && grep -q '\"kace_lr\":{\"of\":\"sum\",\"r2\"' '$T/e$k.json' &&
        grep -q '\"mps\":{\"of\":\"workload\"' '$T/e$k.json'"
    check "eval --unseen on a $k-way file" sh -c "'$CLI' colocate eval $W --colocations $F/colocations$k.csv \
        --unseen --seeds 1 --predictors kace_lr,ratio,mps --json | grep -q '\"mode\":\"unseen\"'"
done
check "eval --test leaves workload sets out" sh -c "'$CLI' colocate eval $W --colocations $F/colocations3.csv \
    --test $F/colocations4.csv --seeds 1 --predictors ratio,mps | grep -q 'held-out workload sets'"
# Data that measured only the target (slot 1): per-workload predictors are
# scored, no policy is, and nothing is read as a zero throughput.
awk -F, 'BEGIN{OFS=","} NR>1 && $3!=1 {$6=""} {print}' $F/colocations3.csv > "$T/only_target.csv"
check "eval with only the targets' throughput" sh -c "'$CLI' colocate eval $W --colocations '$T/only_target.csv' \
    --train-frac 0.5 --seeds 2 --predictors kace_lr,mps --json > '$T/o.json' &&
    grep -q '\"policies\":{}' '$T/o.json' && grep -q '\"mps\":{\"of\":\"workload\",\"r2\":0' '$T/o.json' &&
    grep -q '\"kace_lr\":{\"of\":\"sum\",\"r2\":null' '$T/o.json'"
check "train mps, a one-line summary" sh -c "'$CLI' colocate train $W --colocations $F/colocations3.csv \
    --out '$T/m.psc' 2>'$T/train.err' && grep -q '^colocate train: mps model on [0-9]* co-locations of [0-9]* workloads -> $T/m.psc\$' '$T/train.err'"
check "train -q: silent" sh -c "'$CLI' colocate train $W --colocations $F/colocations3.csv --out '$T/q.psc' -q 2>&1 | \
    wc -c | grep -qx 0"
check "train kace_lr" "$CLI" colocate train $W --colocations $F/colocations3.csv --kind kace_lr --out "$T/lr.psc"
check "predict writes tput_pred for 4-way rows" sh -c "'$CLI' colocate predict --model '$T/m.psc' $W \
    --colocations $F/colocations4.csv --out '$T/p.csv' && head -1 '$T/p.csv' | grep -q ',tput_pred$' &&
    [ \$(wc -l < '$T/p.csv') = \$(wc -l < $F/colocations4.csv) ]"
check "predict with a sum model writes tput_sum_pred" sh -c "'$CLI' colocate predict --model '$T/lr.psc' $W \
    --colocations $F/colocations3.csv | head -1 | grep -q ',tput_sum_pred$'"
check "select ranks candidates" sh -c "'$CLI' colocate select --model '$T/m.psc' $W --target alpha_batch2-inf \
    --candidates beta_batch4-train+gamma_batch1-inf,alpha_batch8-inf+gamma_batch4-inf --shares 40/30/30 --json |
    grep -q '\"ranking\":\\[{\"candidate\"'"
check "no subcommand: 2" expect_rc 2 "$CLI" colocate
check "unknown flag: 2" expect_rc 2 "$CLI" colocate eval --bogus 1
check "bad --train-frac: 2" expect_rc 2 "$CLI" colocate eval $W --colocations $F/colocations3.csv --train-frac 2
check "missing --colocations: 2" expect_rc 2 "$CLI" colocate eval $W
check "missing file: 1" expect_rc 1 "$CLI" colocate eval $W --colocations "$T/none.csv"
check "message names the command" sh -c "grep -q '^pairsight: colocate: ' '$T/err'"
printf 'colocation,gpu,slot,workload,share_pct,tput\nx,V100,1,nosuch,50,1.0\n' > "$T/bad_test.csv"
check "bad --test file: 1" expect_rc 1 "$CLI" colocate eval $W --colocations $F/colocations3.csv --test "$T/bad_test.csv"
check "message names the test file, line and column" grep -q "bad_test.csv:2:4: workload 'nosuch' on V100 has no row" "$T/err"
check "unknown target: 1" expect_rc 1 "$CLI" colocate select --model "$T/m.psc" $W --target nope --candidates alpha_batch2-inf
check "garbage model: 1" sh -c "echo junk > '$T/bad.psc'; '$CLI' colocate predict --model '$T/bad.psc' $W \
    --colocations $F/colocations3.csv >/dev/null 2>&1; [ \$? = 1 ]"
# Regressions from a first-time user's session: each exit code and message.
has_err() { grep -qF -- "$1" "$T/err" || { echo "stderr lacks '$1': $(cat "$T/err")" >&2; return 1; }; }
S="--model $T/m.psc $W --target alpha_batch2-inf"
check "empty --candidates: 2" expect_rc 2 "$CLI" colocate select $S --candidates ""
check "--candidates ',,': 2" expect_rc 2 "$CLI" colocate select $S --candidates ",,"
check "--candidates 'a+': 2" expect_rc 2 "$CLI" colocate select $S --candidates "alpha_batch8-inf+"
check "more shares than workloads: 2" expect_rc 2 "$CLI" colocate select $S --candidates alpha_batch8-inf --shares 50/30/20
check "... says how many" has_err "3 shares for at most 2 workloads"
check "unknown candidate: 1" expect_rc 1 "$CLI" colocate select $S --candidates alpha_batch8-inf,nosuch+alpha_batch8-inf
check "... names the candidate, not an internal row" has_err "select: candidate 'nosuch' (gpu "
check "target on another --gpu: 1" expect_rc 1 "$CLI" colocate select $S --candidates alpha_batch8-inf --gpu H200
check "... names target and gpu" has_err "target 'alpha_batch2-inf' on gpu H200 is not in"
check "--test-alone without --test: 2" expect_rc 2 "$CLI" colocate eval $W --colocations $F/colocations3.csv --test-alone
check "flag without its value: 2" expect_rc 2 "$CLI" colocate eval $W --colocations $F/colocations3.csv --seeds
check "... says it needs a value" has_err "pairsight: colocate: --seeds needs a value: an integer in 1..1000000 (see pairsight colocate --help)"
check "unknown flag: 2" expect_rc 2 "$CLI" colocate eval $W --colocations $F/colocations3.csv --bogus 1
check "... says it is unknown" has_err "pairsight: colocate: unknown option '--bogus' (see pairsight colocate --help)"
check "unknown flag last: 2" expect_rc 2 "$CLI" colocate eval $W --colocations $F/colocations3.csv --bogus
check "... says it is unknown" has_err "pairsight: colocate: unknown option '--bogus' (see pairsight colocate --help)"
check "train --out in a missing folder: 1" expect_rc 1 "$CLI" colocate train $W --colocations $F/colocations3.csv --out "$T/nodir/m.psc"
check "... names the user's path, not a temp file" has_err "colocate: train: $T/nodir/m.psc: cannot write: folder '$T/nodir' does not exist"
check "predict --out a folder: 1" expect_rc 1 "$CLI" colocate predict --model "$T/m.psc" $W --colocations $F/colocations3.csv --out "$T"
check "... says it is a folder" has_err "cannot write: it is a folder"
check "missing model: 1 with the reason" sh -c "'$CLI' colocate predict --model '$T/none.psc' $W --colocations $F/colocations3.csv 2>&1 >/dev/null | grep -q 'none.psc: cannot open: No such file'"
check "model is a folder: 1" expect_rc 1 "$CLI" colocate predict --model "$T" $W --colocations $F/colocations3.csv
check "... read error" has_err "read error: Is a directory"
: > "$T/empty.psc"
check "empty model: 1" expect_rc 1 "$CLI" colocate predict --model "$T/empty.psc" $W --colocations $F/colocations3.csv
check "... says empty" has_err "not a valid co-location model (empty file)"
printf 'PSMODEL\0\1\0\0' > "$T/seg.psm"
check "segment model given to colocate: 1" expect_rc 1 "$CLI" colocate predict --model "$T/seg.psm" $W --colocations $F/colocations3.csv
check "... says which model it is" has_err "a PairSight segment model from \`pairsight train\`"
cp $F/workloads.csv "$T/w.csv"
check "train --out its own --workloads: 2" expect_rc 2 "$CLI" colocate train --workloads "$T/w.csv" --colocations $F/colocations3.csv --out "$T/w.csv"
check "... left it as it was" cmp -s "$T/w.csv" $F/workloads.csv
check "predict --out its --model: 2" expect_rc 2 "$CLI" colocate predict --model "$T/m.psc" $W --colocations $F/colocations3.csv --out "$T/m.psc"
check "--seed past 2^64: 2" expect_rc 2 "$CLI" colocate train $W --colocations $F/colocations3.csv --out "$T/s.psc" --seed 99999999999999999999999
# Long lists were cut at 1024 bytes, naming a truncated workload.
many=$(printf 'alpha_batch8-inf+%.0s' $(seq 1 70))alpha_batch8-inf
check "70 co-runners: 2" expect_rc 2 "$CLI" colocate select $S --candidates "$many"
check "... says at most 63" has_err "a candidate with 71 co-runners, at most 63"
many=$(printf 'alpha_batch8-inf+%.0s' $(seq 1 60))nosuch
check "unknown 61st co-runner: 1" expect_rc 1 "$CLI" colocate select $S --candidates "$many"
check "... is named whole" has_err "candidate 'nosuch' (gpu"
many=$(printf 'alpha_batch8-inf+%.0s' $(seq 1 60))alpha_batch8-inf
check "two long candidates rank apart" sh -c "'$CLI' colocate select $S --candidates '$many,$many+beta_batch4-train' | grep -c '^[12] ' | grep -qx 2"
check "more than 64 shares: 2" expect_rc 2 "$CLI" colocate select $S --candidates alpha_batch8-inf --shares "$(printf '1/%.0s' $(seq 1 70))1"
ls "$T" | grep -q '\.tmp\.' && { echo "[FAIL] a temp file was left in $T"; fail=1; }
exit $fail
