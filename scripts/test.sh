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
rc=0
ctest --output-on-failure -j "$(nproc)" --timeout 600 >"$log" 2>&1 || rc=$?
cat "$log"
[ "$rc" -eq 0 ] || exit "$rc"

# A skipped test passes nothing: each one must have a reason here (CMake's
# LABELS say which need ../shared/data or a GPU).
gpu=no
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && gpu=yes
bad=""
for t in $(sed -n 's/^ *[0-9][0-9]* - \([^ ]*\) (Skipped)$/\1/p' "$log"); do
    if ctest -N -L '^shared-data$' | grep -q ": $t\$" && [ ! -d ../../shared/data ]; then
        echo "skipped $t: ../shared/data is absent" >&2
    elif ctest -N -L '^gpu$' | grep -q ": $t\$" && [ "$gpu" = no ]; then
        echo "skipped $t: no GPU here" >&2
    else
        bad="$bad $t"
    fi
done
if [ -n "$bad" ]; then
    echo "pairsight: tests skipped although they must run here:$bad" >&2
    exit 1
fi
