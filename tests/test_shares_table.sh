#!/bin/sh
# The table of docs/colocate.md ("Measured on KACE's split pairs") is the one
# docs/results/shares-kace-v100.json gives (scripts/shares_table.sh writes
# both), and the script refuses a table edited by hand.
CLI=${1:?usage: test_shares_table.sh PAIRSIGHT}
. "$(dirname "$0")/clitest.sh"
expect 0 scripts/shares_table.sh --check
has "$T/out" "matches"
cp docs/colocate.md "$T/c.md"
sed 's/^| mean | \([0-9.]*\)/| mean | 9.999/' docs/colocate.md >"$T/edited.md"
cmp -s "$T/edited.md" docs/colocate.md && fail "the edit changed nothing"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
expect 1 "$PY" scripts/shares_eval.py --check docs/results/shares-kace-v100.json "$T/edited.md"
has "$T/err" "differs"
finish test_shares_table
