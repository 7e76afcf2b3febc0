#!/bin/sh
# pairsight check and pairsight import as a user runs them: output lines, exit
# codes, file:line:column messages, atomic output, and the shared data sets.
# usage: sh tests/test_check.sh PAIRSIGHT   (from the repository root)
set -u
cli=${1:?usage: test_check.sh PAIRSIGHT}
tmp=$(mktemp -d /tmp/ps_test_check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect CODE CMD...: run CMD, keep stdout/stderr in $tmp/out, $tmp/err.
expect() {
    want=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"; got=$?
    [ "$got" = "$want" ] || fail "exit $got (want $want): $* :: $(cat "$tmp/err")"
}
has() { grep -qF -- "$2" "$1" || fail "$1 lacks '$2': $(cat "$1")"; }

d=tests/data
expect 0 "$cli" check $d/ops_small.csv $d/coexec_small.csv $d/bom_scaling.csv
has "$tmp/out" "$d/ops_small.csv: ops, 6 rows, 2 models"
has "$tmp/out" "$d/coexec_small.csv: coexec, 3 rows, 2 models"
has "$tmp/out" "$d/bom_scaling.csv: workload_scaling, 2 rows, 1 workloads"
[ "$(wc -l <"$tmp/out")" -eq 3 ] || fail "want one line per file"

expect 0 "$cli" check --json $d/ops_small.csv
has "$tmp/out" '{"file": "tests/data/ops_small.csv", "table": "ops", "rows": 6, "groups": 2}'
expect 0 "$cli" check -q $d/ops_small.csv
[ -s "$tmp/out" ] && fail "-q printed: $(cat "$tmp/out")"

# The first bad file stops the run with its line and column.
expect 1 "$cli" check $d/ops_small.csv $d/bad_gap.csv $d/coexec_small.csv
has "$tmp/err" "pairsight: check: $d/bad_gap.csv:3:4: op 2: gap in the operator indices"
has "$tmp/out" "ops_small.csv: ops"
grep -q coexec_small "$tmp/out" && fail "check went on after the first error"
expect 1 "$cli" check $d/bad_crlf_nan.csv
has "$tmp/err" "$d/bad_crlf_nan.csv:2:4: tput: 'nan': NaN is not allowed"
expect 1 "$cli" check $d/does-not-exist.csv
has "$tmp/err" "does-not-exist.csv: cannot open"

expect 2 "$cli" check
expect 2 "$cli" check --bogus $d/ops_small.csv
expect 0 "$cli" check --help
has "$tmp/out" "--json"
expect 0 "$cli" help check
has "$tmp/out" "usage: pairsight check"

# Importers: a written file passes check; failures leave nothing behind.
expect 0 "$cli" import ncu $d/ncu_raw.csv --gpu V100-SXM2-16GB --model bert --batch 8 --tpcs 40 --out "$tmp/ops.csv"
has "$tmp/out" "3 operators of bert batch 8 on V100-SXM2-16GB at 40 TPCs"
expect 0 "$cli" check "$tmp/ops.csv"
has "$tmp/out" "ops, 3 rows, 1 models"
expect 0 "$cli" import torch-trace $d/torch_trace.json --gpu A100 --model resnet50 --tpcs 54 --out "$tmp/t.csv" --json
has "$tmp/out" '"ops": 3, "batch": 1, "tpcs": 54'
expect 0 "$cli" import torch-trace $d/torch_trace.json --gpu A100 --model resnet50 --tpcs 54 --stream 20 --out "$tmp/t20.csv" -q
[ -s "$tmp/out" ] && fail "-q printed"
expect 0 "$cli" check "$tmp/t20.csv"
has "$tmp/out" "ops, 1 rows"

# --append adds another TPC count of the same model; the same one again is
# a duplicate key and leaves the file as it was.
expect 0 "$cli" import ncu $d/ncu_raw_base.csv --gpu V100-SXM2-16GB --model bert --batch 8 --tpcs 20 --out "$tmp/ops.csv" --append
expect 0 "$cli" check "$tmp/ops.csv"
has "$tmp/out" "ops, 6 rows, 1 models"
cp "$tmp/ops.csv" "$tmp/keep.csv"
expect 1 "$cli" import ncu $d/ncu_raw_base.csv --gpu V100-SXM2-16GB --model bert --batch 8 --tpcs 20 --out "$tmp/ops.csv" --append
has "$tmp/err" "pairsight: import: $tmp/ops.csv: ops row 7: duplicate key"
cmp -s "$tmp/ops.csv" "$tmp/keep.csv" || fail "a failed --append changed the output file"
expect 0 "$cli" import ncu $d/ncu_raw.csv --gpu V100-SXM2-16GB --model bert --batch 8 --tpcs 40 --out "$tmp/new-append.csv" --append
has "$tmp/out" "3 operators"

expect 1 "$cli" import ncu $d/ncu_no_kernels.csv --gpu V100 --model bert --tpcs 40 --out "$tmp/ops.csv"
has "$tmp/err" "pairsight: import: $d/ncu_no_kernels.csv: no kernels found"
cmp -s "$tmp/ops.csv" "$tmp/keep.csv" || fail "a failed import changed the output file"
expect 1 "$cli" import torch-trace $d/torch_no_kernels.json --gpu V100 --model bert --tpcs 40 --out "$tmp/new.csv"
[ -e "$tmp/new.csv" ] && fail "a failed import left an output file"
ls "$tmp" | grep -q '\.tmp\.' && fail "a temporary file was left behind"
expect 2 "$cli" import ncu $d/ncu_raw.csv --gpu V100 --model bert --out "$tmp/x.csv"
has "$tmp/err" "--tpcs"
expect 2 "$cli" import nvprof $d/ncu_raw.csv --gpu V100 --model bert --tpcs 4 --out "$tmp/x.csv"
expect 2 "$cli" import ncu $d/ncu_raw.csv --gpu V100 --model bert --tpcs 0 --out "$tmp/x.csv"
expect 0 "$cli" import --help
has "$tmp/out" "--batch B    : batch size (default 1)"

# The shared data sets (absent on a bare clone: not an error).
shared=../shared/data
if [ -d "$shared" ]; then
    expect 0 "$cli" check "$shared"/*/*.csv
    has "$tmp/out" "orion-v100/ops.csv: ops, 1703 rows, 5 models"
    has "$tmp/out" "kace-v100/colocations_splits.csv: colocations, 436 rows"
    has "$tmp/out" "kace-v100/workloads.csv: workloads, 44 rows"
else
    echo "skip: $shared not present"
fi

[ "$fails" -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "ok"
