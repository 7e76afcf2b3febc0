#!/bin/sh
# Crafted model files with valid checksums (issue 30 item 2): a cycle in a
# tree of each booster kind (.psm, kace_rf, xu_rf, mps) and a half-read
# "ratio N X" line are refused with a message, and 40 payload flips per kind
# with every checksum recomputed give no crash and no hang (10 s per load).
# The full sweep (500 per kind) is scripts/crafted_sweep.py PAIRSIGHT.
# Usage: sh tests/test_crafted_models.sh PAIRSIGHT
CLI=${1:?usage: test_crafted_models.sh PAIRSIGHT}
PY=/usr/bin/python3
[ -x $PY ] || { echo "skip: no $PY"; exit 77; }
exec $PY scripts/crafted_sweep.py "$CLI" --n 40 --timeout 10 --crafted
