#!/bin/sh
# Builds the libFuzzer targets with clang (-fsanitize=fuzzer,address,undefined;
# a CMake build with PS_FUZZ=ON in build-fuzz/) and runs each for SECONDS, one
# after the other, seeded with real files: the fixtures under tests/data, and
# a small simulated campaign with a segment model and one co-location model
# of each kind made here by the fuzz build's own CLI. Corpora grow in
# fuzz/corpus-<target>/ (ignored by git); crashes land in build-fuzz/artifacts/.
# Exit status 1 when any target found a crash.
# usage: fuzz/run.sh SECONDS [TARGET...]
#   targets: csv tables ncu torch forest psm coloc queries explain serve
set -eu
cd "$(dirname "$0")/.."
secs=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
all="csv tables ncu torch forest psm coloc queries explain serve"
targets=${*:-$all}
cc=${CC_FUZZ:-clang}
command -v "$cc" >/dev/null || { echo "fuzz/run.sh: $cc not found (apt-get install clang)" >&2; exit 2; }
out=build-fuzz
mkdir -p "$out/artifacts"
CC=$cc cmake -S . -B "$out" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DPS_FUZZ=ON \
    -DPS_CUDA=OFF >/dev/null
bins=""
for t in $targets; do bins="$bins fuzz_$t"; done
# shellcheck disable=SC2086
cmake --build "$out" -j "${FUZZ_JOBS:-2}" --target pairsight_cli $bins >"$out/build.log" 2>&1 ||
    { cat "$out/build.log"; exit 2; }

# Seeds from real files, made once.
seeds=$out/seeds
if [ ! -f "$seeds/done" ]; then
    rm -rf "$seeds"
    mkdir -p "$seeds/forest" "$seeds/psm" "$seeds/coloc" "$seeds/queries" "$seeds/explain"
    export ASAN_OPTIONS=detect_leaks=0
    ps=$out/pairsight
    $ps simulate --gpu a100 --experiments 30 --runs 2 --threads 1 --seed 1 --out "$seeds/camp" -q
    $ps train --ops "$seeds/camp/ops.csv" --coexec "$seeds/camp/coexec.csv" --out "$seeds/psm/model.psm" \
        --threads 1 --depths 3 --etas 0.3 --rounds 8 -q
    F=tests/data/colocate
    for k in kace_lr kace_rf kace_mlp xu_rf ratio mps; do
        $ps colocate train --workloads $F/workloads.csv --scaling $F/workload_scaling.csv \
            --colocations $F/colocations3.csv --kind $k --trees 3 --epochs 2 --rounds 5 --out "$seeds/coloc/$k.psc" -q
    done
    awk -F, 'BEGIN { OFS = "," } NR <= 12 { print $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }' \
        "$seeds/camp/coexec.csv" >"$seeds/queries/q.csv"
    awk -F, 'BEGIN { OFS = "," } NR <= 3 { print $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }' \
        "$seeds/camp/coexec.csv" >"$seeds/queries/q_nogpu.csv"
    awk -F, 'NR > 1 && NR <= 6 { printf "hp_model=%s,hp_batch=%s,hp_start=%s,hp_len=%s,lp_model=%s,lp_batch=%s,lp_start=%s,lp_len=%s,hp_tpcs=%s,lp_tpcs=%s\n",
        $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 > (d "/e" NR ".txt") }' d="$seeds/explain" "$seeds/camp/coexec.csv"
    /usr/bin/python3 - "$seeds/forest" <<'EOF'
import sys
import numpy as np
import xgboost as xgb
rng = np.random.default_rng(0)
X = rng.random((200, 5))
X[rng.random((200, 5)) < 0.1] = np.nan
y = 2 * np.nan_to_num(X[:, 0]) + rng.random(200)
for depth, rounds in [(1, 1), (2, 3), (3, 4)]:
    b = xgb.train({"max_depth": depth, "eta": 0.3, "nthread": 1}, xgb.DMatrix(X, y), rounds)
    b.save_model(f"{sys.argv[1]}/d{depth}_r{rounds}.json")
EOF
    touch "$seeds/done"
fi
export PS_FUZZ_MODEL=$seeds/psm/model.psm PS_FUZZ_OPS=$seeds/camp/ops.csv
export PS_FUZZ_COLOC=$seeds/coloc/ratio.psc PS_FUZZ_WORKLOADS=tests/data/colocate/workloads.csv

status=0
for t in $targets; do
    bin=$out/fuzz_$t
    corpus=fuzz/corpus-$t
    mkdir -p "$corpus"
    maxlen=8192
    case $t in
        csv|tables) cp tests/data/*.csv "$corpus"/ ;;
        ncu) cp tests/data/ncu_*.csv "$corpus"/ ;;
        torch) cp tests/data/*.json tests/data/*.json.gz "$corpus"/ ;;
        forest) cp "$seeds"/forest/* "$corpus"/; maxlen=65536 ;;
        psm) cp "$seeds"/psm/* "$corpus"/; maxlen=65536 ;;
        coloc) cp "$seeds"/coloc/* "$corpus"/; maxlen=200000 ;;
        queries) cp "$seeds"/queries/* "$corpus"/ ;;
        explain) cp "$seeds"/explain/* "$corpus"/ ;;
        serve) cp tests/data/serve/fuzz_*.bin "$corpus"/ ;;
    esac
    echo "== fuzz_$t for ${secs}s"
    if ! ASAN_OPTIONS=detect_leaks=1 "$bin" -max_total_time="$secs" -max_len=$maxlen -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix="$out/artifacts/$t-" -print_final_stats=1 "$corpus" \
        2>"$out/fuzz_$t.log"; then
        echo "fuzz_$t: FOUND A CRASH (see $out/fuzz_$t.log, $out/artifacts/)"
        status=1
    fi
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)|^#[0-9]+ *DONE' "$out/fuzz_$t.log" || true
done
exit $status
