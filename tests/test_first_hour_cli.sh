#!/bin/sh
# What a new user meets first (issue 29): an unknown GPU is a usage error;
# plan and colocate select name what would fit; simulate records where its
# tables came from (campaign.json), and the report names the GPU, the data's
# source, seed and size in its header and under every figure, calls simulated
# latencies simulated, and explains its "(?)" and its colour scale.
set -u
CLI=${1:?usage: test_first_hour_cli.sh PAIRSIGHT}
. tests/clitest.sh

# --gpu a10: exit 2 with the known GPUs, as every usage error.
expect 2 "$CLI" simulate --gpu a10 --experiments 10 --out "$T/x" -q
has "$T/err" "pairsight: simulate: --gpu: unknown GPU 'a10' (known: A100-SXM4-40GB (a100), H100-SXM (h100)"
[ ! -e "$T/x" ] || fail "a usage error created --out"

expect 0 "$CLI" simulate --gpu a100 --models resnet50,resnet101,bert-base --experiments 120 --runs 2 --threads 1 \
    --seed 4 --out "$T/c" -q
has "$T/c/campaign.json" '"schema":"pairsight.campaign.v1","source":"twin","gpu":"A100-SXM4-40GB","seed":4,"experiments":120,"runs":2'
expect 0 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/m.psm" --threads 1 --depths 4 \
    --etas 0.3 --rounds 20 -q

# plan with a model name that is not in the profile lists the ones that are.
expect 1 "$CLI" plan --model "$T/m.psm" --ops "$T/c/ops.csv" --hp resnet-101:8 --lp bert-base:8 --slo-factor 1.2
has "$T/err" "resnet-101 batch 8: not in the standalone profile of A100-SXM4-40GB (ops has: resnet50 batch 8"
has "$T/err" "resnet101 batch 8"

# colocate select: an unknown target or candidate suggests the nearest name.
F=tests/data/colocate
expect 0 "$CLI" colocate train --workloads $F/workloads.csv --colocations $F/colocations3.csv \
    --scaling $F/workload_scaling.csv --out "$T/c.psc" -q
expect 1 "$CLI" colocate select --model "$T/c.psc" --workloads $F/workloads.csv --scaling $F/workload_scaling.csv \
    --target alpha_batch2-inff --candidates beta_batch4-train
has "$T/err" "target 'alpha_batch2-inff' is not in $F/workloads.csv; did you mean 'alpha_batch2-inf'?"
expect 1 "$CLI" colocate select --model "$T/c.psc" --workloads $F/workloads.csv --scaling $F/workload_scaling.csv \
    --target alpha_batch2-inf --candidates beta_batch4-trian
has "$T/err" "candidate 'beta_batch4-trian' (gpu TESTGPU) is not in $F/workloads.csv; did you mean 'beta_batch4-train'?"

# check counts (model, batch) groups, and says so.
expect 0 "$CLI" check "$T/c/ops.csv"
has "$T/out" "rows, 3 (model, batch) groups"

# The report: GPU, source, seed and size in the header and under each figure.
expect 0 "$CLI" report --model "$T/m.psm" --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --experiments accuracy \
    --mlp-epochs 2 --threads 1 --out "$T/r.html" -q
R=$T/r.html
has "$R" "<h1>PairSight evaluation on A100-SXM4-40GB</h1>"
has "$R" "simulated on the twin (pairsight simulate; no GPU measured)"
has "$R" "seed 4, "
has "$R" "Every latency in this report is simulated by the twin, not measured on a GPU"
n_fig=$(grep -c '<svg' "$R")
n_cap=$(grep -c "<p class=src>A100-SXM4-40GB, twin, seed 4, " "$R")
[ "$n_cap" -ge 6 ] || fail "only $n_cap figure captions name the data ($n_fig figures)"
grep -q '>measured HP latency\|>measured (ns' "$R" && fail "simulated latencies are labelled measured"
has "$R" "simulated HP latency (log)"
has "$R" "(?) unknown, where the profile gives no class"
has "$R" ">slowdown</text>"
has "$R" "Pearson r with the target's slowdown"
has "$R" "PairSight's error per SM split"
has "$R" "PairSight's error per operator class"
has "$R" "Slowdown against the SM split, simulated and predicted"
# Ticks at round numbers: no label such as 1.63 or 3.26 on the error axes.
grep -o "text-anchor=end>[0-9.]*</text>" "$R" | sed 's/.*>\([0-9.]*\)<.*/\1/' | sort -u >"$T/ticks"
while read -r v; do
    case $v in *.*[0-9][0-9][0-9]*) fail "tick label $v is not a round number" ;; esac
done <"$T/ticks"
# Without campaign.json the report says the source is unknown, not "measured".
mkdir -p "$T/bare"
cp "$T/c/ops.csv" "$T/c/coexec.csv" "$T/bare/"
expect 0 "$CLI" report --model "$T/m.psm" --ops "$T/bare/ops.csv" --coexec "$T/bare/coexec.csv" \
    --experiments accuracy --mlp-epochs 2 --threads 1 --out "$T/r2.html" -q
has "$T/r2.html" "source unknown: no campaign.json beside the co-execution table"
finish test_first_hour_cli
