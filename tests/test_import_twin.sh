#!/bin/sh
# import ... --oplist L --tpcs-from twin: one trace at one TPC count, the
# other counts from the twin's ratios, rows marked source=twin-ratio; the
# alignment of kernels with operators (cuDNN helpers folded in, refusal at
# the first kernel that fits no operator); check and predict say so.
# Usage: sh tests/test_import_twin.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_import_twin.sh PAIRSIGHT}
. tests/clitest.sh

# A PyTorch 1.8 trace: computeOffsets (a cuDNN helper), a conv, a batch norm, a GEMM.
cat >"$T/l.oplist" <<'L'
# pairsight oplist 1
# model=tiny batch=1 seq_len=0 ops=3
conv conv1 n=1 c=3 h=224 w=224 k=64 r=7 s=7 stride=2 pad=3 groups=1
norm bn1 variant=batch n=1 c=64 hw=12544
gemm fc m=1 n=1000 k=2048 batch=1
L
expect 0 "$CLI" import torch-trace tests/data/torch_pt18.json --drop-zero --gpu v100 --model tiny --tpcs 40 \
    --oplist "$T/l.oplist" --tpcs-from twin --at 10,20-22 --out "$T/o.csv"
has "$T/o.csv" "V100-SXM2-16GB,tiny,1,0,conv1,40,"
has "$T/o.csv" ",twin-ratio"
[ "$(grep -c ',twin-ratio' "$T/o.csv")" = 12 ] || fail "expected 3 ops x 4 estimated counts: $(cat "$T/o.csv")"
[ "$(grep -c ',40,' "$T/o.csv")" = 3 ] || fail "expected 3 measured rows"
expect 0 "$CLI" check "$T/o.csv"
has "$T/out" "12 rows estimated"
expect 0 "$CLI" check --json "$T/o.csv"
has "$T/out" '"estimated_rows":12'
# Fewer TPCs, longer: the twin's ratio is above 1 for the conv.
awk -F, '$5=="conv1" && $6==10 {print $7}' "$T/o.csv" >"$T/c10"
awk -F, '$5=="conv1" && $6==40 {print $7}' "$T/o.csv" >"$T/c40"
[ "$(awk -v a="$(cat "$T/c10")" -v b="$(cat "$T/c40")" 'BEGIN{print (a > 2 * b)}')" = 1 ] ||
    fail "conv1 at 10 TPCs $(cat "$T/c10") ns is not over twice its 40-TPC $(cat "$T/c40") ns"

# Refusals: a list that does not fit the kernels names the first mismatch.
sed 's/^norm bn1.*/eltwise relu variant=relu elems=802816 inputs=1/' "$T/l.oplist" >"$T/bad.oplist"
expect 1 "$CLI" import torch-trace tests/data/torch_pt18.json --drop-zero --gpu v100 --model tiny --tpcs 40 \
    --oplist "$T/bad.oplist" --tpcs-from twin --out "$T/x.csv"
has "$T/err" "kernel 2 "
has "$T/err" "(norm) does not fit operator 1 'relu' (eltwise)"
head -4 "$T/l.oplist" | sed "s/ ops=3/ ops=2/" >"$T/short.oplist"
expect 1 "$CLI" import torch-trace tests/data/torch_pt18.json --drop-zero --gpu v100 --model tiny --tpcs 40 \
    --oplist "$T/short.oplist" --tpcs-from twin --out "$T/x.csv"
has "$T/err" "kernels left after the list's 2 operators"
# --oplist alone: one row per operator at --tpcs (issue 37 item 5), a misfit refused.
expect 0 "$CLI" import torch-trace tests/data/torch_pt18.json --drop-zero --gpu v100 --model tiny --tpcs 40 \
    --oplist "$T/l.oplist" --out "$T/x.csv"
[ "$(grep -c ',tiny,1,' "$T/x.csv")" = 3 ] || fail "expected one row per operator: $(cat "$T/x.csv")"
has "$T/x.csv" ",conv1,40,"
expect 1 "$CLI" import torch-trace tests/data/torch_pt18.json --drop-zero --gpu v100 --model tiny --tpcs 40 \
    --oplist "$T/bad.oplist" --out "$T/x.csv"
has "$T/err" "do not align with the list's operators (an engine that fuses across operators"
expect 2 "$CLI" import torch-trace tests/data/torch_pt18.json --gpu v100 --model tiny --tpcs 40 --tpcs-from twin \
    --out "$T/x.csv"
has "$T/err" "--tpcs-from needs --oplist"
expect 2 "$CLI" import torch-trace tests/data/torch_pt18.json --drop-zero --gpu v100 --model tiny --tpcs 40 \
    --oplist "$T/l.oplist" --tpcs-from twin --at 0,99 --out "$T/x.csv"
has "$T/err" "--at: bad value"

# The ops format, on a simulated campaign: the built-in resnet50's kernels
# (Orion's names) aligned with the collector's resnet50 list.
expect 0 "$CLI" simulate --gpu a100 --models resnet50 --splits 27/27 --experiments 1 --runs 1 --out "$T/c" -q
"$CLI" collect ops --model resnet50 --batch 8 >"$T/r50.oplist"
expect 0 "$CLI" import ops "$T/c/ops.csv" --model resnet50 --batch 8 --tpcs 54 --oplist "$T/r50.oplist" \
    --tpcs-from twin --at 27 --out "$T/e.csv"
expect 0 "$CLI" check "$T/e.csv"
has "$T/out" "348 rows, 1 (model, batch) groups; 174 rows estimated"
# Its estimate at 27 TPCs against the campaign's own 27-TPC rows, whole model.
awk -F, '$6==27 {s+=$7} END {print s}' "$T/e.csv" >"$T/est"
awk -F, 'NR>1 && $6==27 && $2=="resnet50" {s+=$7} END {print s}' "$T/c/ops.csv" >"$T/meas"
awk -v e="$(cat "$T/est")" -v m="$(cat "$T/meas")" 'BEGIN{r=e/m; exit !(r > 0.85 && r < 1.15)}' ||
    fail "estimate $(cat "$T/est") vs campaign $(cat "$T/meas") ns at 27 TPCs: off by more than 15%"
finish test_import_twin
