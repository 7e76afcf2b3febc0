#!/bin/sh
# scripts/ctest_skips.sh reads ctest's list of tests that did not run, which
# ctest indents with a tab (the pattern of scripts/test.sh before it missed
# that, so skipped tests went by silently), and gives each one's reason.
set -eu
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
D=tests/data/ctest
scripts/ctest_skips.sh "$D/summary.txt" "$D/LastTest.log" >"$T/out"
cat >"$T/want" <<'W'
skipped test_collect_device: skip: built without CUDA
skipped test_check_shared: skip: ../shared/data not present
skipped test_python: no reason printed
W
diff -u "$T/want" "$T/out"
# Older ctest indents with spaces: the same list.
sed 's/^\t/    /' "$D/summary.txt" >"$T/spaces"
scripts/ctest_skips.sh "$T/spaces" "$D/LastTest.log" | diff -u "$T/want" -
# No skipped test: nothing.
printf '100%% tests passed, 0 tests failed out of 3\n' >"$T/none"
[ -z "$(scripts/ctest_skips.sh "$T/none" "$D/LastTest.log")" ]
# scripts/test.sh uses it.
grep -q 'scripts/ctest_skips.sh' scripts/test.sh
echo "ok: ctest_skips"
