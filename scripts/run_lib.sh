# Helpers of scripts/run.sh, sourced (tests/test_run_lib.sh checks them):
# an overall progress line per stage with an ETA, and outputs written whole
# or not at all.

# progress_init "NAME:SECONDS NAME:SECONDS ...": the stages in order with
# their expected seconds on the 2-core machine.
progress_init() {
    ps_stages=$1
    ps_stage_n=$(echo "$ps_stages" | wc -w)
    ps_stage_k=0
    ps_t0=$(date +%s)
}

# M:SS of a number of seconds.
progress_mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

# stage NAME [WHAT]: "== [k/n] NAME WHAT (elapsed M:SS, about M:SS left)" on
# stderr. The ETA scales the expected seconds of the stages not yet done by
# how fast the done ones went against theirs.
stage() {
    ps_stage_k=$((ps_stage_k + 1))
    el=$(($(date +%s) - ps_t0))
    done_s=0 left_s=0 i=0
    for s in $ps_stages; do
        i=$((i + 1))
        if [ "$i" -lt "$ps_stage_k" ]; then done_s=$((done_s + ${s#*:})); else left_s=$((left_s + ${s#*:})); fi
    done
    [ "$done_s" -gt 0 ] && [ "$el" -gt 0 ] && left_s=$((left_s * el / done_s))
    echo "== [$ps_stage_k/$ps_stage_n] $1${2:+ $2} (elapsed $(progress_mmss "$el"), about $(progress_mmss "$left_s") left)" >&2
}

progress_done() {
    echo "== [$ps_stage_n/$ps_stage_n] finished in $(progress_mmss $(($(date +%s) - ps_t0)))" >&2
}

# atomic_out FILE CMD ARGS...: CMD's stdout into FILE through FILE.part,
# renamed only when CMD succeeded; a failed or stopped CMD leaves no FILE.
atomic_out() {
    ps_f=$1
    shift
    trap 'rm -f "$ps_f.part"; exit 130' INT TERM
    if "$@" >"$ps_f.part"; then
        mv -f "$ps_f.part" "$ps_f"
    else
        ps_rc=$?
        rm -f "$ps_f.part"
        trap - INT TERM
        return "$ps_rc"
    fi
    trap - INT TERM
}
