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
# run.sh declares as many expected times as it has stages.
n=$(sed -n 's/^progress_init "\(.*\)"$/\1/p' scripts/run.sh | wc -w)
k=$(grep -c '^stage ' scripts/run.sh)
[ "$n" -eq "$k" ] || { echo "run.sh: $k stages, $n expected times" >&2; exit 1; }

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
# run.sh writes every replay JSON through it.
! grep -n '> *"\$out/replay/.*\.json"' scripts/run.sh
echo "ok: run_lib"
