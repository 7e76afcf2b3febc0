#!/bin/sh
# The main job on built-in data: simulate an A100 profiling campaign, train
# the PairSight segment model, evaluate it against every baseline and write
# the report. Installs missing Debian packages and builds first.
# Usage: scripts/run.sh [OUTDIR]   (default: out/)
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
out=${1:-out}
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" >/dev/null
mkdir -p "$out"
ps=build/pairsight
echo "== simulate: A100 campaign of six models -> $out/" >&2
$ps simulate --gpu a100 --models resnet50,resnet101,mobilenetv2,bert-base,llama-3.2-1b,llama-3.2-3b \
    --experiments 4000 --runs 5 --seed 1 --out "$out"
$ps check "$out/ops.csv" "$out/coexec.csv"
