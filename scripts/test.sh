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
    opts="-DCMAKE_BUILD_TYPE=Debug -DPS_SANITIZE=ON"
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    export PS_SANITIZED=1
fi
# shellcheck disable=SC2086
cmake -S . -B "$dir" $opts ${PS_CMAKE_ARGS:-} >/dev/null
cmake --build "$dir" -j "$(nproc)"
cd "$dir"
ctest --output-on-failure -j "$(nproc)" --timeout 600
