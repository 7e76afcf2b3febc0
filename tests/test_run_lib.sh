#!/bin/sh
# scripts/run_lib.sh, the helpers of scripts/run.sh: the overall progress
# line (stage k of n, elapsed, ETA) and outputs written whole or not at all
# (a stopped run.sh left 0-byte JSON files in out/replay).
set -eu
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. scripts/run_lib.sh

# Progress: k of n, elapsed and the expected seconds left.
progress_init "a:60 b:120 c:30"
stage a "first" 2>"$T/p1"
grep -q '^== \[1/3\] a first (elapsed 0:0[0-9], about 3:30 left)$' "$T/p1" || { cat "$T/p1"; exit 1; }
stage b 2>"$T/p2"
grep -q '^== \[2/3\] b (elapsed 0:0[0-9], about [0-9]:[0-9][0-9] left)$' "$T/p2" || { cat "$T/p2"; exit 1; }
progress_done 2>"$T/p3"
grep -q '^== \[3/3\] finished in 0:0[0-9]$' "$T/p3"
# run.sh declares as many expected times as it has stages: 7 always, the
# eighth (overlap) only with --abacus DIR or PS_ABACUS_REPO, counted then.
n=$(sed -n 's/^stages="\(.*\)"$/\1/p' scripts/run.sh | wc -w)
k=$(grep -c '^stage ' scripts/run.sh)
[ "$n" -eq "$k" ] || { echo "run.sh: $k stages, $n expected times" >&2; exit 1; }
grep -q '^\[ -z "\$abacus" \] || stages="\$stages overlap:[0-9]*"$' scripts/run.sh || { echo "run.sh: overlap not counted" >&2; exit 1; }
grep -q '^    stage overlap ' scripts/run.sh || { echo "run.sh: the overlap stage prints no [k/N]" >&2; exit 1; }
# No machine's path: the Abacus mirror comes from --abacus or PS_ABACUS_REPO.
! grep -n '/work/\|\.mirror' scripts/run.sh scripts/overlap_table.sh scripts/twin_abacus_table.sh \
    tests/test_overlap_abacus.sh tests/test_overlap_twin_abacus.sh
# Usage errors exit 2 before anything runs.
rc=0; sh scripts/run.sh --abacus "$T/none" "$T/o" 2>"$T/e" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'is not a folder' "$T/e" || { cat "$T/e"; exit 1; }
rc=0; sh scripts/run.sh --bogus 2>"$T/e" || rc=$?
[ "$rc" -eq 2 ] && grep -q "unknown option '--bogus'" "$T/e" || { cat "$T/e"; exit 1; }
rc=0; PS_ABACUS_REPO= sh scripts/overlap_table.sh --out "$T/ov" 2>"$T/e" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'pass --repo DIR or set PS_ABACUS_REPO' "$T/e" || { cat "$T/e"; exit 1; }

# atomic_out: the output appears only when the command succeeded.
atomic_out "$T/ok.json" sh -c 'echo "{}"'
[ "$(cat "$T/ok.json")" = "{}" ]
if atomic_out "$T/fail.json" sh -c 'echo partial; exit 3'; then exit 1; fi
[ ! -e "$T/fail.json" ] && [ ! -e "$T/fail.json.part" ]
# A stopped run: the shell that runs atomic_out is killed while the command
# writes (as Ctrl-C stops the whole process group); neither the file nor
# its part is left.
setsid sh -c '. scripts/run_lib.sh; atomic_out "$1" sh -c "printf {; sleep 5"' sh "$T/stop.json" 2>/dev/null &
pid=$!
sleep 1
/bin/kill -TERM -- "-$pid"
wait "$pid" 2>/dev/null || true
[ ! -e "$T/stop.json" ] || { echo "stop.json left behind" >&2; exit 1; }
[ ! -e "$T/stop.json.part" ] || { echo "stop.json.part left behind" >&2; exit 1; }
# run.sh writes every replay JSON and table through it, and prints a line per
# replay.
! grep -n '> *"\$out/.*\.\(json\|md\)"' scripts/run.sh
grep -q 'replay \$k/9: ' scripts/run.sh
# overlap_table.sh writes eval.json through a part file.
grep -q 'eval.json.part' scripts/overlap_table.sh
echo "ok: run_lib"
