#!/bin/sh
# pairsight eval and report as a user drives them, on a tiny simulated
# campaign: usage and input errors, the JSON of every method, all four
# experiments, and a self-contained HTML report.
# Usage: sh tests/test_eval.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_eval.sh PAIRSIGHT}
. tests/clitest.sh

# Usage: every flag with its default; errors prefixed and with exit 2.
expect 0 "$CLI" eval --help
for flag in --ops --coexec --model --train --long --long-ops --experiments --seed --threads \
    --rounds --depths --etas --mlp-epochs --ks --json --json-out --report -q; do
    grep -q -- "$flag" "$T/out" || fail "eval --help does not list $flag"
done
expect 0 "$CLI" report --help
grep -q -- "--out FILE" "$T/out" || fail "report --help does not list --out"
expect 2 "$CLI" eval --ops x.csv
grep -q "^pairsight: eval: missing --coexec: --ops and --coexec are required" "$T/err" || fail "missing --coexec: $(cat "$T/err")"
expect 2 "$CLI" eval --ops x.csv --coexec y.csv --experiments accuracy,nonsense
grep -q "nonsense" "$T/err" || fail "bad experiment not named: $(cat "$T/err")"
expect 2 "$CLI" eval --ops x.csv --coexec y.csv --experiments long
grep -q -- "--long FILE" "$T/err" || fail "long without --long: $(cat "$T/err")"
expect 2 "$CLI" eval --ops x.csv --coexec y.csv --ks 10,x
expect 2 "$CLI" eval --ops x.csv --coexec y.csv --bogus
expect 2 "$CLI" report --ops x.csv --coexec y.csv
grep -q "^pairsight: report: missing --out: --ops, --coexec and --out are required" "$T/err" || fail "report without --out: $(cat "$T/err")"
expect 1 "$CLI" eval --ops "$T/none.csv" --coexec "$T/none.csv"
grep -q "^pairsight: eval: .*none.csv" "$T/err" || fail "missing file not named: $(cat "$T/err")"

# A tiny campaign with held-out groups: Llama pairs and batch 16 and 64.
pairs="resnet50:8/bert-base:8,bert-base:8/mobilenetv2:8,mobilenetv2:8/resnet50:8,llama-3.2-1b:8/resnet50:8,resnet50:16/bert-base:16,bert-base:64/mobilenetv2:64"
expect 0 "$CLI" simulate --pairs "$pairs" --experiments 240 --runs 2 --threads 1 --seed 3 --out "$T/c" -q
expect 0 "$CLI" simulate --pairs "resnet50:8/bert-base:8,mobilenetv2:8/resnet50:8" --min-len 20 --max-len 40 \
    --splits 13/41,30/24 --experiments 20 --runs 1 --threads 1 --seed 4 --out "$T/l" -q
fast="--threads 1 --depths 3 --etas 0.3 --rounds 30 --mlp-epochs 5 --ks 2,4,6 -q"
expect 0 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/m.psm" \
    --threads 1 --depths 3 --etas 0.3 --rounds 30 -q

# Table I as JSON: every method key with its three figures, MAPE in percent.
# shellcheck disable=SC2086
expect 0 "$CLI" eval --model "$T/m.psm" --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --json $fast
for m in pairsight intensity_rule complementarity abacus_mlp linear pairsight_mlp; do
    grep -q "\"$m\":{\"hp_mape\":[0-9.e+-]*,\"lp_mape\":[0-9.e+-]*,\"hp_within10\":[0-9.e+-]*" "$T/out" ||
        fail "eval --json lacks $m: $(head -c 600 "$T/out")"
done
# PairSight's HP MAPE is a plausible percentage (0 < x < 50).
awk -v s="$(cat "$T/out")" 'BEGIN { i = index(s, "\"pairsight\":{\"hp_mape\":"); v = substr(s, i + 24) + 0;
    exit !(i > 0 && v > 0 && v < 50) }' || fail "implausible pairsight hp_mape: $(head -c 300 "$T/out")"

# All four experiments, tables on stdout, JSON and report written.
# shellcheck disable=SC2086
expect 0 "$CLI" eval --model "$T/m.psm" --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" \
    --long "$T/l/coexec.csv" --long-ops "$T/l/ops.csv" --experiments all --json-out "$T/e.json" \
    --report "$T/r.html" $fast
for t in "Table I" "Fig. 4" "Table II" "Long segments"; do
    grep -q "$t" "$T/out" || fail "eval output lacks $t"
done
grep -q "pairsight_k6" "$T/out" || fail "no adaptation row for k=6"
grep -q "pairsight_overlap" "$T/out" || fail "no long-segment composition rows"
for k in '"methods"' '"ablation"' '"no_corunner"' '"generalization"' '"llama"' '"batch16"' '"batch64"' \
    '"long_segments"' '"asymmetric"'; do
    grep -q "$k" "$T/e.json" || fail "eval JSON lacks $k"
done
grep -q "<svg" "$T/r.html" || fail "report has no SVG"
grep -q "Table II" "$T/r.html" || fail "report lacks Table II"
grep -Eq "(src|href)=['\"]?https?:" "$T/r.html" && fail "report fetches something"

# The split the model was trained on is the split eval scores: another seed
# (its test rows would be the model's training rows) or another campaign is
# refused before any prediction.
# shellcheck disable=SC2086
expect 1 "$CLI" eval --model "$T/m.psm" --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --seed 2 $fast
has "$T/err" "the model was split with seed 1 but eval splits with seed 2"
expect 0 "$CLI" simulate --pairs "$pairs" --experiments 60 --runs 2 --threads 1 --seed 9 --out "$T/c9" -q
# shellcheck disable=SC2086
expect 1 "$CLI" eval --model "$T/m.psm" --ops "$T/c9/ops.csv" --coexec "$T/c9/coexec.csv" $fast
has "$T/err" "the model was trained on another set of experiments than the coexec table given to eval"

# report: the same evaluation as one page; a directory as --out fails with 1.
# shellcheck disable=SC2086
expect 0 "$CLI" report --model "$T/m.psm" --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/r2.html" $fast
grep -q "Table I" "$T/r2.html" || fail "report lacks Table I"
grep -q "Fig. 1c" "$T/r2.html" || fail "report lacks the heat map"
grep -q "Fig. 2" "$T/r2.html" || fail "report lacks the correlations"
# Issue 42 item 7: fixed_cost's error CDF is dashed (and marked), the corner
# ticks have room (viewBox from -10), and the replay section puts the
# headline against the dedicated GPU on the first screen, above Table I, with
# the panels' titles above them and busy and kept % defined. The replays are
# the published ones (docs/results/replay.json), one file per run as run.sh
# writes them.
grep -q "stroke-dasharray='7 4'" "$T/r2.html" || fail "fixed_cost's CDF is not dashed"
grep -q "viewBox='0 -10 " "$T/r2.html" || fail "the scatter panels leave no room for the corner ticks"
grep -q "<!-- pairsight:headline -->" "$T/r2.html" || fail "report has no place for the headline"
if [ -x /usr/bin/python3 ]; then
    mkdir -p "$T/rep"
    /usr/bin/python3 -c "import json, sys
for i, r in enumerate(json.load(open('docs/results/replay.json'))):
    json.dump(r, open('$T/rep/%02d.json' % i, 'w'))" || fail "cannot split replay.json"
    expect 0 /usr/bin/python3 scripts/replay_report.py "$T/rep" "$T/r2.html"
    awk '/Headline: LP throughput against the dedicated GPU/ { h = NR } /Table I/ && !t { t = NR }
        END { exit !(h && t && h < t) }' "$T/r2.html" || fail "the headline is not above Table I"
    grep -q "below it in [0-9]* of [0-9]* replays" "$T/r2.html" || fail "the headline does not compare orion"
    grep -q '<text x="48" y="15" font-size="13" font-weight="bold">HP ' "$T/r2.html" ||
        fail "the replay panels' titles are not above them"
    grep -q "<b>kept %</b>, the share of requests" "$T/r2.html" || fail "kept % is not defined"
    grep -q "<b>busy</b>, the share of the wall time" "$T/r2.html" || fail "busy is not defined"
fi
# shellcheck disable=SC2086
expect 1 "$CLI" report --model "$T/m.psm" --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/nodir/r.html" $fast
grep -q "^pairsight: report: " "$T/err" || fail "unwritable report: $(cat "$T/err")"
has "$T/err" "pairsight: report: $T/nodir/r.html: cannot write: folder '$T/nodir' does not exist"
# An unwritable output fails before training (here 100000 rounds would take
# minutes), and names the user's path, never the temp file.
expect 1 timeout 20 "$CLI" eval --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --json-out "$T/nodir/e.json" --rounds 100000 -q
has "$T/err" "pairsight: eval: $T/nodir/e.json: cannot write: folder"
expect 1 timeout 20 "$CLI" report --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T" --rounds 100000 -q
has "$T/err" "pairsight: report: $T: cannot write: it is a folder"
expect 2 "$CLI" eval --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --seed
has "$T/err" "pairsight: eval: --seed needs a value: an integer in 0..4294967295 (see pairsight eval --help)"
expect 2 "$CLI" eval --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --bogus
has "$T/err" "pairsight: eval: unknown option '--bogus' (see pairsight eval --help)"
expect 2 "$CLI" eval --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out r.html
has "$T/err" "pairsight: eval: unknown option '--out' (see pairsight eval --help)"
expect 2 "$CLI" report --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out
has "$T/err" "pairsight: report: --out needs a value (see pairsight report --help)"
expect 2 "$CLI" report --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --json
has "$T/err" "pairsight: report: unknown option '--json' (see pairsight report --help)"
expect 2 "$CLI" eval --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --ks 1,2,3x
# Out-of-range grids were accepted (--etas nan, 5, 1e400; --depths 1e11, 1.5).
for bad in "--etas nan" "--etas 5" "--etas 1e400" "--depths 99999999999" "--depths 1.5" "--ks 99999999999,1,1" "--ks 1,2"; do
    # shellcheck disable=SC2086
    expect 2 "$CLI" eval --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" $bad
done
has "$T/err" "--ks: bad value: expected three integers A,B,C in 1..1000000"
expect 2 "$CLI" eval --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --long-ops "$T/c/ops.csv"
has "$T/err" "--long-ops needs --long FILE"
# An input named as the output is refused, and left as it was.
cp "$T/c/ops.csv" "$T/ops.bak"
expect 2 "$CLI" report --model "$T/m.psm" --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/c/../c/ops.csv" $fast
has "$T/err" "the output is also an input ($T/c/ops.csv): refusing to replace it"
cmp -s "$T/c/ops.csv" "$T/ops.bak" || fail "report overwrote its --ops"
expect 2 "$CLI" eval --model "$T/m.psm" --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --json-out "$T/m.psm" $fast
expect 2 "$CLI" eval --model "$T/m.psm" --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --json-out "$T/j" --report "$T/j" $fast
# A model of another GPU is refused by name before any prediction.
expect 0 "$CLI" simulate --gpu h100 --pairs resnet50:8/bert-base:8 --experiments 4 --runs 1 --threads 1 --out "$T/h" -q
expect 1 "$CLI" eval --model "$T/m.psm" --ops "$T/h/ops.csv" --coexec "$T/h/coexec.csv" $fast
has "$T/err" "pairsight: eval: the model is for GPU 'A100-SXM4-40GB' but coexec row 1 (experiment "
ls "$T" | grep -q '\.tmp\.' && fail "a temp file was left in $T"

# --train: baselines and model train on another campaign's training split and
# every row of --coexec is scored.
expect 0 "$CLI" simulate --pairs "$pairs" --experiments 30 --runs 1 --threads 1 --seed 9 --out "$T/t" -q
# shellcheck disable=SC2086
expect 0 "$CLI" eval --train "$T/c/coexec.csv" --ops "$T/c/ops.csv" --coexec "$T/t/coexec.csv" --json $fast
grep -q '"n_test":30' "$T/out" || fail "--train: expected all 30 rows scored: $(head -c 300 "$T/out")"

# Without --model, eval trains one itself on the training split.
# shellcheck disable=SC2086
expect 0 "$CLI" eval --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --json $fast
grep -q '"pairsight":{"hp_mape":[0-9]' "$T/out" || fail "eval without --model: $(head -c 300 "$T/out")"

finish test_eval
