#!/bin/sh
# pairsight colocate eval --unseen-splits as a user drives it (issue 31): the
# 3-way fixture's 100 % co-locations as --colocations, its 33/33/34 ones as
# the share splits; the mode in the JSON and the text, seeds as runs, and
# the modes and flags it excludes.
CLI=${1:?usage: test_colocate_splits_cli.sh PAIRSIGHT}
F=tests/data/colocate
. tests/clitest.sh
head -1 $F/colocations3.csv >"$T/full.csv"
cp "$T/full.csv" "$T/splits.csv"
grep ',100,' $F/colocations3.csv >>"$T/full.csv"
grep -v ',100,' $F/colocations3.csv | tail -n +2 >>"$T/splits.csv"
W="--workloads $F/workloads.csv --scaling $F/workload_scaling.csv --colocations $T/full.csv"
S="--unseen-splits $T/splits.csv"
# shellcheck disable=SC2086
expect 0 "$CLI" colocate eval $W $S --seeds 2 --seed 5 --predictors ratio,mps --json -q
has "$T/out" '"mode":"unseen_splits"'
has "$T/out" '"runs":2'
grep -q '"mps":{"of":"workload","r2":[-0-9.e]*,"rmse":[0-9.e]*,"mape":[0-9]' "$T/out" || fail "no mps MAPE: $(cat "$T/out")"
# shellcheck disable=SC2086
expect 0 "$CLI" colocate eval $W $S --seeds 1 --predictors ratio -q
has "$T/out" "1 runs"
has "$T/out" "(held-out half of the share splits)"
# shellcheck disable=SC2086
expect 0 "$CLI" colocate eval --help
has "$T/out" "--unseen-splits FILE"
for mode in --unseen --unseen-pairs "--test $T/splits.csv" "--transfer $T/splits.csv"; do
    # shellcheck disable=SC2086
    expect 2 "$CLI" colocate eval $W $S $mode --seeds 1 --predictors ratio -q
    has "$T/err" "--unseen-splits, --test and --transfer exclude each other"
done
# shellcheck disable=SC2086
expect 2 "$CLI" colocate eval $W $S --place --seeds 1 --predictors ratio -q
has "$T/err" "--place scores random splits"
# shellcheck disable=SC2086
expect 2 "$CLI" colocate eval $W $S --test-alone --seeds 1 --predictors ratio -q
has "$T/err" "--test-alone needs --test FILE"
# A splits file with an unknown workload is named by FILE:LINE:COLUMN.
sed 's/,alpha_batch2-inf,/,nosuch_batch1-inf,/' "$T/splits.csv" >"$T/bad.csv"
# shellcheck disable=SC2086
expect 1 "$CLI" colocate eval $W --unseen-splits "$T/bad.csv" --seeds 1 --predictors ratio -q
has "$T/err" "$T/bad.csv:"
finish test_colocate_splits_cli
