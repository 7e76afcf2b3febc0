#!/bin/sh
# scripts/device_validate.sh end to end on the fake backend with the built
# CLI: 5 TPC counts forming 5 splits, both profiles with counters, 100 x 10
# co-executions, the fixed cost, export and check, the twin's and a
# PairSight model's predictions scored in the table.
P=${1:?usage: test_device_validate.sh PAIRSIGHT}
T=$(mktemp -d /tmp/ps_test_validate.XXXXXX)
trap 'rm -rf "$T"' EXIT
sh scripts/device_validate.sh --backend fake --cli "$P" --out "$T" --quick > "$T/log" 2>&1 || {
    cat "$T/log"; echo "FAIL: device_validate.sh"; exit 1; }
fail() { cat "$T/log"; echo "FAIL: $1"; exit 1; }
grep -q "^TPC counts: 7,14,27,40,47$" "$T/log" || fail "TPC choice"
grep -q "^splits: 7/47,14/40,27/27,40/14,47/7$" "$T/log" || fail "splits"
grep -q "coexec.csv: coexec, 1000 rows, 2 (model, batch) groups" "$T/log" || fail "100 x 10 rows"
grep -q "1755 op rows, 351 counter rows, 1000 coexec rows" "$T/log" || fail "status"
grep -q "^100 experiments, 1000 runs; measured delta: HP 1\.[0-9]*, LP 1\.[0-9]*" "$T/log" || fail "table head"
for p in no-interference twin-h200 pairsight-sim-h200; do
    grep -Eq "^$p +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ " "$T/log" || fail "table row $p"
done
grep -Eq "^ *pairsight-sim-h200 .* 0\.[5-9][0-9]* +0\.[5-9][0-9]*$" "$T/log" || fail "pairsight correlation"
grep -Eq "^ 27/27 +6\.[0-9]+ +[56]\.[0-9]+$" "$T/fixed_cost.txt" || fail "fixed cost"
for f in ops.csv coexec.csv twin.csv pairsight.csv table.json fixed_cost.json info.json; do
    [ -s "$T/$f" ] || fail "no $f"
done
echo ok
