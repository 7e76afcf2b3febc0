#!/bin/sh
# Runs the same CLI commands with two pairsight binaries and compares what
# each prints (stdout, stderr, exit status) and the files they leave: the
# check that a refactoring changed no command's behaviour.
#   scripts/compare_cli.sh OLD NEW [WORKDIR]
# The commands: `--help`, `help CMD` and `CMD --help` of every command and
# subcommand, every example line of every help text (run as
# tests/test_cli_examples.sh runs them, on a small simulated A100 campaign),
# and usage errors (an unknown option and a bad value per command). Temporary
# paths are masked. Prints one line per differing command and a count; exits
# 1 when any differs.
set -u
OLD=${1:?usage: compare_cli.sh OLD NEW [WORKDIR]}
NEW=${2:?usage: compare_cli.sh OLD NEW [WORKDIR]}
case $OLD in /*) ;; *) OLD=$PWD/$OLD ;; esac
case $NEW in /*) ;; *) NEW=$PWD/$NEW ;; esac
W=${3:-$(mktemp -d /tmp/ps_compare.XXXXXX)}
mkdir -p "$W/base/out/long" "$W/base/out/calib" "$W/bin-old" "$W/bin-new" "$W/res"
ln -sf "$OLD" "$W/bin-old/pairsight"
ln -sf "$NEW" "$W/bin-new/pairsight"
ln -sfn "$PWD/tests" "$W/base/tests"
P="$OLD"
# The shared inputs, made once with the old binary.
"$P" simulate --gpu a100 --experiments 300 --runs 2 --threads 1 --seed 5 --out "$W/base/out" -q
"$P" train --ops "$W/base/out/ops.csv" --coexec "$W/base/out/coexec.csv" --out "$W/base/out/model.psm" \
    --threads 1 --depths 4 --etas 0.3 --rounds 40 -q
"$P" simulate --gpu a100 --pairs resnet50:8/bert-base:8 --min-len 24 --max-len 48 --splits 30/24 \
    --experiments 30 --runs 1 --threads 1 --seed 2 --out "$W/base/out/long" -q
"$P" simulate --gpu a100 --experiments 60 --runs 1 --threads 1 --seed 7 --out "$W/base/out/calib" -q

# The command lines, one a line, run from the workspace with `pairsight` on PATH.
subs_of() { "$P" help "$1" | tr '\n' ' ' | sed -n 's/.*Subcommands \([a-z, ]*\);.*/\1/p' | tr -d ','; }
cmds=$("$P" --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p')
{
    echo "pairsight --help"
    echo "pairsight --version"
    echo "pairsight"
    echo "pairsight nosuchcommand"
    for c in $cmds; do
        echo "pairsight help $c"
        echo "pairsight $c --help"
        echo "pairsight $c --no-such-flag"
        for s in $(subs_of "$c"); do
            echo "pairsight help $c $s"
            echo "pairsight $c $s --help"
            echo "pairsight $c $s --no-such-flag"
        done
    done
    for c in $cmds; do
        list="$c"
        s=$(subs_of "$c")
        [ -n "$s" ] && list=$(for x in $s; do echo "$c $x"; done)
        echo "$list" | while IFS= read -r cmd; do
            # shellcheck disable=SC2086
            "$P" help $cmd | sed -n '/^examples (/,/^$/p' | sed -n 's/^  \(pairsight .*\|.* | pairsight .*\)$/\1/p'
        done
    done
} >"$W/cmds"

run_all() { # run_all BIN-DIR WORKSPACE RESULTS
    rm -rf "$2" && cp -R "$W/base" "$2" && mkdir -p "$3"
    i=0
    while IFS= read -r line; do
        i=$((i + 1))
        (cd "$2" && PATH="$1:$PATH" OMP_NUM_THREADS=1 sh -c "$line") >"$3/$i.out" 2>"$3/$i.err" </dev/null
        echo $? >"$3/$i.rc"
        sed -i "s|$2|WS|g; s|/tmp/[A-Za-z0-9_.-]*|TMP|g" "$3/$i.out" "$3/$i.err"
    done <"$W/cmds"
}
run_all "$W/bin-old" "$W/ws-old" "$W/res/old" &
run_all "$W/bin-new" "$W/ws-new" "$W/res/new" &
wait
n=0
differ=0
while IFS= read -r line; do
    n=$((n + 1))
    what=""
    cmp -s "$W/res/old/$n.rc" "$W/res/new/$n.rc" || what="$what exit($(cat "$W/res/old/$n.rc")->$(cat "$W/res/new/$n.rc"))"
    cmp -s "$W/res/old/$n.out" "$W/res/new/$n.out" || what="$what stdout"
    cmp -s "$W/res/old/$n.err" "$W/res/new/$n.err" || what="$what stderr"
    if [ -n "$what" ]; then
        differ=$((differ + 1))
        echo "DIFFERS ($n):$what: $line"
    fi
done <"$W/cmds"
files=$(diff -rq "$W/ws-old" "$W/ws-new" 2>/dev/null | grep -v "/tests" || true)
[ -z "$files" ] || printf 'files: %s\n' "$files"
echo "compare_cli: $n commands, $differ differ; $(printf '%s' "$files" | grep -c . || true) output files differ ($W)"
[ "$differ" -eq 0 ]
