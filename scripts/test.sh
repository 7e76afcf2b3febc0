#!/bin/sh
# Builds pairsight and runs every test. Installs missing Debian packages first.
# Usage: scripts/test.sh [--sanitize]   (--sanitize: ASan + UBSan build in build-asan/)
# PS_CMAKE_ARGS adds CMake options (CI passes -DPS_WERROR=ON).
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
dir=build
opts="-DCMAKE_BUILD_TYPE=RelWithDebInfo"
if [ "${1:-}" = "--sanitize" ]; then
    dir=build-asan
    opts="-DCMAKE_BUILD_TYPE=Debug -DPS_SANITIZE=ON -DPS_FAULT_INJECTION=ON"
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    export PS_SANITIZED=1
fi
# shellcheck disable=SC2086
cmake -S . -B "$dir" $opts ${PS_CMAKE_ARGS:-} >/dev/null
cmake --build "$dir" -j "$(nproc)"
cd "$dir"
log=Testing/ps-ctest.log
mkdir -p Testing
# One line per test as it ends ("12/64 Test #12: test_model ... Passed 3.1 sec"),
# on the terminal and in the log.
n=$(ctest -N | sed -n 's/^Total Tests: //p')
echo "== ctest: $n tests on $(nproc) cores" >&2
start=$(date +%s)
rc=0
rm -f Testing/ps-ctest.rc
{ ctest --output-on-failure -j "$(nproc)" --timeout 600 2>&1 || echo "$?" >Testing/ps-ctest.rc; } | tee "$log"
[ -f Testing/ps-ctest.rc ] && rc=$(cat Testing/ps-ctest.rc) && rm -f Testing/ps-ctest.rc
echo "== ctest: $(($(date +%s) - start)) s" >&2

# A skipped test passes nothing: each one is listed with the reason it gave,
# and must be one that may skip here (CMake's LABELS say which need
# ../shared/data, a GPU, a browser, or the Abacus mirror that PS_ABACUS_REPO names).
../scripts/ctest_skips.sh "$log" Testing/Temporary/LastTest.log >Testing/ps-skips.txt
cat Testing/ps-skips.txt >&2
[ "$rc" -eq 0 ] || exit "$rc"
gpu=no
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && gpu=yes
bad=""
for t in $(sed -n 's/^skipped \([^:]*\):.*/\1/p' Testing/ps-skips.txt); do
    if ctest -N -L '^shared-data$' | grep -q ": $t\$" && [ ! -d ../../shared/data ]; then
        :
    elif ctest -N -L '^gpu$' | grep -q ": $t\$" && [ "$gpu" = no ]; then
        :
    elif ctest -N -L '^browser$' | grep -q ": $t\$" && ! command -v chromium >/dev/null 2>&1; then
        :
    elif ctest -N -L '^unsanitized$' | grep -q ": $t\$" && [ "${PS_SANITIZED:-0}" = 1 ]; then
        :
    elif ctest -N -L '^abacus-mirror$' | grep -q ": $t\$" && [ ! -d "${PS_ABACUS_REPO:-/nonexistent}" ]; then
        :
    elif ctest -N -L '^chroot$' | grep -q ": $t\$" && [ "$(id -u)" != 0 ] && ! unshare -r true 2>/dev/null; then
        :
    else
        bad="$bad $t"
    fi
done
if [ -n "$bad" ]; then
    echo "pairsight: tests skipped although they must run here:$bad" >&2
    exit 1
fi
