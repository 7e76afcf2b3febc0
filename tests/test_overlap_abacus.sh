#!/bin/sh
# pairsight import abacus on the real artefact (a clone or a mirror of
# github Raphael-Hao/Abacus): PS_ABACUS_REPO (no default). Skips (77) where it is unset. Checks the counts of
# the profiles at the newest commit that holds them and at 4c33e2e, and that
# the predictor beats max(solo) on Abacus's own split and on leave-one-pair-out
# (short runs, pairsight only: under a minute).
PS=${1:-build/pairsight}
REPO=${PS_ABACUS_REPO:-}
[ -n "$REPO" ] || { echo "skip: PS_ABACUS_REPO is unset (a clone or mirror of github Raphael-Hao/Abacus)"; exit 77; }
[ -d "$REPO" ] || { echo "skip: PS_ABACUS_REPO=$REPO is not a folder"; exit 77; }
command -v git >/dev/null 2>&1 || { echo "skip: git not on PATH"; exit 77; }
git -C "$REPO" cat-file -e 4c33e2e 2>/dev/null || { echo "skip: $REPO lacks commit 4c33e2e"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$PS" import abacus "$REPO" --rev 4c33e2e --out "$T/o.csv" 2> "$T/err" || { cat "$T/err"; fail import; }
cat "$T/err"
# 2in7 37596 + 3in4 45156 + mig 2in4 6611 + mig 4in4 12494; A100/4in4 is a
# blob the mirror may lack (then named as skipped).
grep -q "101857 experiments" "$T/err" || grep -q "1[0-9][0-9][0-9][0-9][0-9] experiments" "$T/err" || fail "count"
"$PS" check "$T/o.csv" || fail check
n2=$(grep -c ",dedicated,mps,2,1," "$T/o.csv")
[ "$n2" -eq 37596 ] || fail "2-way dedicated experiments: $n2, want 37596"
nm=$(grep -c ",mig-2g.10gb,mps,2,1," "$T/o.csv")
[ "$nm" -eq 6611 ] || fail "mig 2g.10gb experiments: $nm, want 6611"
"$PS" overlap eval --overlap "$T/o.csv" --protocols random,leave-pair --rounds 100 --pairsight-only --threads 1 \
    --json > "$T/e.json" || fail eval
cat "$T/e.json"
/usr/bin/python3 -c "
import json; d = json.load(open('$T/e.json'))['protocols']
r, p = d['random'], d['leave-pair']
assert r['pairsight']['n'] == 7520, r
assert r['pairsight']['mape'] < r['max_solo']['mape'] < r['sum_solo']['mape'], r
assert p['pairsight']['n'] == 37596 and p['pairsight']['mape'] < p['max_solo']['mape'], p
assert p['pairsight']['worst_mape'] < p['max_solo']['worst_mape'], p
" || fail "random split or leave-pair"
echo ok
