#!/bin/sh
# python -m pairsight.capture on real models (Debian's python3-torch 1.13 and
# python3-torchvision 0.14, CPU, meta device): parameter counts, resnet50 and
# mobilenet_v2 against the built-in lists op for op, refusal of unmapped ops,
# and the command line. Exit 77 without torch.
# Usage: sh tests/test_capture.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_capture.sh PAIRSIGHT}
. tests/clitest.sh
PY=/usr/bin/python3
# pairsight.capture needs no C library, and the package imports without one:
# no library is loaded here, so an ASan build's library never meets this
# uninstrumented Python (it aborted with "ASan runtime does not come first").
PAIRSIGHT_LIBRARY=/nonexistent/libpairsight.so.0
export PAIRSIGHT_LIBRARY
"$PY" -c 'import torch, torchvision' 2>/dev/null || { echo "skip: $PY with torch and torchvision is needed"; exit 77; }
"$PY" tests/capture_check.py "$CLI" "$T" >"$T/check" 2>&1
rc=$?
cat "$T/check"
[ $rc -eq 0 ] || fail "capture_check.py exited $rc"
# The command line, and an import of pairsight.capture that needs no C library.
expect 0 env PYTHONPATH=python PAIRSIGHT_LIBRARY=/nonexistent LD_LIBRARY_PATH= "$PY" -c \
    'import sys, types; sys.modules["pairsight"] = types.ModuleType("pairsight"); sys.modules["pairsight"].__path__ = ["python/pairsight"]; import pairsight.capture'
expect 0 env PYTHONPATH=python:examples/own_model "$PY" -m pairsight.capture bert_nn:bert_base --input 32:int64 \
    --batch 2 --out "$T/b.oplist"
has "$T/err" "parameters"
has "$T/b.oplist" "# model=bert_base batch=2 seq_len=32"
expect 2 env PYTHONPATH=python "$PY" -m pairsight.capture torchvision.models:resnet50 --input 3xAx224 --out "$T/x"
has "$T/err" "3xAx224"
finish test_capture
