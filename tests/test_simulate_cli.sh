#!/bin/sh
# pairsight simulate as a user runs it: campaigns on every GPU of the issue
# with all six models pass `pairsight check`; flags and exit codes.
# usage: sh tests/test_simulate_cli.sh PATH_TO_PAIRSIGHT
set -u
CLI=${1:?usage: test_simulate_cli.sh PAIRSIGHT}
TMP=$(mktemp -d /tmp/ps_test_simulate.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail=0
ok() { echo "[ ok ] $1"; }
bad() { echo "[FAIL] $1"; fail=1; }

MODELS=resnet50,resnet101,mobilenetv2,bert-base,llama-3.2-1b,llama-3.2-3b
for gpu in a100 h100 h200; do
    if "$CLI" simulate -q --gpu $gpu --models $MODELS --experiments 60 --runs 2 --seed 3 --out "$TMP/$gpu" &&
        "$CLI" check "$TMP/$gpu/ops.csv" "$TMP/$gpu/coexec.csv" >"$TMP/check.txt"; then
        n=$(tail -n +2 "$TMP/$gpu/coexec.csv" | wc -l)
        models=$(tail -n +2 "$TMP/$gpu/ops.csv" | cut -d, -f2 | sort -u | tr '\n' ' ')
        if [ "$n" -eq 120 ] && [ "$models" = "bert-base llama-3.2-1b llama-3.2-3b mobilenetv2 resnet101 resnet50 " ]; then
            ok "simulate --gpu $gpu passes check ($n runs; $models)"
        else
            bad "simulate --gpu $gpu: $n runs, models '$models'"
        fi
    else
        bad "simulate --gpu $gpu or check failed"
    fi
done

# The same seed gives the same files whatever the thread count.
"$CLI" simulate -q --experiments 200 --runs 3 --threads 1 --out "$TMP/t1" &&
    "$CLI" simulate -q --experiments 200 --runs 3 --threads 2 --out "$TMP/t2" &&
    cmp -s "$TMP/t1/coexec.csv" "$TMP/t2/coexec.csv" && cmp -s "$TMP/t1/ops.csv" "$TMP/t2/ops.csv" &&
    ok "deterministic across thread counts" || bad "thread count changed the output"

# Long segments, explicit pairs and splits; --json summary.
if "$CLI" simulate --json --pairs resnet50:16/bert-base:32 --splits 10/44,20/34 --min-len 24 --max-len 96 \
    --experiments 10 --runs 1 --out "$TMP/long" >"$TMP/long.json" &&
    grep -q '"coexec_rows":10' "$TMP/long.json" && "$CLI" check "$TMP/long/coexec.csv" >/dev/null &&
    tail -n +2 "$TMP/long/coexec.csv" | awk -F, '$6 < 24 || $6 > 96 || $10 < 24 || $4 != 16 || $8 != 32 {e=1} END {exit e}'; then
    ok "long segments, pairs, splits, --json"
else
    bad "long segments, pairs, splits, --json"
fi

# Help lists every flag with its default; errors exit 1 (input) or 2 (usage).
"$CLI" simulate --help >"$TMP/help.txt" && grep -q -- "--splits" "$TMP/help.txt" && grep -q "default 14" "$TMP/help.txt" &&
    ok "--help" || bad "--help"
"$CLI" simulate --out "$TMP/x" --bogus 1 2>"$TMP/err.txt"
[ $? -eq 2 ] && grep -qxF "pairsight: simulate: unknown option '--bogus' (see pairsight simulate --help)" "$TMP/err.txt" &&
    ok "unknown flag exits 2" || bad "unknown flag"
"$CLI" simulate --out "$TMP/x" --bogus 2>"$TMP/err.txt"
[ $? -eq 2 ] && grep -qxF "pairsight: simulate: unknown option '--bogus' (see pairsight simulate --help)" "$TMP/err.txt" &&
    ok "unknown flag last exits 2" || bad "unknown flag last"
"$CLI" simulate --out 2>"$TMP/err.txt"
[ $? -eq 2 ] && grep -qxF "pairsight: simulate: --out needs a value (see pairsight simulate --help)" "$TMP/err.txt" &&
    ok "flag without its value exits 2" || bad "flag without its value"
"$CLI" simulate --experiments 0 --out "$TMP/x" 2>/dev/null
[ $? -eq 2 ] && ok "bad number exits 2" || bad "bad number"
"$CLI" simulate --experiments 5 2>/dev/null
[ $? -eq 2 ] && ok "missing --out exits 2" || bad "missing --out"
"$CLI" simulate --gpu tpu --experiments 5 --out "$TMP/x" 2>"$TMP/err.txt"
[ $? -eq 2 ] && grep -q "unknown GPU 'tpu'" "$TMP/err.txt" && ok "unknown GPU is a usage error (exit 2)" || bad "unknown GPU"
"$CLI" simulate --splits 60/10 --experiments 5 --out "$TMP/x" 2>/dev/null
[ $? -eq 1 ] && ok "impossible split exits 1" || bad "impossible split"
"$CLI" simulate --derive "$TMP/none.csv" >/dev/null 2>&1
[ $? -eq 1 ] && ok "--derive of a missing file exits 1" || bad "--derive missing file"
# --out is checked before the campaign runs, and errors name it, not a temp file.
echo x > "$TMP/afile"
"$CLI" simulate --experiments 5 --out "$TMP/afile" 2>"$TMP/err.txt"
[ $? -eq 1 ] && grep -qF "pairsight: simulate: $TMP/afile: cannot write into it: is not a folder" "$TMP/err.txt" &&
    ok "--out naming a file exits 1" || bad "--out naming a file: $(cat "$TMP/err.txt")"
"$CLI" simulate --experiments 5 --out "$TMP/nodir/sub" 2>"$TMP/err.txt"
[ $? -eq 1 ] && grep -qF "$TMP/nodir/sub: cannot create: folder '$TMP/nodir' does not exist" "$TMP/err.txt" &&
    ok "--out in a missing folder exits 1" || bad "--out in a missing folder: $(cat "$TMP/err.txt")"
# A pair without its LP side said "bad HP batch".
"$CLI" simulate --pairs resnet50:8 --experiments 2 --out "$TMP/p" 2>"$TMP/err.txt"
[ $? -eq 1 ] && grep -qF "pairs: expected hp:batch/lp:batch, got 'resnet50:8'" "$TMP/err.txt" &&
    ok "--pairs without an LP side" || bad "--pairs without an LP side: $(cat "$TMP/err.txt")"
# --oplist (issue 42): a list named in neither --models nor --pairs is not
# simulated, and says so; a FILE without NAME= is named by its header; an
# unknown model is a usage error (2) that names the user's lists.
O=tests/data/overlap_twin_oplists/vgg16_b4_s0.oplist
"$CLI" simulate -q --gpu a100 --oplist "cx=$O" --experiments 2 --out "$TMP/o1" 2>"$TMP/err.txt"
[ $? -eq 0 ] && grep -qF "warning: --oplist cx is in neither --models nor --pairs" "$TMP/err.txt" &&
    ok "--oplist not named: a warning" || bad "--oplist not named: $(cat "$TMP/err.txt")"
"$CLI" simulate -q --gpu a100 --oplist "$O" --models vgg16,resnet50 --batches vgg16:4,resnet50:4 --experiments 2 \
    --out "$TMP/o2" 2>"$TMP/err.txt"
[ $? -eq 0 ] && [ ! -s "$TMP/err.txt" ] && grep -q ',vgg16,' "$TMP/o2/ops.csv" &&
    ok "--oplist FILE named by its header (vgg16)" || bad "--oplist FILE by header: $(cat "$TMP/err.txt")"
"$CLI" simulate -q --gpu a100 --oplist "cx=$O" --models cy --experiments 2 --out "$TMP/o3" 2>"$TMP/err.txt"
[ $? -eq 2 ] && grep -qF "unknown model 'cy'" "$TMP/err.txt" && grep -qF "your --oplist lists: cx" "$TMP/err.txt" &&
    ok "unknown model: exit 2, the user's lists named" || bad "unknown model: $(cat "$TMP/err.txt")"
"$CLI" simulate -q --gpu a100 --oplist tests/data/overlap_twin_oplists/resnet50_b4_s0.oplist --experiments 2 \
    --out "$TMP/o4" 2>"$TMP/err.txt"
[ $? -eq 1 ] && grep -qF "'resnet50' is a built-in model" "$TMP/err.txt" &&
    ok "--oplist FILE whose header names a built-in model" || bad "built-in header: $(cat "$TMP/err.txt")"
# A trailing slash names the folder itself (docs/simulator.md's `--out campaign/`).
"$CLI" simulate -q --experiments 5 --runs 1 --out "$TMP/slashed/" 2>"$TMP/err.txt" &&
    [ -s "$TMP/slashed/coexec.csv" ] && ok "--out DIR/ creates DIR" || bad "--out DIR/: $(cat "$TMP/err.txt")"
"$CLI" simulate -q --experiments 5 --runs 1 --out "$TMP/none/deeper/" 2>"$TMP/err.txt"
[ $? -eq 1 ] && grep -qF "folder '$TMP/none' does not exist" "$TMP/err.txt" &&
    ok "--out A/B/ without A names A" || bad "--out A/B/: $(cat "$TMP/err.txt")"
exit $fail
