#!/bin/sh
# The shipped derived kernels (data/orion_kernels.inc) are what
# `pairsight simulate --derive` makes of the Orion V100 profiles; skipped
# (77) where ../shared/data is absent.
CLI=${1:?usage: test_simulate_derive.sh PAIRSIGHT}
SRC=../shared/data/orion-v100/ops.csv
[ -f "$SRC" ] || { echo "skip: $SRC absent"; exit 77; }
OUT=$(mktemp /tmp/ps_test_derive.XXXXXX)
trap 'rm -f "$OUT"' EXIT
"$CLI" simulate --derive "$SRC" >"$OUT" || { echo "[FAIL] --derive failed"; exit 1; }
if cmp -s "$OUT" data/orion_kernels.inc; then
    echo "[ ok ] data/orion_kernels.inc is up to date"
else
    echo "[FAIL] data/orion_kernels.inc differs from --derive output: regenerate it"
    exit 1
fi
