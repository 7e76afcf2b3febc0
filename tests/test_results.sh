#!/bin/sh
# The published tables are the evaluation's JSON: scripts/results.sh --check
# passes on the committed tree and fails on a table with a figure typed over.
# Usage: sh tests/test_results.sh PAIRSIGHT
set -u
. tests/clitest.sh
expect 0 scripts/results.sh --check
# A copy of the README with one figure changed by hand is refused, by name.
sed 's/^| \*\*pairsight\*\* | \*\*[0-9.]*\*\*/| **pairsight** | **0.01**/' README.md >"$T/README.md"
cmp -s README.md "$T/README.md" && fail "the README has no Table I row to tamper with"
expect 1 /usr/bin/python3 scripts/results.py --check docs/results/eval.json "$T/README.md"
has "$T/err" "the tables of $T/README.md differ from docs/results/eval.json"
# So is a replay ratio or a co-location figure typed over.
sed 's/| [0-9.]*x | \([0-9]*%\) |/| 9.99x | \1 |/' README.md >"$T/README2.md"
cmp -s README.md "$T/README2.md" && fail "the README has no replay ratio to tamper with"
expect 1 /usr/bin/python3 scripts/results.py --check docs/results/eval.json "$T/README2.md"
sed 's/^| \*\*mps (ours)\*\* | \*\*[0-9.]*/| **mps (ours)** | **0.999/' README.md >"$T/README3.md"
cmp -s README.md "$T/README3.md" && fail "the README has no mps row to tamper with"
expect 1 /usr/bin/python3 scripts/results.py --check docs/results/eval.json "$T/README3.md"
# And a coverage figure of a held-out seed (docs/results/coverage.json).
sed 's/^| held-out seed 5 | 0.90 | \([0-9]*\) | [0-9.]*/| held-out seed 5 | 0.90 | \1 | 90.00/' docs/planner.md >"$T/planner.md"
cmp -s docs/planner.md "$T/planner.md" && fail "planner.md has no held-out coverage row to tamper with"
expect 1 /usr/bin/python3 scripts/results.py --check docs/results/eval.json "$T/planner.md"
# And the headline's gain over the dedicated GPU (issue 42 item 7).
sed 's/gives the LP task \*\*[0-9.x-]*\*\*/gives the LP task **9.99x**/' README.md >"$T/README4.md"
cmp -s README.md "$T/README4.md" && fail "the README has no headline against dedicated to tamper with"
expect 1 /usr/bin/python3 scripts/results.py --check docs/results/eval.json "$T/README4.md"
# A block without its end is an error, not a silent pass.
printf '<!-- results:table1 -->\nno end\n' >"$T/open.md"
expect 1 /usr/bin/python3 scripts/results.py --check docs/results/eval.json "$T/open.md"
has "$T/err" "unknown or unclosed block 'table1'"
finish test_results
