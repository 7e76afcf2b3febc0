#!/bin/sh
# pairsight train interrupted with Ctrl-C (SIGINT) or SIGTERM mid-training:
# the old --out stays as it was, no temporary or lock file is left, the exit
# status is 128 + the signal (130, 143); progress lines carry an ETA, -q
# silences them. Usage: sh tests/test_train_interrupt.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_train_interrupt.sh PAIRSIGHT}
. tests/clitest.sh

expect 0 "$CLI" simulate --gpu a100 --experiments 400 --runs 4 --threads 1 --seed 3 --out "$T/c" -q
expect 0 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/m.psm" \
    --threads 1 --depths 2 --etas 0.3 --rounds 5 -q
cp "$T/m.psm" "$T/old.psm"
# A long grid (early stopping off in effect), progress every 0.2 s, stopped
# by signal $1 (exit status $2) once a progress line is out: the last run's
# stderr goes first, so that its ETA line cannot stop this run before it starts.
interrupt() {
    rm -f "$T/err"
    PAIRSIGHT_PROGRESS_SECONDS=0.2 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" \
        --out "$T/m.psm" --threads 1 --depths 6,8 --etas 0.01 --rounds 5000 --early-stop 5000 \
        2> "$T/err" &
    pid=$!
    i=0
    while [ $i -lt 600 ]; do
        grep -q "ETA" "$T/err" 2>/dev/null && break
        sleep 0.1
        i=$((i + 1))
    done
    kill -"$1" $pid
    wait $pid
    rc=$?
    [ $rc -eq "$2" ] || fail "train stopped by SIG$1: exit $rc, want $2: $(cat "$T/err")"
    grep -q "ETA" "$T/err" || fail "no ETA in the progress: $(cat "$T/err")"
    grep -q "interrupted (SIG$1); --out left as it was" "$T/err" || fail "message: $(cat "$T/err")"
    cmp -s "$T/m.psm" "$T/old.psm" || fail "SIG$1: the old --out changed"
    ls "$T"/m.psm.tmp.* >/dev/null 2>&1 && fail "SIG$1: temporary model file left behind"
    [ -e "$T/m.psm.lock" ] && fail "SIG$1: lock file $T/m.psm.lock left behind"
}
interrupt INT 130
interrupt TERM 143

# -q: no progress line, nor anything else, on stderr.
PAIRSIGHT_PROGRESS_SECONDS=0.1 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/q.psm" \
    --threads 1 --depths 4 --etas 0.1 --rounds 200 --early-stop 200 -q 2> "$T/err" || fail "train -q"
[ -s "$T/err" ] && fail "train -q wrote on stderr: $(cat "$T/err")"
[ -s "$T/q.psm" ] || fail "train -q wrote no model"
finish test_train_interrupt
