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

# The command line's refusals (issue 41 item 13, issue 42 item 8): one line, a nonzero exit, no
# traceback, and never a wrong list (an existing output stays as it was).
cap() { env PYTHONPATH=python:tests/data "$PY" -m pairsight.capture "$@"; }
one_line() {  # (capture_models prints one line of its own as it is imported)
    n=$(grep -vc '^importing capture_models$' "$T/err")
    [ "$n" -eq 1 ] || fail "$1: $n lines on stderr: $(cat "$T/err")"
    ! grep -q Traceback "$T/err" || fail "$1: a traceback: $(cat "$T/err")"
}
# A model's print() goes to stderr, not into the list on stdout.
expect 0 cap capture_models:printing --input 8 --out -
head -1 "$T/out" >"$T/first"
has "$T/first" "# pairsight oplist 1"
! grep -q "hello\|building\|importing" "$T/out" || fail "a model's print() landed in the list: $(cat "$T/out")"
has "$T/err" "hello from forward"
has "$T/err" "importing capture_models"
# A name that would inject lines or split the header's token.
expect 2 cap capture_models:printing --input 8 --name "$(printf 'x\ngemm evil m=1')" --out "$T/n.oplist"
has "$T/err" "--name"
one_line "--name with a newline"
[ ! -e "$T/n.oplist" ] || fail "--name with a newline wrote $T/n.oplist"
expect 2 cap capture_models:printing --input 8 --name "my net" --out "$T/n.oplist"
# A branch on a tensor's value: a clear message on the meta device, a list on the CPU.
expect 1 cap capture_models:item_branch --input 8 --out "$T/i.oplist"
has "$T/err" "reads a tensor's value"
has "$T/err" "--device cpu"
one_line "if tensor:"
expect 0 cap capture_models:item_branch --input 8 --device cpu --out "$T/i.oplist"
has "$T/i.oplist" "gemm fc "
# No kernel at all: refused, and the earlier list stays.
echo keep >"$T/e.oplist"
expect 1 cap capture_models:empty --input 8 --out "$T/e.oplist"
has "$T/err" "launches no kernel"
one_line "an empty model"
has "$T/e.oplist" "keep"
# Sizes: a batch past int, an input too large to allocate on the CPU.
expect 2 cap torchvision.models:resnet18 --input 3x224x224 --batch 2147483648 --out "$T/x"
has "$T/err" "--batch"
expect 2 cap torchvision.models:resnet18 --input 3x224x224 --batch 1073741825 --out "$T/x"
has "$T/err" "2^30"
# Within the input bound, a tensor past the reader's 2^40 elements: refused, nothing written.
expect 1 cap torchvision.models:resnet18 --input 3x224x224 --batch 4194304 --out "$T/x"
has "$T/err" "past 2^40"
one_line "a tensor past 2^40 elements"
expect 2 cap torchvision.models:resnet18 --input 3x100000x10000 --device cpu --out "$T/x"
has "$T/err" "--device meta"
one_line "a 3e9-element input on the CPU"
# A missing folder, bad --kwargs, a failing factory, something not a module.
expect 2 cap torchvision.models:resnet18 --input 3x224x224 --out "$T/none/r.oplist"
has "$T/err" "no such folder"
one_line "a missing folder"
expect 2 cap torchvision.models:resnet18 --input 3x224x224 --kwargs "num_classes=ten(" --out "$T/x"
has "$T/err" "--kwargs"
one_line "bad --kwargs"
expect 2 cap torchvision.models:resnet18 --input 3x224x224 --kwargs "num_classes" --out "$T/x"
one_line "--kwargs without ="
expect 1 cap capture_models:broken --input 8 --out "$T/x"
has "$T/err" "fails on purpose"
one_line "a failing factory"
expect 1 cap capture_models:not_a_module --input 8 --out "$T/x"
has "$T/err" "not a torch.nn.Module"
expect 1 cap torchvision.models:resnet18 --input 3x224x224 --kwargs "no_such_arg=1" --out "$T/x"
has "$T/err" "no_such_arg"
one_line "a factory's unknown keyword"
expect 2 cap no_such_module:net --input 8 --out "$T/x"
one_line "an unknown module"
# A wrong --input says which input the model wanted.
expect 1 cap torchvision.models:resnet18 --input 4x224x224 --out "$T/x"
has "$T/err" "takes 3 channels"
has "$T/err" "conv1"
one_line "a wrong --input"
expect 1 cap capture_models:two_inputs --input 8 --out "$T/x"
has "$T/err" "TwoInputs.forward(x, memory) takes 2 input(s)"
one_line "one --input for two"
expect 0 cap capture_models:two_inputs --input 8,8 --out "$T/two.oplist"
[ ! -e "$T/x" ] || fail "a refused capture wrote $T/x"
finish test_capture
