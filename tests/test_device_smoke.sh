#!/bin/sh
# The non-GPU parts of scripts/device_smoke.sh: every step (TPC choice,
# profiles, counters, 20 co-executions, export, check, slowdown summary) on
# the fake backend with the already-built CLI.
P=${1:?usage: test_device_smoke.sh PAIRSIGHT}
T=$(mktemp -d /tmp/ps_test_smoke.XXXXXX)
trap 'rm -rf "$T"' EXIT
sh scripts/device_smoke.sh --backend fake --cli "$P" --out "$T" > "$T/log" 2>&1 || {
    cat "$T/log"; echo "FAIL: device_smoke.sh"; exit 1; }
grep -q "coexec.csv: coexec, 600 rows" "$T/log" || { cat "$T/log"; echo "FAIL: 20 x 30 rows"; exit 1; }
grep -q "^TPC counts: 8,15,28,41,54$" "$T/log" || { cat "$T/log"; echo "FAIL: TPC choice"; exit 1; }
grep -q "^mean HP slowdown over 600 runs: 1\." "$T/log" || { cat "$T/log"; echo "FAIL: summary"; exit 1; }
echo ok
