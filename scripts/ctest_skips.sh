#!/bin/sh
# Lists every test that ctest skipped, with the reason the test printed (the
# last line of its output, from ctest's LastTest.log), one line each:
#   skipped NAME: REASON
# ctest's summary indents the list of tests that did not run with a tab
# ("\t 12 - test_colocate (Skipped)"), or with spaces in older versions; both
# are read. Used by scripts/test.sh; tests/test_ctest_skips.sh checks it.
# Usage: scripts/ctest_skips.sh CTEST-OUTPUT LASTTEST.log
set -eu
[ $# -eq 2 ] || { echo "usage: $0 CTEST-OUTPUT LASTTEST.log" >&2; exit 2; }
sed -n 's/^[[:space:]]*[0-9][0-9]* - \([^[:space:]]*\) (Skipped)[[:space:]]*$/\1/p' "$1" | while read -r t; do
    reason=$(awk -v t="$t" '
        $0 ~ "^[0-9]+/[0-9]+ Test: " { cur = $3; next }
        cur == t && /^Output:/ { on = 1; next }
        cur == t && on && /^<end of output>/ { on = 0; next }
        cur == t && on && !/^-+$/ && NF { last = $0 }
        END { print last }' "$2")
    echo "skipped $t: ${reason:-no reason printed}"
done
