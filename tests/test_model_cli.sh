#!/bin/sh
# pairsight train / predict / adapt / explain as a user drives them, on a
# small simulated campaign. Usage: sh tests/test_model_cli.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_model_cli.sh PAIRSIGHT}
. tests/clitest.sh

expect 0 "$CLI" simulate --gpu a100 --experiments 300 --runs 2 --threads 1 --seed 5 --out "$T/c" -q
expect 0 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/m.psm" \
    --threads 1 --depths 4 --etas 0.3 --rounds 60 -q --json
grep -q '"valid_mape"' "$T/out" || fail "train --json has no valid_mape"
grep -q '"gpu":.*"A100-SXM4-40GB"' "$T/out" || fail "train --json names no GPU"
[ -s "$T/m.psm" ] || fail "no model file"
ls "$T"/m.psm.tmp.* >/dev/null 2>&1 && fail "temporary model file left behind"

# Queries: the key columns of coexec.csv, without hp_ns and lp_ns.
awk -F, 'BEGIN { OFS = "," } NR <= 41 { print $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }' \
    "$T/c/coexec.csv" >"$T/q.csv"
expect 0 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/q.csv" --out "$T/p.csv" -q
head -1 "$T/p.csv" | grep -q '^gpu,hp_model,.*,lp_tpcs,hp_ns_pred,lp_ns_pred,hp_delta_pred,lp_delta_pred$' ||
    fail "prediction header: $(head -1 "$T/p.csv")"
[ "$(wc -l <"$T/p.csv")" -eq 41 ] || fail "expected 40 predictions, got $(($(wc -l <"$T/p.csv") - 1))"
# Predictions are within 50% of the measured latency and deltas are >= 0.8.
paste -d, "$T/p.csv" "$T/c/coexec.csv" | head -41 | awk -F, 'NR > 1 {
    e = ($12 - $28) / $28; if (e < 0) e = -e; if (e > 0.5 || $14 < 0.8) bad++ }
    END { exit bad > 0 }' || fail "predictions far from the measurements"
# To standard output, and with index composition: same numbers for short segments.
expect 0 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/q.csv" --compose index
cmp -s "$T/out" "$T/p.csv" || fail "stdout or index composition differs from --out"
expect 0 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/q.csv" --out "$T/p2.csv" --json
grep -q '"us_per_query"' "$T/out" || fail "predict --json has no us_per_query"

# A query naming a model absent from ops.csv, or too many TPCs, names it and its line.
sed '3s/^\([^,]*\),[^,]*,/\1,vgg16,/' "$T/q.csv" >"$T/bad.csv"
expect 1 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/bad.csv"
grep -q "bad.csv:3: .*vgg16" "$T/err" || fail "unknown model not named: $(cat "$T/err")"
awk -F, 'BEGIN { OFS = "," } NR == 2 { $10 = 50; $11 = 50 } { print }' "$T/q.csv" >"$T/bad.csv"
expect 1 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/bad.csv"
grep -q "bad.csv:2: .*100 TPCs.*54 TPCs" "$T/err" || fail "too many TPCs not named: $(cat "$T/err")"
awk -F, 'BEGIN { OFS = "," } NR == 4 { $4 = "x" } { print }' "$T/q.csv" >"$T/bad.csv"
expect 1 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/bad.csv"
grep -q "bad.csv:4:4: 'x' is not an integer" "$T/err" || fail "bad integer not located: $(cat "$T/err")"
cut -d, -f1-10 "$T/q.csv" >"$T/bad.csv"
expect 1 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/bad.csv"
grep -q "missing required column 'lp_tpcs'" "$T/err" || fail "missing column not named: $(cat "$T/err")"
echo "not a model" >"$T/junk.psm"
expect 1 "$CLI" predict --model "$T/junk.psm" --ops "$T/c/ops.csv" --queries "$T/q.csv"
grep -q "pairsight: predict: .*junk.psm: not a pairsight model" "$T/err" || fail "junk model: $(cat "$T/err")"

# Adapt: a few experiments of an unseen batch size.
expect 0 "$CLI" simulate --gpu a100 --batches 32 --experiments 20 --runs 2 --threads 1 --seed 6 --out "$T/n" -q
expect 0 "$CLI" adapt --model "$T/m.psm" --ops "$T/n/ops.csv" --coexec "$T/n/coexec.csv" --out "$T/m2.psm" --json
grep -q '"samples":.*40' "$T/out" || fail "adapt --json: $(cat "$T/out")"
cmp -s "$T/m.psm" "$T/m2.psm" && fail "adapted model equals the original"

# Explain one candidate, as text and JSON.
Q="hp_model=resnet50,hp_batch=8,hp_start=0,hp_len=12,lp_model=bert-base,lp_batch=8,lp_start=10,lp_len=16,hp_tpcs=27,lp_tpcs=27"
expect 0 "$CLI" explain --model "$T/m.psm" --ops "$T/c/ops.csv" --query "$Q"
grep -q "^HP: .* ns predicted" "$T/out" || fail "explain text: $(head -3 "$T/out")"
grep -q "(co-runner)" "$T/out" || fail "explain shows no co-runner operator"
expect 0 "$CLI" explain --model "$T/m.psm" --ops "$T/c/ops.csv" --query "$Q" --json --top 0
grep -q '"owner":.*"lp"' "$T/out" || fail "explain --json has no LP operator"
expect 1 "$CLI" explain --model "$T/m.psm" --ops "$T/c/ops.csv" --query "$(echo "$Q" | sed s/hp_len=12/hp_len=40/)"
grep -q "at most 16 operators" "$T/err" || fail "explain of a long segment: $(cat "$T/err")"
# A query that does not fit the model is named as --query, not "query 0".
expect 1 "$CLI" explain --model "$T/m.psm" --ops "$T/c/ops.csv" --query "$(echo "$Q" | sed s/hp_tpcs=27/hp_tpcs=90/)"
has "$T/err" "pairsight: explain: --query: hp_tpcs 90 + lp_tpcs 27"
grep -q "query 0" "$T/err" && fail "explain names its query by index: $(cat "$T/err")"
expect 1 "$CLI" explain --model "$T/m.psm" --ops "$T/c/ops.csv" --query "$(echo "$Q" | sed s/hp_start=0/hp_start=100000/)"
has "$T/err" "pairsight: explain: --query: "
grep -q "query 0" "$T/err" && fail "explain names its query by index: $(cat "$T/err")"
expect 2 "$CLI" explain --model "$T/m.psm" --ops "$T/c/ops.csv" --query "hp_model=resnet50"
expect 2 "$CLI" explain --model "$T/m.psm" --ops "$T/c/ops.csv" --query "$Q,color=red"

# Usage: every flag listed with its default; missing or unknown flags exit 2.
for cmd in train predict adapt explain; do
    expect 0 "$CLI" "$cmd" --help
    grep -q "^usage: pairsight $cmd" "$T/out" || fail "$cmd --help has no usage line"
    expect 2 "$CLI" "$cmd"
    grep -q "^pairsight: $cmd: " "$T/err" || fail "$cmd: error not prefixed: $(cat "$T/err")"
    expect 2 "$CLI" "$cmd" --no-such-flag x
    has "$T/err" "pairsight: $cmd: unknown option '--no-such-flag' (see pairsight $cmd --help)"
    expect 2 "$CLI" "$cmd" --no-such-flag
    has "$T/err" "pairsight: $cmd: unknown option '--no-such-flag' (see pairsight $cmd --help)"
    expect 2 "$CLI" "$cmd" --ops
    has "$T/err" "pairsight: $cmd: --ops needs a value (see pairsight $cmd --help)"
done
expect 2 "$CLI" train --ops a --rounds
has "$T/err" "pairsight: train: --rounds needs a value"
expect 2 "$CLI" adapt --model a --depth
has "$T/err" "pairsight: adapt: --depth needs a value"
expect 2 "$CLI" predict --model a --compose
has "$T/err" "pairsight: predict: --compose needs a value"
expect 2 "$CLI" explain --model a --top
has "$T/err" "pairsight: explain: --top needs a value"
expect 2 "$CLI" train --ops a --coexec b --out c --etas 0.1,nan
expect 2 "$CLI" train --ops a --coexec b --out c --depths 4,6,8,10,12
expect 0 "$CLI" train --help
for flag in --ops --coexec --out --variant --window --seed --threads --rounds --early-stop --depths --etas --json; do
    grep -q -- "$flag" "$T/out" || fail "train --help lacks $flag"
done
expect 2 "$CLI" train --ops a --coexec b --out c --variant fancy
expect 2 "$CLI" train --ops a --coexec b --out c --depths 6.5
expect 2 "$CLI" adapt --model a --ops b --coexec c --out d --depth 21
grep -q -- "--depth: bad value '21': expected an integer in 0..20" "$T/err" || fail "adapt --depth 21: $(cat "$T/err")"
expect 1 "$CLI" train --ops "$T/none.csv" --coexec "$T/c/coexec.csv" --out "$T/x.psm"
grep -q "none.csv" "$T/err" || fail "missing ops file not named"

# Outputs are checked before any work: never an input, never a missing folder,
# and a model that cannot be read says why.
cp "$T/c/ops.csv" "$T/ops_copy.csv"
expect 2 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/c/ops.csv"
has "$T/err" "the output is also an input"
cmp -s "$T/c/ops.csv" "$T/ops_copy.csv" || fail "train --out = --ops replaced the ops file"
expect 2 "$CLI" adapt --model "$T/m.psm" --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/c/coexec.csv"
has "$T/err" "the output is also an input"
expect 2 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/q.csv" --out "$T/q.csv"
has "$T/err" "the output is also an input"
expect 1 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/nodir/m.psm"
has "$T/err" "pairsight: train: $T/nodir/m.psm: cannot write"
expect 1 "$CLI" predict --model "$T/nonexistent.psm" --ops "$T/c/ops.csv" --queries "$T/q.csv"
has "$T/err" "nonexistent.psm: cannot open: No such file or directory"
expect 1 "$CLI" predict --model "$T" --ops "$T/c/ops.csv" --queries "$T/q.csv"
has "$T/err" "read error: Is a directory"

# GNU conventions: --opt=value, "-" for standard input and output, a repeated
# flag refused unless it is a list, a typo answered with the nearest flag.
expect 0 sh -c "'$CLI' predict --model='$T/m.psm' --ops='$T/c/ops.csv' --queries - -q <'$T/q.csv'"
cmp -s "$T/out" "$T/p.csv" || fail "predict --queries - differs from --queries FILE"
expect 0 sh -c "'$CLI' predict --model '$T/m.psm' --ops '$T/c/ops.csv' --queries - --out - <'$T/q.csv'"
cmp -s "$T/out" "$T/p.csv" || fail "predict --out - differs from --out FILE"
expect 2 "$CLI" train --ops a --coexec b --out c --out d
has "$T/err" "pairsight: train: --out given twice (it takes one value)"
expect 2 "$CLI" train --ops a --coexec b --out c --depth 6
has "$T/err" "pairsight: train: unknown option '--depth'; did you mean '--depths'? (see pairsight train --help)"
expect 2 "$CLI" predict --model a --ops b --query c
has "$T/err" "pairsight: predict: unknown option '--query'; did you mean '--queries'? (see pairsight predict --help)"
expect 2 "$CLI" train --ops a --out c
has "$T/err" "pairsight: train: missing --coexec: --ops, --coexec and --out are required"
expect 2 "$CLI" train --ops a --coexec b --out c --rounds -3
has "$T/err" "pairsight: train: --rounds: bad value '-3': expected an integer in 1..100000"

# Errors that point the way: swapped files, what ops does hold, GPU aliases.
expect 1 "$CLI" train --ops "$T/c/coexec.csv" --coexec "$T/c/ops.csv" --out "$T/x.psm"
has "$T/err" "coexec.csv:1:1: this is a coexec table, not ops (missing column 'model'): were two files given in each other's place?"
sed '3s/^\([^,]*\),[^,]*,/\1,vgg16,/' "$T/q.csv" >"$T/bad.csv"
expect 1 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/bad.csv"
has "$T/err" "(ops has: resnet50 batch 8, resnet101 batch 8"
awk -F, 'BEGIN { OFS = "," } NR == 2 { $10 = 20; $11 = 20 } { print }' "$T/q.csv" >"$T/bad.csv"
expect 1 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/bad.csv"
grep -q "bad.csv:2: .* no standalone profile at 20 TPCs (ops has it at 5, 11, .*, 54 TPCs)" "$T/err" ||
    fail "missing TPC profile does not list the counts: $(cat "$T/err")"
sed 's/^A100-SXM4-40GB,/a100,/' "$T/q.csv" >"$T/alias.csv"
expect 0 "$CLI" predict --model "$T/m.psm" --ops "$T/c/ops.csv" --queries "$T/alias.csv" --out "$T/pa.csv"
cut -d, -f2- "$T/pa.csv" | cmp -s - "$(cut -d, -f2- "$T/p.csv" >"$T/p2cut.csv"; echo "$T/p2cut.csv")" ||
    fail "a query naming the GPU a100 predicts otherwise"
expect 0 "$CLI" explain --model "$T/m.psm" --ops "$T/c/ops.csv" --query "gpu=a100,$Q"

finish test_model_cli
