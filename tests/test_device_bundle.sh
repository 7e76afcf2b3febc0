#!/bin/sh
# The device bundle (scripts/device_bundle.sh) runs with nothing of this
# system but glibc: in a chroot that holds glibc, a few tools and the bundle
# of the build under test, `run collect info --backend fake` works, and
# `collect info` fails, naming the library, once one library is taken out
# of the bundle (so the system's copies are indeed out of reach). The
# bundle stays within 40 MiB. test_device_validate runs device_validate.sh
# --quick through the same bundle.
CLI=${1:?usage: test_device_bundle.sh PAIRSIGHT}
. tests/clitest.sh
. tests/bundle_chroot.sh
BUILD=${PS_BUILD_DIR:-$(dirname "$CLI")}
bundle_host_only "$BUILD"
bundle_chroot "$T/root" "$BUILD"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "FAIL: making the chroot"; exit 1; }
has "$T/root/bundle.log" "(limit 40 MiB)"
[ -n "$BUNDLE_HOST_ONLY" ] || [ -f "$T/root/b/lib/pairsight/libpairsight_cuda.so" ] || fail "no CUDA module in the bundle"

expect 0 bundle_run "$T/root" /b/run collect info --backend fake --json
has "$T/out" '"gpu":"FAKE-GPU"'
expect 0 bundle_run "$T/root" /b/run --version
# The wrapper runs other commands with the bundle first on PATH.
expect 0 bundle_run "$T/root" /b/run sh -c 'pairsight simulate --gpu h100 --experiments 5 --runs 1 --out /tmp/s -q'
[ -s "$T/root/tmp/s/coexec.csv" ] || fail "simulate through the wrapper wrote no coexec.csv"
# The CUDA backend in the chroot: no driver, a message, no crash.
if [ -z "$BUNDLE_HOST_ONLY" ]; then
    expect 1 bundle_run "$T/root" /b/run collect info
    has "$T/err" "pairsight: collect: cuda: "
fi

# A library taken out: the system's copy is out of reach, so it fails.
mv "$T/root/b/lib/libcjson.so.1" "$T/root/cjson.keep"
expect 127 bundle_run "$T/root" /b/run collect info --backend fake
has "$T/err" "libcjson.so.1"
mv "$T/root/cjson.keep" "$T/root/b/lib/libcjson.so.1"
mv "$T/root/b/lib/libblas.so.3" "$T/root/blas.keep"
expect 127 bundle_run "$T/root" /b/run collect info --backend fake
has "$T/err" "libblas.so.3"
finish test_device_bundle
