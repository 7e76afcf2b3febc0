#!/bin/sh
# colocate place under a time budget (issue 30 item 5): 64 jobs on 16 GPUs,
# K = 4, shares 100,50,25, return within the budget (plus the greedy pass
# and start-up) with every kind, say that the limit ended the search (text,
# JSON), and show progress on stderr; a small instance stays exact.
# Usage: sh tests/test_place_budget.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_place_budget.sh PAIRSIGHT}
case $CLI in /*) ;; *) CLI=$PWD/$CLI ;; esac
. tests/clitest.sh
bound=8
[ "${PS_SANITIZED:-0}" = 1 ] && bound=40
F=tests/data/colocate
WL="--workloads $F/workloads.csv --scaling $F/workload_scaling.csv"
jobs() { # $1 jobs, cycling over the six workloads
    n=$1 out= i=0
    while [ $i -lt "$n" ]; do
        for w in alpha_batch2-inf alpha_batch8-inf beta_batch4-train beta_batch16-train gamma_batch1-inf \
            gamma_batch4-inf; do
            [ $i -lt "$n" ] && out="$out${out:+,}$w" && i=$((i + 1))
        done
    done
    echo "$out"
}
J64=$(jobs 64)
for k in kace_lr kace_rf kace_mlp xu_rf ratio mps lowrank; do
    # shellcheck disable=SC2086
    expect 0 "$CLI" colocate train $WL --colocations $F/colocations3.csv --kind $k --trees 5 --epochs 2 \
        --rounds 8 --out "$T/$k.psc" -q
    start=$(date +%s)
    # shellcheck disable=SC2086
    expect 0 "$CLI" colocate place --model "$T/$k.psc" $WL --jobs "$J64" --gpus 16 --max-per-gpu 4 \
        --shares 100,50,25 --time-limit 1 --json -q
    took=$(($(date +%s) - start))
    # The first greedy placement always completes: up to a few seconds past
    # the limit here, about 5x that in the sanitized Debug build.
    [ $took -le "$bound" ] || fail "$k: 64 jobs on 16 GPUs took $took s with --time-limit 1 (bound $bound s)"
    has "$T/out" '"exact":false'
    grep -q '"stopped_by_time_limit":true' "$T/out" && has "$T/err" "the time limit (--time-limit 1 s) ended the search"
done
# Text output and progress (a line every 0.5 s here).
# shellcheck disable=SC2086
PAIRSIGHT_PROGRESS_SECONDS=0.5 expect 0 "$CLI" colocate place --model "$T/mps.psc" $WL --jobs "$J64" --gpus 16 \
    --max-per-gpu 4 --shares 100,50,25 --time-limit 2
has "$T/out" "heuristic, stopped by the time limit"
has "$T/err" "placement: "
# A small instance is solved exactly within the default budget.
# shellcheck disable=SC2086
expect 0 "$CLI" colocate place --model "$T/mps.psc" $WL --jobs "$(jobs 4)" --gpus 1 --max-per-gpu 4 \
    --shares 100,50,25 --json -q
has "$T/out" '"exact":true,"stopped_by_time_limit":false'
# shellcheck disable=SC2086
expect 0 "$CLI" colocate place --help
has "$T/out" "--time-limit S"
has "$T/out" "(default 5"
for bad in -1 0x5 " 2" inf; do
    # shellcheck disable=SC2086
    expect 2 "$CLI" colocate place --model "$T/mps.psc" $WL --jobs "$(jobs 4)" --gpus 1 --time-limit "$bad"
done
finish test_place_budget
