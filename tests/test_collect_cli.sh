#!/bin/sh
# pairsight collect as a user drives it, on the fake backend (a simulated
# GPU): usage, a campaign killed with SIGKILL and resumed by the same
# command, export, and the check of what was exported. The device actions
# on the real backend must fail cleanly where there is no GPU.
P=${1:?usage: test_collect_cli.sh PAIRSIGHT}
T=$(mktemp -d /tmp/ps_test_collect_sh.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$P" collect --help > "$T/help" || fail "--help exit"
for f in --db --backend --device --model --batch --seq-len --tpcs --warmup --runs --hp --lp \
         --experiments --seg-len --seed --ops --coexec --file --fake-delay-us --json -q \
         --ncu --shares --jobs --seconds --scaling --workloads --colocations --id; do
    grep -q -- "$f" "$T/help" || fail "--help lacks $f"
done
"$P" collect > /dev/null 2>&1; [ $? -eq 2 ] || fail "no action: want exit 2"
"$P" collect profile --db 2> "$T/err"; [ $? -eq 2 ] || fail "--db without a value: want exit 2"
grep -qxF "pairsight: collect: --db needs a value (see pairsight collect --help)" "$T/err" || fail "message: $(cat "$T/err")"
for tail in "--bogus" "--bogus 1"; do
    # shellcheck disable=SC2086
    "$P" collect profile $tail 2> "$T/err"; [ $? -eq 2 ] || fail "collect $tail: want exit 2"
    grep -qxF "pairsight: collect: unknown option '--bogus' (see pairsight collect --help)" "$T/err" ||
        fail "message: $(cat "$T/err")"
done
"$P" collect profile --backend fake --db "$T/x.db" 2> "$T/err"; [ $? -eq 2 ] || fail "profile without --model"
grep -q "^pairsight: collect: profile needs --model" "$T/err" || fail "message: $(cat "$T/err")"
"$P" collect coexec --hp resnet50 --lp bert-base:8 > /dev/null 2>&1; [ $? -eq 2 ] || fail "--hp without batch"
"$P" collect profile --backend fake --model vgg16 --db "$T/x.db" 2> "$T/err"; [ $? -eq 1 ] || fail "unknown model"
grep -q "unknown model 'vgg16'" "$T/err" || fail "message: $(cat "$T/err")"
"$P" collect profile --backend fake --model resnet50 --tpcs 80 --db "$T/x.db" 2> "$T/err"; [ $? -eq 1 ] || fail "too many TPCs"
# The extra kernel of simulate's resnet50 is the fc's bias copy, just before
# its GEMM (docs/collector.md, "Operators and kernels").
"$P" simulate --gpu a100 --models resnet50,bert-base --experiments 2 --runs 1 --out "$T/cnt" -q || fail "simulate"
awk -F, '$2=="resnet50" && $6==54 {print $5}' "$T/cnt/ops.csv" | tail -n 2 | head -n 1 |
    grep -qx 'void at::native::elementwise_kernel' || fail "the kernel before the fc's GEMM is not the bias copy"

# The operator lists print and read back.
"$P" collect ops --model llama-3.2-1b --batch 2 --seq-len 64 > "$T/l.ops" || fail "ops"
[ "$(grep -c '^gemm' "$T/l.ops")" -eq 113 ] || fail "llama-3.2-1b has 7 GEMMs a layer + lm_head"
"$P" collect ops --file "$T/l.ops" --json | grep -q '"ops":243' || fail "ops --file"
# A built-in model's list against the kernels simulate's ops.csv numbers: the
# difference is explained on stderr, the list on stdout stays whole.
"$P" collect ops --model resnet50 >"$T/r50.ops" 2>"$T/r50.err" || fail "ops resnet50"
grep -q '^# model=resnet50 batch=8 seq_len=0 ops=174$' "$T/r50.ops" || fail "ops resnet50: $(head -2 "$T/r50.ops")"
grep -qF "note: resnet50 is 174 operators as the collector launches them; simulate's ops.csv numbers 175 kernels (op 0..174)" \
    "$T/r50.err" || fail "ops resnet50 does not explain 174 against 175: $(cat "$T/r50.err")"
"$P" simulate -q --pairs resnet50:8/mobilenetv2:8 --experiments 1 --runs 1 --out "$T/sim1" || fail "simulate"
[ "$(awk -F, 'NR > 1 && $2 == "resnet50" { print $4 }' "$T/sim1/ops.csv" | sort -un | wc -l)" -eq 175 ] ||
    fail "simulate's resnet50 is not 175 kernels"

# Real backend: built without CUDA or no GPU here -> exit 1 with a message.
if ! "$P" collect info > /dev/null 2> "$T/err"; then
    grep -q "^pairsight: collect: " "$T/err" || fail "no-GPU message: $(cat "$T/err")"
fi

# The CLI links no CUDA library; the device backend is a module it loads.
if command -v ldd > /dev/null 2>&1; then
    ldd "$P" > "$T/ldd" 2>&1 || fail "ldd $P"
    ! grep -E "libcu(blas|blasLt|dnn|pti|da|dart)|libnvperf" "$T/ldd" || fail "pairsight links CUDA"
fi
M="$(dirname "$P")/libpairsight_cuda.so"
PAIRSIGHT_CUDA_MODULE="$T/none.so" "$P" collect info 2> "$T/err"; [ $? -eq 1 ] || fail "missing module: exit 1"
grep -q "^pairsight: collect: cuda: no CUDA module at PAIRSIGHT_CUDA_MODULE=$T/none.so" "$T/err" ||
    fail "missing-module message: $(cat "$T/err")"
if [ -f "$M" ]; then
    # The module with a CUDA library that is not there (its name changed in
    # a copy): the message names the library.
    sed 's/libcudnn\.so\.9/libcudnX.so.9/g' "$M" > "$T/libbad.so"
    PAIRSIGHT_CUDA_MODULE="$T/libbad.so" "$P" collect profile --model resnet50 --db "$T/m.db" 2> "$T/err"
    [ $? -eq 1 ] || fail "module without cuDNN: exit 1"
    grep -q "cannot load the CUDA module $T/libbad.so: libcudnX.so.9: cannot open shared object" "$T/err" ||
        fail "missing-library message: $(cat "$T/err")"
    # Copied away from the module, the CLI says where it looked.
    cp "$P" "$T/pairsight"
    "$T/pairsight" collect info 2> "$T/err"; [ $? -eq 1 ] || fail "CLI without module: exit 1"
    grep -q "no CUDA module: libpairsight_cuda.so is neither at $T/libpairsight_cuda.so" "$T/err" ||
        fail "module-not-found message: $(cat "$T/err")"
    "$T/pairsight" --version > /dev/null || fail "--version without the module"
fi

# A campaign killed mid-way resumes where it stopped.
DB="$T/c.db"
"$P" collect profile --backend fake --model resnet50 --batch 2 --tpcs 8,20,46 --db "$DB" -q || fail profile
"$P" collect profile --backend fake --model bert-base --batch 2 --tpcs 8,20,46 --db "$DB" -q || fail profile
"$P" collect coexec --backend fake --hp resnet50:2 --lp bert-base:2 --tpcs 8,20,46 \
    --experiments 40 --runs 3 --fake-delay-us 100000 --db "$DB" -q > /dev/null &
pid=$!
# Kill it once a few experiments are in (6 profile tasks came before).
i=0
while [ $i -lt 200 ]; do
    done_=$("$P" collect status --db "$DB" --json 2>/dev/null | sed -n 's/.*"tasks_done":\([0-9]*\).*/\1/p')
    [ "${done_:-0}" -ge 12 ] && break
    sleep 0.05
    i=$((i + 1))
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
"$P" collect status --db "$DB" --json > "$T/s1" || fail status
grep -q '"tasks":46' "$T/s1" || fail "all 46 tasks planned before the kill: $(cat "$T/s1")"
grep -q '"tasks_done":46' "$T/s1" && fail "the kill came too late to test anything: $(cat "$T/s1")"
"$P" collect coexec --backend fake --hp resnet50:2 --lp bert-base:2 --tpcs 8,20,46 \
    --experiments 40 --runs 3 --db "$DB" -q --json > "$T/s2" || fail resume
grep -q '"tasks_done":46' "$T/s2" || fail "resume: $(cat "$T/s2")"
grep -q '"coexec_rows":120' "$T/s2" || fail "resume rows: $(cat "$T/s2")"

# From here to the real backend's turn, no module can be found: export,
# status, check, counters --ncu and the fake backend must not need one.
export PAIRSIGHT_CUDA_MODULE="$T/none.so"
"$P" collect status --db "$DB" > /dev/null || fail "status without the CUDA module"
"$P" collect export --db "$DB" --ops "$T/ops.csv" --coexec "$T/coexec.csv" -q || fail export
"$P" check "$T/ops.csv" "$T/coexec.csv" > "$T/check" || fail "check: $(cat "$T/check")"
grep -q "coexec, 120 rows" "$T/check" || fail "check: $(cat "$T/check")"
[ "$(grep -c ',sim$' "$T/coexec.csv")" -eq 120 ] || fail "mechanism column"
# Another seq_len in the same database is refused.
"$P" collect profile --backend fake --model bert-base --seq-len 64 --db "$DB" 2> "$T/err"; [ $? -eq 1 ] || fail "seq_len"
grep -q "seq_len 128, not 64" "$T/err" || fail "message: $(cat "$T/err")"
# Counters from an Nsight Compute report, one launch per operator.
awk 'BEGIN { print "\"ID\",\"Kernel Name\",\"dram__bytes.sum\",\"gpu__time_duration.sum\"";
             print "\"\",\"\",\"byte\",\"nsecond\"";
             for (i = 0; i < 174; i++) printf("\"%d\",\"k\",\"%d\",\"100\"\n", i, 1000 * (i + 1)) }' > "$T/ncu.csv"
"$P" collect counters --model resnet50 --batch 2 --ncu "$T/ncu.csv" --db "$DB" -q --json > "$T/s3" ||
    fail "counters --ncu"
grep -q '"counter_rows":174' "$T/s3" || fail "counters --ncu: $(cat "$T/s3")"

# Workload level (MPS shares) on the fake backend, then the files check.
cd "$T"
"$P" collect scaling --backend fake --model mobilenetv2 --batch 4 --shares 20,100 --seconds 0.01 -q \
    > scaling.out || fail "scaling: $(cat scaling.out)"
"$P" collect colocate --backend fake --jobs mobilenetv2:4@50,bert-base:2@50 --seconds 0.01 --json \
    > colo.out || fail "colocate"
grep -q '"colocation":"mobilenetv2_batch4-inf@50+bert-base_batch2-inf@50"' colo.out || fail "$(cat colo.out)"
# check holds the co-location against workloads.csv: bert-base has no solo
# profile yet, then it has.
"$P" check workload_scaling.csv workloads.csv colocations.csv > check2 2>&1 && fail "check without bert-base's profile"
grep -q "colocations.csv:3:4: workload 'bert-base_batch2-inf' on FAKE-GPU has no row" check2 || fail "$(cat check2)"
"$P" collect scaling --backend fake --model bert-base --batch 2 --shares 50,100 --seconds 0.01 -q \
    > scaling.out || fail "scaling: $(cat scaling.out)"
"$P" check workload_scaling.csv workloads.csv colocations.csv > check2 || fail "check: $(cat check2)"
grep -q "colocations.csv: colocations, 2 rows" check2 || fail "$(cat check2)"
"$P" collect colocate --backend fake --jobs mobilenetv2:4@50,bert-base:2@50 --seconds 0.01 2> err
[ $? -eq 1 ] && grep -q "already has co-location" err || fail "duplicate co-location: $(cat err)"
"$P" collect colocate --jobs mobilenetv2:4 > /dev/null 2>&1; [ $? -eq 2 ] || fail "--jobs without share"
# Lists longer than 1 KB are read whole: a bad entry past the first 1024
# characters is refused (exit 2), not cut off.
long=$(printf '10,%.0s' $(seq 400))
"$P" collect profile --backend fake --model resnet50 --tpcs "${long}x" --db "$T/nodir/x.db" 2> err
[ $? -eq 2 ] && grep -q -- "--tpcs: bad value" err || fail "long --tpcs with a bad entry: $(head -c 300 err)"
# 15 jobs of 65 characters, then one whose share 5000 a cut at 1023
# characters would have read as 5.
name=$(printf 'm%.0s' $(seq 60))
long=$(printf "$name:1@5,%.0s" $(seq 15))$(printf 'm%.0s' $(seq 44)):1@5000
"$P" collect colocate --backend fake --jobs "$long" --seconds 0.01 --db "$T/nodir/x.db" 2> err
[ $? -eq 2 ] && grep -q -- "--jobs: bad value" err || fail "long --jobs with a bad entry: $(head -c 300 err)"
# 16 valid jobs whose id would pass 511 bytes: refused, not cut (the cut was
# a -Wformat-truncation error in MinSizeRel builds).
long=$(printf "$name:1@5,%.0s" $(seq 15))$name:1@5
"$P" collect colocate --backend fake --jobs "$long" --seconds 0.01 --db "$T/nodir/x.db" 2> err
[ $? -eq 2 ] && grep -q -- "longer than 511 bytes" err || fail "long colocation id: $(head -c 300 err)"
unset PAIRSIGHT_CUDA_MODULE
# The real backend needs MPS and a GPU: a clear message, exit 1.
"$P" collect scaling --model mobilenetv2 --shares 50 --seconds 0.01 2> err
rc=$?
[ $rc -eq 0 ] || { [ $rc -eq 1 ] && grep -q "^pairsight: collect: " err; } || fail "no MPS: $(cat err)"
echo ok
