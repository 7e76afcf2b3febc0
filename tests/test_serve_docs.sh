#!/bin/sh
# docs/serve.md as a user runs it: the co-location lines of "Running it"
# (colocate train on the shipped fixture, nodes.json, serve with --coloc and
# --nodes) run as written, on another port (P) and with a small segment model in
# out/, and every curl line of the Kubernetes section that shows its reply
# ("# " on the next line) gets exactly that reply.
# Usage: sh tests/test_serve_docs.sh PAIRSIGHT
CLI=${1:?usage: test_serve_docs.sh PAIRSIGHT}
. tests/clitest.sh
command -v curl >/dev/null 2>&1 || { echo "skip: curl is absent"; exit 77; }
ROOT=$(pwd)
case $CLI in /*) ;; *) CLI=$ROOT/$CLI ;; esac
PORT=$((20000 + $$ % 20000))
sed -n '/^## Running it$/,/^## /p' docs/serve.md | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d' |
    sed -n '/^D=tests\/data\/serve$/,/^S=/p' |
    sed "s#^S=.*#S=http://127.0.0.1:$PORT#" >"$T/run.sh"
grep -q 'colocate train' "$T/run.sh" && grep -q -- '--nodes nodes.json' "$T/run.sh" ||
    { fail "docs/serve.md's 'Running it' block lacks the co-location lines: $(cat "$T/run.sh")"; finish test_serve_docs; }
mkdir "$T/w" && cd "$T/w" || exit 1
ln -s "$ROOT/tests" tests
expect 0 "$CLI" simulate --gpu a100 --experiments 40 --runs 1 --seed 2 --out out -q
expect 0 "$CLI" train --ops out/ops.csv --coexec out/coexec.csv --out out/model.psm --depths 4 --etas 0.3 --rounds 20 -q
# The block, then the doc's curl lines with their replies, in one shell.
{
    echo "ps=$CLI"
    echo "P=$PORT"
    cat "$T/run.sh"
    echo 'SP=$!'
    echo 'for i in 1 2 3 4 5 6 7 8 9 10; do curl -sf $S/healthz >/dev/null && break; sleep 1; done'
    sed -n '/^## The Kubernetes scheduler extender$/,/^## Metrics$/p' "$ROOT/docs/serve.md" | sed -n '/^```sh$/,/^```$/p' |
        awk '/^curl /{c=$0; cont=1; next} cont && /^  /{c=c "\n" $0; next} {cont=0}
             /^# / && c != "" {print c " > got.txt"; r=substr($0, 3); gsub(/\047/, "\047\\\047\047", r);
                               print "printf \"%s\\n\" \047" r "\047 > want.txt"; print "cmp -s got.txt want.txt || { echo \"DIFF: got $(cat got.txt) want $(cat want.txt)\"; bad=1; }"; print "n=$((n+1))"; c=""}'
    echo 'kill $SP 2>/dev/null; wait $SP'
    echo 'echo "checked $n replies"; exit ${bad:-0}'
} >"$T/all.sh"
expect 0 sh "$T/all.sh"
has "$T/out" "checked 2 replies"
grep DIFF "$T/out" && fail "a reply in docs/serve.md is not the real one"
cd "$ROOT" || exit 1
finish test_serve_docs
