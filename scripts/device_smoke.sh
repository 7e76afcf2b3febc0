#!/bin/sh
# Device smoke test of the collector, for a machine with an NVIDIA GPU:
# build with PS_CUDA, profile ResNet-50 (and BERT-base, its co-runner) at
# batch 8 on five TPC counts, read ResNet-50's counters, run 20
# co-executions of ResNet-50 beside BERT-base (30 runs each), export
# ops.csv and coexec.csv and check them; all in under 5 minutes.
#
# usage: scripts/device_smoke.sh [--backend cuda|fake] [--cli PATH] [--no-build]
#                                [--out DIR] [--limit SECONDS]
#   --backend NAME  cuda, or fake to run every step without a GPU (default cuda)
#   --cli PATH      a pairsight binary to use (implies --no-build)
#   --no-build      do not configure and build build-cuda/
#   --out DIR       where the database and the CSV files go (default build-cuda/smoke)
#   --limit N       fail when the steps after the build take longer (default 300)
set -eu

NAME=device_smoke
OUT=build-cuda/smoke
LIMIT=300
. "$(dirname "$0")/device_lib.sh"
device_options "$@"
device_build

mkdir -p "$OUT"
DB="$OUT/smoke.db"
rm -f "$DB" "$DB-wal" "$DB-shm"
device_clock

step "device"
"$CLI" collect info --backend "$BACKEND"
# Five TPC counts spread over what the GPU's green contexts allow.
TPCS=$("$CLI" collect info --backend "$BACKEND" --json |
    sed -n 's/.*"valid_tpcs": *\[\([0-9, ]*\)\].*/\1/p' | tr -d ' ' | tr ',' '\n' |
    awk '{ v[NR] = $1 } END { n = NR; split(int(n/8)+1 " " int(n/4)+1 " " int(n/2)+1 " " int(3*n/4)+1 " " n, k, " ");
           s = ""; for (i = 1; i <= 5; i++) if (!(k[i] in seen)) { seen[k[i]] = 1; s = s (s ? "," : "") v[k[i]] } print s }')
echo "TPC counts: $TPCS"

step "profile resnet50 batch 8"
"$CLI" collect profile --backend "$BACKEND" --model resnet50 --batch 8 --tpcs "$TPCS" --db "$DB"
step "profile bert-base batch 8 (the co-runner)"
"$CLI" collect profile --backend "$BACKEND" --model bert-base --batch 8 --tpcs "$TPCS" --db "$DB"
step "counters resnet50 (CUPTI range profiler)"
if ! "$CLI" collect counters --backend "$BACKEND" --model resnet50 --batch 8 --db "$DB"; then
    echo "device_smoke: counters unavailable (profiling permission?); continuing without them"
fi
step "20 co-executions resnet50 beside bert-base"
"$CLI" collect coexec --backend "$BACKEND" --hp resnet50:8 --lp bert-base:8 --tpcs "$TPCS" \
    --experiments 20 --runs 30 --db "$DB"
step "export and check"
"$CLI" collect export --db "$DB" --ops "$OUT/ops.csv" --coexec "$OUT/coexec.csv"
"$CLI" check "$OUT/ops.csv" "$OUT/coexec.csv"
"$CLI" collect status --db "$DB"

# Mean HP slowdown against the standalone sum of the profiled operators.
awk -F, 'NR == FNR { if (FNR > 1) d[$2 "," $3 "," $4 "," $6] = $7; next }
         FNR > 1 { s = 0; for (i = $5; i < $5 + $6; i++) s += d[$3 "," $4 "," i "," $11];
                   if (s > 0) { r += $13 / s; n++ } }
         END { if (n) printf("mean HP slowdown over %d runs: %.3f\n", n, r / n) }' \
    "$OUT/ops.csv" "$OUT/coexec.csv"

device_finish
