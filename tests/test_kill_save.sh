#!/bin/sh
# Saves killed with SIGKILL (issue 11, item 10): a train killed during its
# save left m.psm.tmp.PID forever (28 of 40 kills). Here train is killed at
# varied moments of its save, which PS_TEST_SAVE_PAUSE_MS slows down (a pause
# after the temporary file is opened, before the flush of its last writes,
# before the rename and after it): --out is always the old model byte for
# byte or a new one that loads whole, never a partial file, and the next save
# removes the temporary files the dead writers left. Then collect scaling is
# killed between its two CSV saves, and the rerun finishes the pair.
# Usage: sh tests/test_kill_save.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_kill_save.sh PAIRSIGHT}
case $CLI in /*) ;; *) CLI=$PWD/$CLI ;; esac
. tests/clitest.sh

expect 0 "$CLI" simulate --gpu a100 --experiments 12 --runs 2 --threads 1 --seed 3 --out "$T/c" -q
TRAIN="train --ops $T/c/ops.csv --coexec $T/c/coexec.csv --threads 1 --depths 4 --etas 0.3 -q"
# shellcheck disable=SC2086
expect 0 "$CLI" $TRAIN --rounds 3 --out "$T/old.psm"

# Wait (up to 10 s) for a file to appear.
wait_for() { i=0; while [ ! -e "$1" ] && [ $i -lt 2000 ]; do sleep 0.005; i=$((i + 1)); done; }

kills=0 left=0 old=0 new=0 cleaned=0 prev=none
for i in $(seq 0 31); do
    cp "$T/old.psm" "$T/m.psm"
    # shellcheck disable=SC2086
    PS_TEST_SAVE_PAUSE_MS=40 "$CLI" $TRAIN --rounds 5 --out "$T/m.psm" 2>/dev/null &
    pid=$!
    phase=$((i % 8))
    if [ $phase -eq 0 ]; then
        sleep 0.0$((i % 10)) # before or at the start of the save
    else
        wait_for "$T/m.psm.tmp.$pid"
        # This save has opened its temporary file: the last dead one's is gone.
        if [ -e "$T/m.psm.tmp.$pid" ] && [ "$prev" != none ]; then
            [ -e "$T/m.psm.tmp.$prev" ] && fail "kill $i: m.psm.tmp.$prev of a dead writer is still there"
            cleaned=$((cleaned + 1))
        fi
        sleep "0.$(printf %03d $(((phase - 1) * 25 + i % 5 * 4)))" # 0 .. 0.166 s into the save
    fi
    kill -9 $pid 2>/dev/null && kills=$((kills + 1))
    wait $pid 2>/dev/null
    prev=none
    [ -e "$T/m.psm.tmp.$pid" ] && left=$((left + 1)) && prev=$pid
    if cmp -s "$T/m.psm" "$T/old.psm"; then
        old=$((old + 1))
    elif "$CLI" model info "$T/m.psm" >/dev/null 2>"$T/err"; then
        new=$((new + 1))
    else
        fail "kill $i (phase $phase): --out is neither the old model nor a whole new one: $(cat "$T/err")"
    fi
done
echo "kills: $kills; temporary file left by $left (removed by the next save: $cleaned checked);" \
    "--out old $old, new and whole $new"
[ "$kills" -ge 20 ] || fail "only $kills kills landed"
[ "$left" -ge 5 ] || fail "only $left kills left a temporary file: the kills missed the save"
[ "$cleaned" -ge 3 ] || fail "only $cleaned removals checked"
[ "$old" -ge 1 ] && [ "$new" -ge 1 ] || fail "the kills did not land both before and after the rename"
# One more killed in its pause after the open; the next save removes what
# it left, and its own lock.
# shellcheck disable=SC2086
PS_TEST_SAVE_PAUSE_MS=2000 "$CLI" $TRAIN --rounds 5 --out "$T/m.psm" 2>/dev/null &
pid=$!
wait_for "$T/m.psm.tmp.$pid"
kill -9 $pid
wait $pid 2>/dev/null
[ -e "$T/m.psm.tmp.$pid" ] || fail "no temporary file left to clean"
# shellcheck disable=SC2086
expect 0 "$CLI" $TRAIN --rounds 5 --out "$T/m.psm"
ls "$T"/m.psm.tmp.* >/dev/null 2>&1 && fail "stale temporary files after the next save: $(ls "$T")"
[ -e "$T/m.psm.lock" ] && fail "lock file left after the next save"
expect 0 "$CLI" model info "$T/m.psm"

# collect scaling saves workload_scaling.csv, then workloads.csv. Killed
# right after the first rename, the rerun writes the second without
# measuring again (it said "already has ... at 10%").
cd "$T"
PS_TEST_SAVE_PAUSE_MS=2000 "$CLI" collect scaling --backend fake --model mobilenetv2 --batch 4 --shares 10,100 \
    --seconds 0.01 -q >/dev/null 2>&1 &
pid=$!
wait_for workload_scaling.csv
kill -9 $pid
wait $pid 2>/dev/null
[ -e workloads.csv ] && fail "collect scaling was not killed between its saves"
[ "$(grep -c mobilenetv2_batch4-inf workload_scaling.csv)" -eq 2 ] || fail "scaling rows: $(cat workload_scaling.csv)"
expect 0 "$CLI" collect scaling --backend fake --model mobilenetv2 --batch 4 --shares 10,100 --seconds 0.01 -q
has "$T/err" "an interrupted run"
grep -q mobilenetv2_batch4-inf workloads.csv || fail "the rerun did not write the workload"
ls ./*.tmp.* >/dev/null 2>&1 && fail "temporary files left: $(ls)"
expect 1 "$CLI" collect scaling --backend fake --model mobilenetv2 --batch 4 --shares 10,100 --seconds 0.01 -q
has "$T/err" "already has mobilenetv2_batch4-inf"
cd - >/dev/null

finish test_kill_save
