#!/bin/sh
# A user's own model end to end (docs/own-model.md): capture vgg16 and
# resnet152 from torchvision, simulate a small campaign of them with
# --oplist, check, train, predict, plan, replay; then the collector's
# profile, counters and coexec on the fake backend with --oplist, and the
# refusals (a list's batch, a built-in name, an unknown model).
# Exit 77 without Debian's python3-torch and python3-torchvision.
# Usage: sh tests/test_own_model.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_own_model.sh PAIRSIGHT}
. tests/clitest.sh
PY=/usr/bin/python3
"$PY" -c 'import torch, torchvision' 2>/dev/null || { echo "skip: $PY with torch and torchvision is needed"; exit 77; }
# The capture needs no C library: none is loaded (an ASan build's library
# would abort this uninstrumented Python); every other step is the CLI.
PAIRSIGHT_LIBRARY=/nonexistent/libpairsight.so.0
export PAIRSIGHT_LIBRARY
for m in vgg16 resnet152; do
    expect 0 env PYTHONPATH=python "$PY" -m pairsight.capture torchvision.models:$m --input 3x224x224 --batch 4 \
        --out "$T/$m.oplist"
    has "$T/err" "capture: $m batch 4:"
done
O="vgg16=$T/vgg16.oplist,resnet152=$T/resnet152.oplist"
expect 0 "$CLI" simulate --gpu a100 --oplist "$O" --pairs vgg16:4/resnet152:4,resnet152:4/vgg16:4 \
    --experiments 200 --runs 3 --out "$T/camp" -q
expect 0 "$CLI" check "$T/camp/ops.csv" "$T/camp/coexec.csv"
has "$T/out" "2 (model, batch) groups"
expect 0 "$CLI" train --ops "$T/camp/ops.csv" --coexec "$T/camp/coexec.csv" --out "$T/m.psm" --rounds 60 -q
printf 'hp_model,hp_batch,hp_start,hp_len,lp_model,lp_batch,lp_start,lp_len,hp_tpcs,lp_tpcs\n' >"$T/q.csv"
printf 'vgg16,4,0,16,resnet152,4,40,16,38,16\n' >>"$T/q.csv"
expect 0 "$CLI" predict --model "$T/m.psm" --ops "$T/camp/ops.csv" --queries "$T/q.csv"
has "$T/out" "vgg16,4,0,16,resnet152,4,40,16,38,16,"
expect 0 "$CLI" plan --model "$T/m.psm" --ops "$T/camp/ops.csv" --hp vgg16:4 --lp resnet152:4 --slo-factor 1.2 \
    --out "$T/plan.json" -q
has "$T/plan.json" '"feasible":true'
expect 0 "$CLI" replay --oplist "$O" --model "$T/m.psm" --ops "$T/camp/ops.csv" --coexec "$T/camp/coexec.csv" \
    --hp vgg16:4 --lp resnet152:4 --load 0.5 --requests 50 --warmup 10 --json
has "$T/out" '"pairsight_bound"'
# Without --oplist the simulator and replay do not know the names.
expect 1 "$CLI" replay --model "$T/m.psm" --ops "$T/camp/ops.csv" --hp vgg16:4 --lp resnet152:4 \
    --policies dedicated
has "$T/err" "unknown model 'vgg16'"

# The collector, fake backend: every action takes the lists.
D="$T/f.db"
expect 0 "$CLI" collect profile --backend fake --db "$D" --oplist "$O" --tpcs 27,54 -q
expect 0 "$CLI" collect profile --backend fake --db "$D" --oplist "$O" --model resnet152 --tpcs 27,54 -q
expect 0 "$CLI" collect counters --backend fake --db "$D" --oplist "$O" -q
expect 0 "$CLI" collect coexec --backend fake --db "$D" --oplist "$O" --hp vgg16:4 --lp resnet152:4 \
    --experiments 3 --runs 2 -q
expect 0 "$CLI" collect export --db "$D" --ops "$T/fops.csv" --coexec "$T/fcx.csv"
expect 0 "$CLI" check "$T/fops.csv"
has "$T/out" "2 (model, batch) groups"
grep -c '^FAKE-GPU,vgg16,4,' "$T/fops.csv" >"$T/n"
has "$T/n" "74"
expect 1 "$CLI" collect profile --backend fake --db "$D" --oplist "$O" --batch 8 -q
has "$T/err" "captured at batch 4, not 8"
expect 1 "$CLI" simulate --oplist "resnet50=$T/vgg16.oplist" --models resnet50 --out "$T/x" -q
has "$T/err" "built-in model"
expect 1 "$CLI" simulate --oplist "mynet=$T/none.oplist" --models mynet --out "$T/x" -q
has "$T/err" "none.oplist"
finish test_own_model
