#!/bin/sh
# Every example line of every command's help (`pairsight help CMD [SUB]`)
# runs as written and exits 0, from a folder laid out as the source folder
# after scripts/run.sh: out/ops.csv, out/coexec.csv, out/model.psm (a small
# simulated A100 campaign here) and tests/data.
# Usage: sh tests/test_cli_examples.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_cli_examples.sh PAIRSIGHT}
case $CLI in /*) ;; *) CLI=$PWD/$CLI ;; esac
. tests/clitest.sh
W=$T/w
mkdir -p "$W/out/long" "$W/out/calib" "$T/bin"
ln -s "$PWD/tests" "$W/tests"
ln -s "$CLI" "$T/bin/pairsight"
PATH=$T/bin:$PATH
export PATH

expect 0 pairsight simulate --gpu a100 --experiments 300 --runs 2 --threads 1 --seed 5 --out "$W/out" -q
expect 0 pairsight train --ops "$W/out/ops.csv" --coexec "$W/out/coexec.csv" --out "$W/out/model.psm" \
    --threads 1 --depths 4 --etas 0.3 --rounds 40 -q
expect 0 pairsight simulate --gpu a100 --pairs resnet50:8/bert-base:8 --min-len 24 --max-len 48 --splits 30/24 \
    --experiments 30 --runs 1 --threads 1 --seed 2 --out "$W/out/long" -q
expect 0 pairsight simulate --gpu a100 --experiments 60 --runs 1 --threads 1 --seed 7 --out "$W/out/calib" -q

# Every command that `pairsight --help` lists, in its order (train before
# the commands that read its model); colocate as its subcommands, in the
# order its help names them (train before predict, select and place).
subs=$(pairsight help colocate | tr '\n' ' ' | sed -n 's/.*Subcommands \([a-z, ]*\);.*/\1/p' | tr -d ',')
[ -n "$subs" ] || fail "no subcommands found in pairsight help colocate"
cmds=$(pairsight --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p')
[ "$(echo "$cmds" | wc -l)" -ge 15 ] || fail "only $(echo "$cmds" | wc -l) commands found in pairsight --help"
list=$(for c in $cmds; do
    if [ "$c" = colocate ]; then for s in $subs; do echo "colocate $s"; done; else echo "$c"; fi
done)
n=0
ncmd=0
echo "$list" >"$T/cmds"
while IFS= read -r cmd; do
    ncmd=$((ncmd + 1))
    # shellcheck disable=SC2086
    pairsight help $cmd >"$T/help" || fail "help $cmd"
    sed -n '/^examples (/,/^$/p' "$T/help" | sed -n 's/^  \(pairsight .*\|.* | pairsight .*\)$/\1/p' >"$T/ex"
    while IFS= read -r line; do
        n=$((n + 1))
        (cd "$W" && OMP_NUM_THREADS=1 sh -c "$line") >"$T/ex.out" 2>"$T/ex.err" ||
            fail "help $cmd example: $line: $(tail -3 "$T/ex.err")"
    done <"$T/ex"
    [ -s "$T/ex" ] || fail "help $cmd has no example line"
done <"$T/cmds"
[ "$n" -ge 20 ] || fail "only $n example lines found"
echo "$n example lines of $ncmd commands ran"
finish test_cli_examples
