#!/bin/sh
# pairsight from outside its repository, as a new user embeds it: install to
# a temporary prefix; the shared library exports only the ps_* functions of
# pairsight.h; the man page renders; the C examples build and run against the
# build tree, the installed prefix via pkg-config (shared and static), via
# find_package(pairsight), and from a parent project with add_subdirectory.
# Usage: sh tests/test_embed.sh PAIRSIGHT (the CLI in its build folder)
set -u
CLI=${1:?usage: test_embed.sh PAIRSIGHT}
. tests/clitest.sh
B=$(cd "$(dirname "$CLI")" && pwd)
SRC=$(pwd)
P=$T/prefix
# Under scripts/test.sh --sanitize the library is instrumented: so are the
# programs built against it here.
SAN=""
[ "${PS_SANITIZED:-0}" = 1 ] && SAN="-fsanitize=address,undefined"

expect 0 cmake --install "$B" --prefix "$P"
for f in bin/pairsight include/pairsight.h include/pairsight_core.h include/pairsight_collect.h \
    include/pairsight_eval.h include/pairsight_colocate.h include/pairsight_overlap.h lib/libpairsight.a lib/libpairsight.so lib/libpairsight.so.0 \
    lib/pkgconfig/pairsight.pc lib/pkgconfig/pairsight-libdir.pc lib/pairsight/static/libpairsight.a \
    lib/cmake/pairsight/pairsightConfig.cmake \
    lib/cmake/pairsight/pairsightConfigVersion.cmake share/man/man1/pairsight.1 \
    share/bash-completion/completions/pairsight; do
    [ -e "$P/$f" ] || fail "install did not write $f"
done

# The CUDA module, where this build has one, goes where bin/pairsight looks.
if [ -e "$B/libpairsight_cuda.so" ]; then
    [ -e "$P/lib/pairsight/libpairsight_cuda.so" ] || fail "install did not write lib/pairsight/libpairsight_cuda.so"
fi

# The exported symbols: the functions of the header (each marked PS_API), nothing else.
readelf -d "$P/lib/libpairsight.so" | grep -q 'SONAME.*\[libpairsight.so.0\]' || fail "SONAME is not libpairsight.so.0"
nm -D --defined-only "$P/lib/libpairsight.so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' | LC_ALL=C sort >"$T/exported"
# Every function the header declares (comments and function-pointer types
# aside), so that a declaration without PS_API is caught too.
python3 -c '
import re, sys
s = re.sub(r"/\*.*?\*/", "", "".join(open(f).read() for f in sys.argv[1:]), flags=re.S)
names = set(re.findall(r"\b(ps_[a-z0-9_]+)\s*\(", s)) - set(re.findall(r"\(\s*\*\s*(ps_[a-z0-9_]+)\)", s))
print("\n".join(sorted(names)))' "$P"/include/pairsight*.h >"$T/declared" || fail "cannot list the header's functions"
grep -v '^ps_' "$T/exported" >"$T/extra" && fail "exports beyond ps_*: $(head -5 "$T/extra" | tr '\n' ' ')"
cmp -s "$T/exported" "$T/declared" || fail "exported != declared: $(diff "$T/declared" "$T/exported" | head -5 | tr '\n' ' ')"
echo "exported symbols: $(wc -l <"$T/exported") (all ps_*, every function of the pairsight*.h headers)"

# The man page renders and names every command; the completion parses.
if command -v man >/dev/null; then
    MANWIDTH=80 man -l "$P/share/man/man1/pairsight.1" >"$T/man" 2>"$T/manerr" || fail "man -l failed: $(cat "$T/manerr")"
    for c in $("$CLI" --help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p'); do
        grep -q "usage: pairsight $c" "$T/man" || fail "the man page lacks pairsight $c"
    done
else
    fail "man is not installed (scripts/setup.sh installs man-db)"
fi
bash -n "$P/share/bash-completion/completions/pairsight" || fail "the bash completion does not parse"
bash -c ". '$P/share/bash-completion/completions/pairsight'; COMP_WORDS=(pairsight mod); COMP_CWORD=1; _pairsight;
    echo \${COMPREPLY[*]}" >"$T/compl" 2>&1
has "$T/compl" "model"

# A model to run the examples with, from the installed CLI.
expect 0 "$P/bin/pairsight" simulate --gpu a100 --models resnet50,bert-base,mobilenetv2 --experiments 200 \
    --runs 1 --threads 1 --seed 3 --out "$T/c" -q
expect 0 "$P/bin/pairsight" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/m.psm" \
    --threads 1 --depths 4 --etas 0.3 --rounds 30 -q
run_examples() { # DIR WHAT
    expect 0 "$1/predict_one" "$T/m.psm" "$T/c/ops.csv"
    has "$T/out" "HP resnet50  [0, 16) on 32 TPCs:"
    cp "$T/out" "$T/one.$2"
    expect 0 "$1/rank_candidates" "$T/m.psm" "$T/c/ops.csv" 32 22 resnet50:8 bert-base:8 mobilenetv2:8 resnet50:8
    has "$T/out" "   3  "
    cmp -s "$T/one.$2" "$T/one.build" || fail "$2 example prints otherwise than the build tree's"
}

# 1. The build tree: the examples built with pairsight itself.
run_examples "$B/examples/c" build
# 2. The installed prefix through pkg-config, shared and static.
PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags --libs pairsight >"$T/pc" || fail "pkg-config pairsight failed"
has "$T/pc" "-lpairsight"
PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --static --libs pairsight >"$T/pcs" || fail "pkg-config --static failed"
has "$T/pcs" "-lxgboost"
mkdir -p "$T/pc_shared" "$T/pc_static"
expect 0 env PKG_CONFIG_PATH="$P/lib/pkgconfig" CFLAGS="-O2 -Wall $SAN" LDFLAGS="$SAN" make -s -C "$T/pc_shared" -f "$SRC/examples/c/Makefile" VPATH="$SRC/examples/c"
readelf -d "$T/pc_shared/predict_one" | grep -q 'NEEDED.*libpairsight.so.0' || fail "pkg-config build does not use libpairsight.so.0"
run_examples "$T/pc_shared" pkgconfig
expect 0 env PKG_CONFIG_PATH="$P/lib/pkgconfig" CFLAGS="-O2 -Wall $SAN" LDFLAGS="$SAN" make -s -C "$T/pc_static" -f "$SRC/examples/c/Makefile" VPATH="$SRC/examples/c" STATIC=1
readelf -d "$T/pc_static/predict_one" | grep -q 'libpairsight' && fail "static build still needs libpairsight.so"
run_examples "$T/pc_static" pkgconfig-static
# The README's one-line link with --static and nothing else: no
# libpairsight.so.0 needed at run time (it once linked the shared library).
mkdir -p "$T/pc_one"
# shellcheck disable=SC2046
expect 0 cc -std=c11 $SAN "$SRC/examples/c/predict_one.c" \
    $(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --static --libs pairsight) -o "$T/pc_one/predict_one"
readelf -d "$T/pc_one/predict_one" | grep -q 'libpairsight' && fail "pkg-config --static links libpairsight.so"
cp "$T/pc_static/rank_candidates" "$T/pc_one/"
run_examples "$T/pc_one" pkgconfig-oneline
# 3. find_package(pairsight) against the prefix.
expect 0 cmake -S examples/c -B "$T/fp" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN"
expect 0 cmake --build "$T/fp"
run_examples "$T/fp" find_package
# 4. add_subdirectory from a parent project (no tests, benches or CUDA of ours).
mkdir -p "$T/parent"
cat >"$T/parent/CMakeLists.txt" <<EOT
cmake_minimum_required(VERSION 3.18)
project(parent LANGUAGES C)
add_subdirectory("$SRC" pairsight)
add_executable(predict_one "$SRC/examples/c/predict_one.c")
target_link_libraries(predict_one PRIVATE pairsight::pairsight)
add_executable(rank_candidates "$SRC/examples/c/rank_candidates.c")
target_link_libraries(rank_candidates PRIVATE pairsight::pairsight_static)
EOT
# The parent compiles the whole library once more: the largest share of this
# test's time (43 of 263 CPU seconds of the suite went to this test). Without
# optimization (Debug) it compiles in about half the time, and through ccache, with
# this run's temporary folder as its base, a second run hits the cache.
launcher=""
if command -v ccache >/dev/null 2>&1; then
    launcher="-DCMAKE_C_COMPILER_LAUNCHER=ccache"
    CCACHE_BASEDIR=$T CCACHE_NOHASHDIR=1
    export CCACHE_BASEDIR CCACHE_NOHASHDIR
fi
expect 0 cmake -S "$T/parent" -B "$T/parent/b" -DPS_CUDA=OFF -DCMAKE_BUILD_TYPE=Debug $launcher
[ -e "$T/parent/b/pairsight/test_common" ] && fail "a parent project builds pairsight's tests"
expect 0 nice cmake --build "$T/parent/b" -j 2 --target predict_one rank_candidates
run_examples "$T/parent/b" add_subdirectory
finish test_embed
