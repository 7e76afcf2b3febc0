#!/bin/sh
# Builds each libFuzzer target with clang (-fsanitize=fuzzer,address,undefined)
# and runs it for SECONDS, seeded with the fixtures under tests/data. Corpora
# grow in fuzz/corpus-<target>/ (ignored by git); crashes land in
# build-fuzz/artifacts/. Exit status 1 when any target found a crash.
# usage: fuzz/run.sh SECONDS [TARGET...]   (targets: csv tables ncu torch)
set -eu
cd "$(dirname "$0")/.."
secs=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
targets=${*:-csv tables ncu torch}
cc=${CC_FUZZ:-clang}
command -v "$cc" >/dev/null || { echo "fuzz/run.sh: $cc not found (apt-get install clang)" >&2; exit 2; }
out=build-fuzz
mkdir -p "$out/artifacts"
# The parsers need only the profile folder and the common helpers.
srcs=$(ls src/profile/*.c src/common/*.c)
status=0
for t in $targets; do
    bin=$out/fuzz_$t
    # shellcheck disable=SC2086
    "$cc" -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -g -O1 \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -Iinclude -Isrc fuzz/fuzz_$t.c $srcs -lcjson -lz -lm -o "$bin"
    corpus=fuzz/corpus-$t
    mkdir -p "$corpus"
    case $t in
        csv|tables) cp tests/data/*.csv "$corpus"/ ;;
        ncu) cp tests/data/ncu_*.csv "$corpus"/ ;;
        torch) cp tests/data/*.json tests/data/*.json.gz "$corpus"/ ;;
    esac
    echo "== fuzz_$t for ${secs}s"
    if ! "$bin" -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$out/artifacts/$t-" -print_final_stats=1 "$corpus" 2>"$out/fuzz_$t.log"; then
        echo "fuzz_$t: FOUND A CRASH (see $out/fuzz_$t.log, $out/artifacts/)"
        status=1
    fi
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)|^#[0-9]+ *DONE' "$out/fuzz_$t.log" || true
done
exit $status
