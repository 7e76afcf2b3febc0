#!/bin/sh
# The collector, packed to run on a GPU machine that has the NVIDIA driver,
# CUDA and PyTorch's NVIDIA wheels (cuBLAS, cuDNN, CUPTI) but none of the
# Debian libraries the CLI links (docs/collector.md, "On a GPU machine").
#
# usage: scripts/device_bundle.sh [--out DIR] [--build DIR] [--no-build] [--host-only] [--max-mib N]
#   --out DIR     the bundle (default device-bundle/, ignored by git); emptied first
#   --build DIR   the CMake build folder to configure and build with PS_CUDA=ON
#                 (default build-cuda/, the one device_validate.sh uses)
#   --no-build    take the programs from --build as they are (the tests reuse theirs)
#   --host-only   no CUDA module (a build without PS_CUDA): the fake backend only
#   --max-mib N   fail when the bundle is larger (default 40)
#
# DIR/bin/pairsight         the CLI (stripped)
# DIR/lib/libpairsight.so.0 the library (Python's ctypes loads it: PAIRSIGHT_LIBRARY)
# DIR/lib/pairsight/libpairsight_cuda.so  the CUDA module (found from bin/ as ../lib/pairsight/)
# DIR/lib/*.so.*            every shared library those need, followed transitively,
#                           except glibc's own, the driver's and CUDA's, which the GPU machine has
# DIR/run                   the wrapper: DIR/run collect info, DIR/run sh scripts/device_validate.sh ...
# DIR/MANIFEST              what was copied from where, and the size
#
# OpenBLAS (36 MB with every CPU's kernels) does not fit in 40 MiB: the bundle
# carries the reference BLAS and LAPACK (libblas3, liblapack3) behind a small
# libopenblas.so.0 that needs them, so that the five routines libpairsight calls
# (cblas_sgemm, cblas_dgemv, cblas_dsyrk, dgelsd_, dposv_) resolve there.
set -eu

OUT=device-bundle
BUILD=build-cuda
NO_BUILD=0
HOST_ONLY=0
MAX_MIB=40
while [ $# -gt 0 ]; do
    case "$1" in
    --out) OUT=${2:?--out needs a folder}; shift 2 ;;
    --build) BUILD=${2:?--build needs a folder}; shift 2 ;;
    --no-build) NO_BUILD=1; shift ;;
    --host-only) HOST_ONLY=1; shift ;;
    --max-mib) MAX_MIB=${2:?--max-mib needs a number}; shift 2 ;;
    -h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "device_bundle: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
die() { echo "device_bundle: $*" >&2; exit 1; }
for t in ldd objdump strip cc; do command -v $t >/dev/null || die "needs $t (binutils, gcc)"; done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ "$NO_BUILD" = 0 ]; then
    cuda=ON
    [ "$HOST_ONLY" = 1 ] && cuda=OFF
    # RelWithDebInfo, as device_validate.sh builds build-cuda/ (stripped here).
    nice cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPS_CUDA=$cuda >/dev/null ||
        die "cmake failed (PS_CUDA=$cuda: the CUDA toolkit, /usr/local/cuda/bin/nvcc, is needed for the module)"
    targets="--target pairsight_cli --target pairsight_shared"
    [ "$cuda" = ON ] && targets="$targets --target pairsight_cuda"
    # shellcheck disable=SC2086
    nice cmake --build "$BUILD" -j"$(nproc)" $targets >/dev/null || die "the build failed (cmake --build $BUILD)"
fi
CLI=$BUILD/pairsight
LIB=$BUILD/libpairsight.so.0
MOD=$BUILD/libpairsight_cuda.so
[ -x "$CLI" ] || die "no $CLI (build first, or drop --no-build)"
[ -f "$LIB" ] || die "no $LIB"
if [ "$HOST_ONLY" = 0 ] && [ ! -f "$MOD" ]; then
    die "no $MOD: $BUILD was configured without PS_CUDA (reconfigure with -DPS_CUDA=ON, or --host-only)"
fi

case "$OUT" in /* | ./* | ../*) ;; *) OUT=./$OUT ;; esac
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib/pairsight"
MAN=$OUT/MANIFEST
: > "$MAN"

# Provided by the GPU machine: glibc's libraries (and the loader), the
# driver's (libcuda, libnvidia-*), CUDA's runtime and math libraries (the
# toolkit's, or PyTorch's nvidia wheels: found by the run wrapper).
provided() {
    case "$1" in
    ld-linux*.so* | linux-vdso.so* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | \
        librt.so.* | libutil.so.* | libresolv.so.* | libanl.so.* | libnss_*.so.* | libBrokenLocale.so.* | \
        libthread_db.so.* | libc_malloc_debug.so.* | libmemusage.so.* | libpcprofile.so.* | libnsl.so.*) return 0 ;;
    libcuda.so* | libnvidia-*.so* | libnvcuvid.so* | libnvoptix.so*) return 0 ;;
    libcudart.so* | libcublas*.so* | libcudnn*.so* | libcupti.so* | libnvrtc*.so* | libnvJitLink.so* | \
        libnvperf_*.so* | libcufft*.so* | libcurand.so* | libcusparse*.so* | libcusolver*.so* | libnccl.so*) return 0 ;;
    esac
    return 1
}

copy_lib() { # SONAME PATH
    [ -e "$OUT/lib/$1" ] && return 0
    cp -L "$2" "$OUT/lib/$1"
    chmod u+w "$OUT/lib/$1"
    strip --strip-unneeded "$OUT/lib/$1" 2>/dev/null || true
    echo "lib/$1 <- $(readlink -f "$2")" >> "$MAN"
}

# The reference BLAS/LAPACK in place of OpenBLAS (see the top): sets BLAS_LIBS.
blas_shim() {
    multi=$(dirname "$(ldd "$CLI" | awk '$1 == "libc.so.6" { print $3 }')")
    blas=$multi/blas/libblas.so.3
    lapack=$multi/lapack/liblapack.so.3
    [ -e "$blas" ] && [ -e "$lapack" ] ||
        die "the reference BLAS/LAPACK ($blas, $lapack) are missing: apt-get install libblas3 liblapack3 (scripts/setup.sh)"
    tmp=$(mktemp -d)
    echo "/* libopenblas.so.0 of the device bundle: the reference BLAS and LAPACK. */" > "$tmp/shim.c"
    cc -shared -o "$tmp/libopenblas.so.0" -Wl,-soname,libopenblas.so.0 -Wl,--no-as-needed "$tmp/shim.c" \
        "$lapack" "$blas" || die "cannot link the BLAS shim"
    copy_lib libopenblas.so.0 "$tmp/libopenblas.so.0"
    sed -i "s|<- $tmp/libopenblas.so.0|<- a shim needing liblapack.so.3 and libblas.so.3|" "$MAN"
    rm -rf "$tmp"
    BLAS_LIBS="$blas $lapack"
}

# Every library the given objects need (ldd follows them transitively),
# as "SONAME PATH"; a library ldd cannot find here is an error.
needs() {
    ldd "$@" 2>/dev/null | awk '$2 == "=>" { print $1, $3 }' | sort -u
}
bundle_deps() {
    needs "$@" | while read -r name path; do
        provided "$name" && continue
        [ "$path" = "not" ] && die "$name: not found here (ldd $*)"
        # The reference BLAS/LAPACK are copied by blas_shim (the system's
        # libblas.so.3 may be OpenBLAS's, through Debian's alternatives).
        case "$name" in libblas.so.3 | liblapack.so.3) continue ;; esac
        if [ "$name" = libopenblas.so.0 ]; then
            [ -e "$OUT/lib/$name" ] && continue
            blas_shim
            for p in $BLAS_LIBS; do
                copy_lib "$(basename "$p")" "$p"
                bundle_deps "$p"
            done
            continue
        fi
        copy_lib "$name" "$path"
    done
}

cp "$CLI" "$OUT/bin/pairsight"
cp -L "$LIB" "$OUT/lib/libpairsight.so.0"
strip --strip-unneeded "$OUT/bin/pairsight" "$OUT/lib/libpairsight.so.0"
echo "bin/pairsight <- $CLI" >> "$MAN"
echo "lib/libpairsight.so.0 <- $(readlink -f "$LIB")" >> "$MAN"
objs="$OUT/bin/pairsight $OUT/lib/libpairsight.so.0"
if [ -f "$MOD" ] && [ "$HOST_ONLY" = 0 ]; then
    cp "$MOD" "$OUT/lib/pairsight/libpairsight_cuda.so"
    strip --strip-unneeded "$OUT/lib/pairsight/libpairsight_cuda.so"
    echo "lib/pairsight/libpairsight_cuda.so <- $MOD" >> "$MAN"
    objs="$objs $OUT/lib/pairsight/libpairsight_cuda.so"
fi
# shellcheck disable=SC2086
bundle_deps $objs
# The libraries copied need others in turn (ldd above resolved them
# through the system's copies: check that the bundle alone closes).
for f in "$OUT"/lib/*.so*; do
    objdump -p "$f" | awk '/NEEDED/ { print $2 }'
done | sort -u | while read -r n; do
    provided "$n" || [ -e "$OUT/lib/$n" ] || die "$n is needed by the bundle but not in it"
done

cat > "$OUT/run" <<'WRAP'
#!/bin/sh
# The bundle's wrapper (scripts/device_bundle.sh): run the bundled pairsight,
# or any command (a script, python) with it first on PATH. CUDA's libraries
# come from the machine: $PS_CUDA_LIBS (a colon-separated list of folders),
# else PyTorch's nvidia wheels (site-packages/nvidia/*/lib of the python3
# on PATH: nvidia/cu13/lib holds CUDA 13's, nvidia/cudnn/lib cuDNN), then
# the toolkit (/usr/local/cuda/lib64).
#   DIR/run collect info           DIR/run sh scripts/device_validate.sh --no-build
#   DIR/run python3 -m pairsight.profile_tpcs ...
B=$(cd "$(dirname "$0")" && pwd)
cuda=${PS_CUDA_LIBS:-}
if [ -z "$cuda" ] && command -v python3 >/dev/null 2>&1; then
    cuda=$(python3 -c 'import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except Exception:
    import site
    roots = [os.path.join(p, "nvidia") for p in site.getsitepackages() + [site.getusersitepackages()]]
print(":".join(sorted(d for r in roots for l in ("lib", "lib64") for d in glob.glob(os.path.join(r, "*", l)))))' \
        2>/dev/null || true)
fi
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/extras/CUPTI/lib64; do
    [ -d "$d" ] && cuda=${cuda:+$cuda:}$d
done
export LD_LIBRARY_PATH="$B/lib${cuda:+:$cuda}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$B/bin:$PATH"
export PAIRSIGHT_CLI="$B/bin/pairsight" PAIRSIGHT_LIBRARY="$B/lib/libpairsight.so.0"
case " ${1:--} " in
" -"* | @COMMANDS@) exec "$B/bin/pairsight" "$@" ;;
esac
exec "$@"
WRAP
# The CLI's commands, from its --help, go to it; anything else runs as given.
cmds=$("$OUT/bin/pairsight" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' |
    sed 's/.*/" & "/' | paste -sd '|' | sed 's/|/ | /g; s/" help "//')
[ -n "$cmds" ] || die "cannot read the commands from pairsight --help"
sed -i "s/@COMMANDS@/$cmds | \" help \"/" "$OUT/run"
chmod +x "$OUT/run"

kib=$(du -sk "$OUT" | cut -f1)
echo "size: $kib KiB" >> "$MAN"
[ "$kib" -le $((MAX_MIB * 1024)) ] || die "$OUT is $kib KiB, over --max-mib $MAX_MIB"
echo "device_bundle: $OUT: $(find "$OUT/lib" -name '*.so*' | wc -l) libraries, $kib KiB (limit $MAX_MIB MiB)"
