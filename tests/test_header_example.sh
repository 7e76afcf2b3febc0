#!/bin/sh
# The worked example of include/pairsight.h, compiled by the build as the
# header shows it (build/header_example), runs on the files scripts/run.sh
# writes: out/ops.csv of an A100 campaign and out/model.psm trained on it.
# Usage: sh tests/test_header_example.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_header_example.sh PAIRSIGHT}
. tests/clitest.sh
EX=$(dirname "$CLI")/header_example
[ -x "$EX" ] || { echo "no $EX"; exit 1; }

mkdir "$T/w"
# Without the files the example fails with the library's message, exit 1.
(cd "$T/w" && "$EX") >"$T/out" 2>"$T/err" && fail "example ran without out/ops.csv"
has "$T/err" "out/ops.csv"

# A small campaign of run.sh's kind: the default SM splits hold 27/27.
expect 0 "$CLI" simulate --gpu a100 --pairs resnet50:8/bert-base:8 --experiments 120 --runs 2 --threads 1 \
    --seed 4 --out "$T/w/out" -q
expect 0 "$CLI" train --ops "$T/w/out/ops.csv" --coexec "$T/w/out/coexec.csv" --out "$T/w/out/model.psm" \
    --threads 1 --depths 3 --etas 0.3 --rounds 20 -q
(cd "$T/w" && "$EX") >"$T/out.txt" 2>"$T/err" || fail "example failed: $(cat "$T/err")"
grep -Eq '^HP [0-9]+ ns, LP [0-9]+ ns$' "$T/out.txt" || fail "example printed: $(cat "$T/out.txt")"
finish test_header_example
