#!/bin/sh
# The main job on a modern pair (issue 37 item 4): efficientnet_b0 (sigmoid, SiLU, squeeze-excite) beside
# vit_b_16 (nn.MultiheadAttention, a class token, positional embeddings), both captured with default
# flags, then simulate -> check -> train -> predict -> plan, small and quick.
# Exit 77 without Debian's python3-torch and python3-torchvision.
# Usage: sh tests/test_own_model_pair.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_own_model_pair.sh PAIRSIGHT}
. tests/clitest.sh
PY=/usr/bin/python3
"$PY" -c 'import torch, torchvision' 2>/dev/null || { echo "skip: $PY with torch and torchvision is needed"; exit 77; }
PAIRSIGHT_LIBRARY=/nonexistent/libpairsight.so.0  # the capture loads no C library; the rest is the CLI
export PAIRSIGHT_LIBRARY
expect 0 env PYTHONPATH=python "$PY" -m pairsight.capture torchvision.models:efficientnet_b0 --input 3x224x224 \
    --batch 2 --out "$T/eff.oplist"
has "$T/err" "5288548 parameters"
expect 0 env PYTHONPATH=python "$PY" -m pairsight.capture torchvision.models:vit_b_16 --input 3x224x224 \
    --batch 2 --out "$T/vit.oplist"
has "$T/err" "86567656 parameters"
expect 0 "$CLI" collect ops --file "$T/vit.oplist"
has "$T/out" "221 operators"
O="effb0=$T/eff.oplist,vitb16=$T/vit.oplist"
expect 0 "$CLI" simulate --gpu a100 --oplist "$O" --pairs effb0:2/vitb16:2,vitb16:2/effb0:2 \
    --experiments 120 --runs 2 --out "$T/camp" -q
expect 0 "$CLI" check "$T/camp/ops.csv" "$T/camp/coexec.csv"
has "$T/out" "2 (model, batch) groups"
expect 0 "$CLI" train --ops "$T/camp/ops.csv" --coexec "$T/camp/coexec.csv" --out "$T/m.psm" \
    --rounds 20 --depths 4 --etas 0.3 -q
printf 'hp_model,hp_batch,hp_start,hp_len,lp_model,lp_batch,lp_start,lp_len,hp_tpcs,lp_tpcs\n' >"$T/q.csv"
printf 'vitb16,2,0,16,effb0,2,40,16,38,16\n' >>"$T/q.csv"
expect 0 "$CLI" predict --model "$T/m.psm" --ops "$T/camp/ops.csv" --queries "$T/q.csv"
has "$T/out" "vitb16,2,0,16,effb0,2,40,16,38,16,"
expect 0 "$CLI" plan --model "$T/m.psm" --ops "$T/camp/ops.csv" --hp vitb16:2 --lp effb0:2 --slo-factor 1.2 \
    --out "$T/plan.json" -q
has "$T/plan.json" '"feasible":true'
finish test_own_model_pair
