#!/bin/sh
# pairsight model info / model export / features: the exported boosters in
# Python's xgboost reproduce pairsight predict on 1,000 queries (1e-6
# relative), and the feature rows take each counter from the ops.csv row
# with the most TPCs that gives it. Usage: sh tests/test_export_cli.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_export_cli.sh PAIRSIGHT}
. tests/clitest.sh
PY=/usr/bin/python3

expect 0 "$CLI" simulate --gpu a100 --experiments 1000 --runs 1 --threads 1 --seed 9 --out "$T/c" -q
expect 0 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/m.psm" \
    --threads 1 --depths 6 --etas 0.3 --rounds 80 -q

expect 0 "$CLI" model info "$T/m.psm"
has "$T/out" "gpu:          A100-SXM4-40GB"
has "$T/out" "196 features"
# Every split, the calibration rows included (1000 rows: 700/100/100/100).
has "$T/out" "samples:      1000 (train 700, calibration 100, valid 100, test 100;"
# serve --check loads, binds and exits: it says so, never "listening on".
expect 0 "$CLI" serve --model "$T/m.psm" --ops "$T/c/ops.csv" --listen 127.0.0.1:0 --check
has "$T/err" "check passed: could listen on http://127.0.0.1:"
has "$T/err" "; not serving (--check)"
grep -q "listening on" "$T/err" && fail "serve --check says 'listening on': $(cat "$T/err")"
expect 0 "$CLI" model info "$T/m.psm" --json
has "$T/out" '"hp.op15.present"'
has "$T/out" '"schema":"pairsight.model_meta.v1"'
has "$T/out" '"prediction":"latency_ns = solo_ns * exp(margin)"'
expect 0 "$CLI" model export "$T/m.psm" --out "$T/x"
for f in hp.ubj lp.ubj meta.json; do [ -s "$T/x/$f" ] || fail "export wrote no $f"; done
cmp -s "$T/out" /dev/null && fail "export printed nothing"

# Usage and input errors.
expect 2 "$CLI" model
expect 2 "$CLI" model frobnicate "$T/m.psm"
has "$T/err" "pairsight: model: unknown subcommand 'frobnicate'"
expect 2 "$CLI" model export "$T/m.psm"
has "$T/err" "--out is required"
expect 2 "$CLI" model info "$T/m.psm" --out x
expect 1 "$CLI" model info "$T/none.psm"
has "$T/err" "none.psm"
expect 1 "$CLI" model export "$T/m.psm" --out "$T/nodir/x"
has "$T/err" "nodir"
expect 2 "$CLI" features --model "$T/m.psm" --ops "$T/c/ops.csv"
expect 2 "$CLI" features --model "$T/m.psm" --ops "$T/c/ops.csv" --queries
has "$T/err" "--queries needs a value"

# 1,000 one-window queries: features, predict, and XGBoost in Python.
expect 0 "$CLI" features --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/c/coexec.csv" --out "$T/f.csv"
expect 0 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/c/coexec.csv" --out "$T/p.csv" -q
[ "$(wc -l <"$T/f.csv")" -eq 1001 ] || fail "features wrote $(wc -l <"$T/f.csv") lines, expected 1001"
if [ -x "$PY" ]; then
    "$PY" tests/export_check.py "$T/x" "$T/f.csv" "$T/p.csv" >"$T/py" 2>&1; rc=$?
    cat "$T/py"
    [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || fail "xgboost does not reproduce predict: $(cat "$T/py")"
fi

# A query longer than the window is refused, naming its line.
printf 'hp_model,hp_batch,hp_start,hp_len,lp_model,lp_batch,lp_start,lp_len,hp_tpcs,lp_tpcs\n' >"$T/q.csv"
printf 'resnet50,8,0,20,bert-base,8,0,4,20,30\n' >>"$T/q.csv"
expect 1 "$CLI" features --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/q.csv"
has "$T/err" "q.csv:2: segments of 20 and 4 operators"

# Counters: the simulator gives every row its own stall counters. The row
# at 5 TPCs takes them from the row with the most TPCs (54 on the A100)...
printf 'hp_model,hp_batch,hp_start,hp_len,lp_model,lp_batch,lp_start,lp_len,hp_tpcs,lp_tpcs\n' >"$T/q.csv"
printf 'resnet50,8,0,1,bert-base,8,0,1,5,49\n' >>"$T/q.csv"
col() { awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i } NR == 2 { print $c }' "$1"; }
opcol() { awk -F, -v t="$2" -v name="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i }
    $2 == "resnet50" && $3 == 8 && $4 == 0 && $6 == t { printf "%.9g\n", $c }' "$1"; }
expect 0 "$CLI" features --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/q.csv" --out "$T/f1.csv"
got=$(col "$T/f1.csv" hp.op0.stall_long_scoreboard)
at54=$(opcol "$T/c/ops.csv" 54 stall_long_scoreboard)
at5=$(opcol "$T/c/ops.csv" 5 stall_long_scoreboard)
[ "$at54" != "$at5" ] || fail "the test needs counters that differ by TPCs ($at5, $at54)"
"$PY" -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-6 * abs(b))" \
    "$got" "$at54" || fail "stall_long_scoreboard at 5 TPCs is $got, the 54-TPC row has $at54 (5-TPC row $at5)"
dur=$(col "$T/f1.csv" hp.op0.duration_ns)
"$PY" -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-6 * abs(b))" \
    "$dur" "$(opcol "$T/c/ops.csv" 5 duration_ns)" || fail "duration_ns is not the one at 5 TPCs"
# ... and where that row lacks a counter, from the next row with the most TPCs that gives it.
awk -F, 'BEGIN { OFS = "," } NR == 1 { for (i = 1; i <= NF; i++) if ($i == "stall_long_scoreboard") c = i }
    NR > 1 && $2 == "resnet50" && $3 == 8 && $4 == 0 && $6 == 54 { $c = "" } { print }' "$T/c/ops.csv" >"$T/ops2.csv"
expect 0 "$CLI" features --model "$T/m.psm" --ops "$T/ops2.csv" --queries "$T/q.csv" --out "$T/f2.csv"
got=$(col "$T/f2.csv" hp.op0.stall_long_scoreboard)
at49=$(opcol "$T/c/ops.csv" 49 stall_long_scoreboard)
"$PY" -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-6 * abs(b))" \
    "$got" "$at49" || fail "with the 54-TPC value blank, stall_long_scoreboard is $got, not the 49-TPC $at49"
finish test_export_cli
