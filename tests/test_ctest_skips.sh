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
# A C test of tests/testhelp.h ends on the line the list shows: it names
# each skipped test and why, not only a count (issue 42).
if command -v "${CC:-cc}" >/dev/null 2>&1; then
    cat >"$T/t.c" <<'C'
#include "testhelp.h"
static void t_runs(void) { CHECK(1 + 1 == 2); }
static void t_kace(void) { th_skip("../shared/data/kace-v100 is absent"); }
static void t_torch(void) { th_skip("torch is absent"); }
int main(void)
{
    static const th_test_t tests[] = {{"t_runs", t_runs}, {"t_kace", t_kace}, {"t_torch", t_torch}};
    return th_run(tests, 3);
}
C
    "${CC:-cc}" -Itests -o "$T/t" "$T/t.c" -lm
    rc=0
    "$T/t" >"$T/t.out" || rc=$?
    [ "$rc" -eq 77 ]
    tail -1 "$T/t.out" | grep -qxF \
        "1 checks, 0 failed, 2 tests skipped: t_kace (../shared/data/kace-v100 is absent); t_torch (torch is absent)" ||
        { echo "testhelp's last line: $(tail -1 "$T/t.out")" >&2; exit 1; }
fi
# scripts/test.sh uses it.
grep -q 'scripts/ctest_skips.sh' scripts/test.sh
echo "ok: ctest_skips"
