#!/bin/sh
# pairsight check and pairsight import as a user runs them: output lines, exit
# codes, file:line:column messages, atomic output, and the shared data sets.
# usage: sh tests/test_check.sh PAIRSIGHT   (from the repository root)
set -u
CLI=${1:?usage: test_check.sh PAIRSIGHT}
. tests/clitest.sh

d=tests/data
expect 0 "$CLI" check $d/coexec_small.csv $d/bom_scaling.csv
has "$T/out" "$d/coexec_small.csv: coexec, 3 rows, 2 (model, batch) groups"
has "$T/out" "$d/bom_scaling.csv: workload_scaling, 2 rows, 1 workloads"
[ "$(wc -l <"$T/out")" -eq 2 ] || fail "want one line per file"
expect 0 "$CLI" check $d/ops_small.csv
has "$T/out" "$d/ops_small.csv: ops, 6 rows, 2 (model, batch) groups"
# Together, the coexec file is checked against the ops file: bert-base was
# profiled at 54 TPCs only.
expect 1 "$CLI" check $d/coexec_small.csv $d/ops_small.csv
has "$T/err" "pairsight: check: $d/coexec_small.csv:2:12: lp_tpcs: bert-base batch 4 has no standalone profile at 34 TPCs"

expect 0 "$CLI" check --json $d/ops_small.csv
has "$T/out" '{"schema":"pairsight.check.v1","file":"tests/data/ops_small.csv","table":"ops","rows":6,"groups":2}'
expect 0 "$CLI" check -q $d/ops_small.csv
[ -s "$T/out" ] && fail "-q printed: $(cat "$T/out")"

# The first bad file stops the run with its line and column.
expect 1 "$CLI" check $d/ops_small.csv $d/bad_gap.csv $d/coexec_small.csv
has "$T/err" "pairsight: check: $d/bad_gap.csv:3:4: op 2: gap in the operator indices"
has "$T/out" "ops_small.csv: ops"
grep -q coexec_small "$T/out" && fail "check went on after the first error"
expect 1 "$CLI" check $d/bad_crlf_nan.csv
has "$T/err" "$d/bad_crlf_nan.csv:2:4: tput: 'nan': NaN is not allowed"
expect 1 "$CLI" check $d/does-not-exist.csv
has "$T/err" "does-not-exist.csv: cannot open"

expect 2 "$CLI" check
expect 2 "$CLI" check --bogus $d/ops_small.csv
has "$T/err" "pairsight: check: unknown option '--bogus' (see pairsight check --help)"
expect 2 "$CLI" import ncu $d/ncu_raw.csv --gpu V100 --model bert --tpcs 40 --out "$T/o.csv" --bogus
has "$T/err" "pairsight: import: unknown option '--bogus' (see pairsight import --help)"
expect 2 "$CLI" import ncu $d/ncu_raw.csv --gpu V100 --model bert --tpcs 40 --out
has "$T/err" "pairsight: import: --out needs a value (see pairsight import --help)"
expect 0 "$CLI" check --help
has "$T/out" "--json"
expect 0 "$CLI" help check
has "$T/out" "usage: pairsight check"

# Importers: a written file passes check; failures leave nothing behind.
expect 0 "$CLI" import ncu $d/ncu_raw.csv --gpu V100-SXM2-16GB --model bert --batch 8 --tpcs 40 --out "$T/ops.csv"
has "$T/err" "3 operators of bert batch 8 on V100-SXM2-16GB at 40 TPCs"
expect 0 "$CLI" check "$T/ops.csv"
has "$T/out" "ops, 3 rows, 1 (model, batch) groups"
expect 0 "$CLI" import torch-trace $d/torch_trace.json --gpu A100 --model resnet50 --tpcs 54 --out "$T/t.csv" --json
has "$T/out" '"ops":3,"batch":1,"tpcs":54'
expect 0 "$CLI" import torch-trace $d/torch_trace.json --gpu A100 --model resnet50 --tpcs 54 --stream 20 --out "$T/t20.csv" -q
[ -s "$T/out" ] && fail "-q printed"
expect 0 "$CLI" check "$T/t20.csv"
has "$T/out" "ops, 1 rows"

# --append adds another TPC count of the same run; a run of other kernels is
# refused and leaves the file as it was.
expect 0 "$CLI" import ncu $d/ncu_raw_20tpcs.csv --gpu V100-SXM2-16GB --model bert --batch 8 --tpcs 20 --out "$T/ops.csv" --append
has "$T/err" "merged into $T/ops.csv: 3 rows added, 0 rows' empty counters filled, 6 rows in all"
expect 0 "$CLI" check "$T/ops.csv"
has "$T/out" "ops, 6 rows, 1 (model, batch) groups"
cp "$T/ops.csv" "$T/keep.csv"
expect 1 "$CLI" import ncu $d/ncu_raw_base.csv --gpu V100-SXM2-16GB --model bert --batch 8 --tpcs 20 --out "$T/ops.csv" --append
has "$T/err" "pairsight: import: $T/ops.csv: bert batch 8 on V100-SXM2-16GB: the kernel sequences differ at op 0: 'volta_sgemm_128x64_nn' there, 'gemm_kernel' in the import"
cmp -s "$T/ops.csv" "$T/keep.csv" || fail "a failed --append changed the output file"
expect 0 "$CLI" import ncu $d/ncu_raw.csv --gpu V100-SXM2-16GB --model bert --batch 8 --tpcs 40 --out "$T/new-append.csv" --append
has "$T/err" "3 operators"

expect 1 "$CLI" import ncu $d/ncu_no_kernels.csv --gpu V100 --model bert --tpcs 40 --out "$T/ops.csv"
has "$T/err" "pairsight: import: $d/ncu_no_kernels.csv: no kernels found"
cmp -s "$T/ops.csv" "$T/keep.csv" || fail "a failed import changed the output file"
expect 1 "$CLI" import torch-trace $d/torch_no_kernels.json --gpu V100 --model bert --tpcs 40 --out "$T/new.csv"
[ -e "$T/new.csv" ] && fail "a failed import left an output file"
ls "$T" | grep -q '\.tmp\.' && fail "a temporary file was left behind"
expect 2 "$CLI" import ncu $d/ncu_raw.csv --gpu V100 --model bert --out "$T/x.csv"
has "$T/err" "--tpcs"
expect 2 "$CLI" import nvprof $d/ncu_raw.csv --gpu V100 --model bert --tpcs 4 --out "$T/x.csv"
expect 2 "$CLI" import ncu $d/ncu_raw.csv --gpu V100 --model bert --tpcs 0 --out "$T/x.csv"
# Regressions: an alias is written as the catalog's GPU name; empty names
# and unwritable outputs fail with the user's path, before any work.
expect 0 "$CLI" import ncu $d/ncu_raw.csv --gpu a100 --model bert --tpcs 54 --out "$T/alias.csv" -q
has "$T/alias.csv" "A100-SXM4-40GB,bert,1,0,"
expect 2 "$CLI" import ncu $d/ncu_raw.csv --gpu a100 --model "" --tpcs 54 --out "$T/x.csv"
has "$T/err" "pairsight: import: --gpu and --model must not be empty"
expect 1 "$CLI" import ncu $d/ncu_raw.csv --gpu a100 --model bert --tpcs 54 --out "$T/nodir/x.csv"
has "$T/err" "pairsight: import: $T/nodir/x.csv: cannot write: folder '$T/nodir' does not exist"
expect 1 "$CLI" import ncu $d/ncu_raw.csv --gpu a100 --model bert --tpcs 54 --out "$T"
has "$T/err" "pairsight: import: $T: cannot write: it is a folder"
cp $d/ncu_raw.csv "$T/in.csv"
expect 2 "$CLI" import ncu "$T/in.csv" --gpu a100 --model bert --tpcs 54 --out "$T/in.csv"
has "$T/err" "the output is also an input"
cmp -s "$T/in.csv" $d/ncu_raw.csv || fail "import replaced its input"
expect 2 "$CLI" import ncu $d/ncu_raw.csv --gpu a100 --model bert --tpcs 999 --out "$T/x.csv"
has "$T/err" "pairsight: import: --tpcs: 999 exceeds the 54 TPCs of A100-SXM4-40GB"
ls "$T" | grep -q '\.tmp\.' && fail "a temp file was left in $T"
# Output that cannot be written (a full disk) is a failure, for every command.
if [ -w /dev/full ]; then
    "$CLI" check $d/ops_small.csv >/dev/full 2>"$T/err" && fail "check > /dev/full exited 0"
    has "$T/err" "pairsight: check: stdout: write failed"
    "$CLI" import ncu $d/ncu_raw.csv --gpu a100 --model bert --tpcs 54 --out "$T/full.csv" --json >/dev/full 2>"$T/err"
    [ $? -eq 1 ] || fail "import > /dev/full: want exit 1"
    has "$T/err" "pairsight: import: stdout: write failed"
    "$CLI" --help >/dev/full 2>/dev/null && fail "--help > /dev/full exited 0"
fi
expect 0 "$CLI" import --help
has "$T/out" "--batch B           batch size (default 1; 1..1073741824)"

# A campaign and its long-segment campaign checked together: each coexec row
# is checked against the ops file that profiled its TPC count.
expect 0 "$CLI" simulate --pairs resnet50:8/bert-base:8 --experiments 30 --runs 1 --threads 1 --seed 1 --out "$T/ca" -q
expect 0 "$CLI" simulate --pairs resnet50:8/bert-base:8 --min-len 20 --max-len 30 --splits 30/24 --experiments 5 \
    --runs 1 --threads 1 --seed 2 --out "$T/cb" -q
expect 0 "$CLI" check "$T/ca/ops.csv" "$T/ca/coexec.csv" "$T/cb/ops.csv" "$T/cb/coexec.csv"
expect 1 "$CLI" check "$T/ca/ops.csv" "$T/cb/coexec.csv"
has "$T/err" "has no standalone profile at 30 TPCs"

# A CSV written with ';' (Excel in a comma-decimal locale) says so.
tr ',' ';' <$d/ops_small.csv >"$T/semi.csv"
expect 1 "$CLI" check "$T/semi.csv"
has "$T/err" "the separator must be ','"
expect 1 "$CLI" train --ops "$T/semi.csv" --coexec $d/coexec_small.csv --out "$T/semi.psm"
has "$T/err" "the separator must be ','"

finish test_check
