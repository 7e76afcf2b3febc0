# Sourced by scripts/device_smoke.sh and scripts/device_validate.sh: their
# common options, the CUDA build, the step clock and the time limit.
# NAME (the script's name for messages), OUT and LIMIT (defaults) are set by
# the caller before device_options; QUICK=0 too where --quick is accepted.

# device_options "$@": --backend, --cli, --no-build, --out, --limit (and
# --quick where QUICK is set) into BACKEND, CLI, BUILD, OUT, LIMIT and QUICK;
# --help prints the comment at the top of the script.
device_options() {
    BACKEND=cuda
    CLI=""
    BUILD=1
    while [ $# -gt 0 ]; do
        case "$1" in
        --backend) BACKEND=$2; shift 2 ;;
        --cli) CLI=$2; BUILD=0; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --out) OUT=$2; shift 2 ;;
        --limit) LIMIT=$2; shift 2 ;;
        --quick) [ -n "${QUICK+set}" ] || { echo "$NAME: unknown option $1" >&2; exit 2; }; QUICK=1; shift ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
        *) echo "$NAME: unknown option $1" >&2; exit 2 ;;
        esac
    done
}

# The clock of step and device_finish starts here.
device_clock() {
    start=$(date +%s)
}
step() { echo "== $* ($(( $(date +%s) - start )) s)"; }

# device_build [quiet]: configure and build build-cuda/ with PS_CUDA unless
# --cli or --no-build (quiet: as a step, without cmake's output); CLI is then
# the binary to run.
# RelWithDebInfo (-O2 -g), the configuration CI builds with -Werror: at
# Release's -O3, gcc 12 warns (maybe-uninitialized) in src/model/forest.c.
device_build() {
    if [ "$BUILD" = 1 ]; then
        if [ "${1:-}" = quiet ]; then
            step "build with CUDA"
            cmake -S . -B build-cuda -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPS_CUDA=ON > /dev/null
            cmake --build build-cuda -j"$(nproc)" > /dev/null
        else
            cmake -S . -B build-cuda -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPS_CUDA=ON
            cmake --build build-cuda -j"$(nproc)"
        fi
        CLI=build-cuda/pairsight
    fi
    [ -n "$CLI" ] || CLI=build-cuda/pairsight
    [ -x "$CLI" ] || { echo "$NAME: no pairsight at $CLI" >&2; exit 2; }
}

# device_finish [TEXT]: the time since device_clock against LIMIT; TEXT is
# added to the closing line.
device_finish() {
    elapsed=$(( $(date +%s) - start ))
    echo "$NAME: done in $elapsed s (limit $LIMIT s)${1:-}"
    [ "$elapsed" -le "$LIMIT" ] || { echo "$NAME: over the limit" >&2; exit 1; }
}
