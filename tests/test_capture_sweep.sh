#!/bin/sh
# The capture sweep (issue 37): every classification builder of torchvision.models (0.14) captured
# with default flags on the meta device at batch 1, plus causal transformer stacks from torch.nn and a
# hand-written GPT-2 block. Parameters must equal sum(p.numel()) (auxiliary heads that do not run in
# eval mode named apart), conv+gemm FLOPs within 1% of the analytic count from module shapes, the
# table of docs/own-model.md equal to the sweep's, every list read back by the C reader, the sweep within
# 3 minutes. Exit 77 without torch.
# Usage: sh tests/test_capture_sweep.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_capture_sweep.sh PAIRSIGHT}
. tests/clitest.sh
PY=/usr/bin/python3
PAIRSIGHT_LIBRARY=/nonexistent/libpairsight.so.0  # the capture needs no C library
export PAIRSIGHT_LIBRARY
"$PY" -c 'import torch, torchvision' 2>/dev/null || { echo "skip: $PY with torch and torchvision is needed"; exit 77; }
start=$(date +%s)
mkdir "$T/lists"
"$PY" tests/capture_sweep.py --check-doc docs/own-model.md --write "$T/lists" >"$T/sweep" 2>&1
rc=$?
took=$(($(date +%s) - start))
grep -v -i "warn" "$T/sweep"
[ $rc -eq 0 ] || fail "capture_sweep.py exited $rc"
grep -q "^83 models in" "$T/sweep" || fail "the sweep did not take 80 torchvision builders and 3 stacks"
echo "sweep: ${took} s"
[ "$took" -le 180 ] || fail "the sweep took ${took} s, more than 3 minutes"
# The C reader takes every list the sweep wrote (names within 63 bytes, every key known).
n=0
for f in "$T"/lists/*.oplist; do
    "$CLI" collect ops --file "$f" >"$T/out" 2>"$T/err" || fail "collect ops --file $f: $(cat "$T/err")"
    n=$((n + 1))
done
[ "$n" -eq 83 ] || fail "$n lists written, 83 expected"
finish test_capture_sweep
