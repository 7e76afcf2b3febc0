#!/bin/sh
# Every CUDA, cuBLAS, cuDNN, CUPTI and NVML call of the collector's CUDA
# sources has its result checked: a statement that is nothing but such a
# call (its result dropped) is an error, unless it is cast to (void) - the
# cleanup paths' way of saying the result is discarded on purpose. The CUDA
# sources compile only with PS_CUDA, but this check reads them in any build.
# A second pass checks that the lint can fail, on a snippet that drops one.
P=${1:?usage: test_collect_checked.sh PAIRSIGHT}
T=$(mktemp -d /tmp/ps_test_checked.XXXXXX)
trap 'rm -rf "$T"' EXIT

lint() {
    # A call at the start of a statement: the previous code line ends a
    # statement or opens a block, or is an if/for/while/else head.
    awk '
        function code(s) { sub(/\/\/.*$/, "", s); sub(/\/\*.*\*\//, "", s); gsub(/[ \t]+$/, "", s); return s }
        {
            line = code($0)
            if (line ~ /^[ \t]*((cuda|cu|cublas|cublasLt|cudnn|cupti|nvml)[A-Z][A-Za-z0-9_]*|b->drv\.[A-Za-z]+|n->[A-Z][A-Za-z]+)[ \t]*\(/ &&
                (prev ~ /[;{}]$/ || prev ~ /\)$/ || prev ~ /else$/ || prev ~ /:$/ || prev == ""))
                { printf("%s:%d: result of %s dropped\n", FILENAME, FNR, line); bad++ }
            if (line ~ /[^ \t]/) prev = line
        }
        END { exit bad ? 1 : 0 }' "$@"
}

lint src/collect/*_cuda.c src/collect/*_cuda.cpp src/collect/*.cu > "$T/out" 2>&1 || {
    cat "$T/out"; echo "FAIL: unchecked CUDA results"; exit 1; }
n=$(grep -c '' src/collect/device_cuda.c)
[ "$n" -gt 500 ] || { echo "FAIL: device_cuda.c not read"; exit 1; }

cat > "$T/bad.c" <<'SNIP'
static int f(cudaEvent_t e, cudaStream_t s)
{
    (void)cudaEventDestroy(e);
    if (s)
        cudaEventRecord(e, s);
    return 0;
}
SNIP
if lint "$T/bad.c" > "$T/out2" 2>&1; then
    echo "FAIL: the lint missed a dropped result"; exit 1
fi
grep -q "bad.c:5: result of" "$T/out2" || { cat "$T/out2"; echo "FAIL: wrong line"; exit 1; }
echo ok
