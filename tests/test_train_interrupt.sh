#!/bin/sh
# pairsight train interrupted with Ctrl-C (SIGINT) mid-training: the old
# --out stays as it was, no temporary file is left, the exit status is 130;
# progress lines carry an ETA. Usage: sh tests/test_train_interrupt.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_train_interrupt.sh PAIRSIGHT}
. tests/clitest.sh

expect 0 "$CLI" simulate --gpu a100 --experiments 400 --runs 4 --threads 1 --seed 3 --out "$T/c" -q
expect 0 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/m.psm" \
    --threads 1 --depths 2 --etas 0.3 --rounds 5 -q
cp "$T/m.psm" "$T/old.psm"
# A long grid (early stopping off in effect), progress every 0.2 s.
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
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || fail "interrupted train: exit $rc, want 130: $(cat "$T/err")"
grep -q "ETA" "$T/err" || fail "no ETA in the progress: $(cat "$T/err")"
grep -q "interrupted; --out left as it was" "$T/err" || fail "message: $(cat "$T/err")"
cmp -s "$T/m.psm" "$T/old.psm" || fail "the old --out changed"
ls "$T"/m.psm.tmp.* >/dev/null 2>&1 && fail "temporary model file left behind"
finish test_train_interrupt
