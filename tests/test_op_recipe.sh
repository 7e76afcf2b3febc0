#!/bin/sh
# docs/ARCHITECTURE.md's recipe "Adding an endpoint", followed on a toy
# endpoint for an operation the library declares: one row in
# src/serve/server.c's route table, nothing else. That file alone recompiled
# (the serve library's flags, from CMake's flags.make) into a copy of the
# build's libpairsight_serve.a and the CLI linked again (its link.txt): the
# toy endpoint POST /v1/toy then answers what POST /v1/plan answers, and
# /metrics counts it under its path.
CLI=${1:?usage: test_op_recipe.sh PAIRSIGHT}
. tests/clitest.sh
. tests/recipe.sh
command -v curl >/dev/null || { echo "skip: no curl"; exit 77; }

# The edit of the recipe: a row after /v1/plan's.
awk '{ print }
     /^    \{"POST", "\/v1\/plan", / { print "    {\"POST\", \"/v1/toy\", serve_op, SERVE_NEEDS_MODEL, \"plan\"}," }' \
    src/serve/server.c > "$T/server.c"
[ "$(grep -c '/v1/toy' "$T/server.c")" -eq 1 ] || { echo "FAIL: the recipe's row did not apply to src/serve/server.c"; exit 1; }
recipe_link pairsight_serve libpairsight_serve.a "$T/server.c"
P=$T/pairsight

expect 0 "$P" simulate --gpu a100 --models resnet50,bert-base --experiments 60 --runs 1 --threads 1 --seed 3 \
    --out "$T/c" -q
expect 0 "$P" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/m.psm" --threads 1 --depths 3 \
    --etas 0.3 --rounds 10 -q
"$P" serve --model "$T/m.psm" --ops "$T/c/ops.csv" --listen 127.0.0.1:0 --threads 1 2> "$T/serve.log" &
pid=$!
port=
for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/serve.log")
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { kill "$pid"; echo "FAIL: serve did not start: $(cat "$T/serve.log")"; exit 1; }
body='{"hp": "resnet50:8", "lp": ["bert-base:8"], "slo_factor": 1.3, "coverage": 0}'
post() { curl -s -o "$T/$1.json" -w '%{http_code}' -H 'Content-Type: application/json' -d "$2" "http://127.0.0.1:$port$3"; }
[ "$(post plan "$body" /v1/plan)" = 200 ] || fail "/v1/plan: $(cat "$T/plan.json")"
[ "$(post toy "$body" /v1/toy)" = 200 ] || fail "/v1/toy: $(cat "$T/toy.json")"
sed 's/"plan_seconds":[^,}]*//' "$T/plan.json" > "$T/plan.n"
sed 's/"plan_seconds":[^,}]*//' "$T/toy.json" > "$T/toy.n"
cmp -s "$T/plan.n" "$T/toy.n" || fail "/v1/toy differs from /v1/plan: $(cat "$T/toy.json") / $(cat "$T/plan.json")"
[ "$(post bad '{"hp": "resnet50:8", "lp": "bert-base:8", "slo_factor": 0.5}' /v1/toy)" = 400 ] ||
    fail "a bad member is not a 400"
has "$T/bad.json" "slo_factor: expected a number in 1..100"
curl -s "http://127.0.0.1:$port/metrics" > "$T/metrics"
has "$T/metrics" 'pairsight_requests_total{endpoint="/v1/toy",code="200"} 1'
has "$T/metrics" 'pairsight_requests_total{endpoint="/v1/toy",code="400"} 1'
kill "$pid"
wait "$pid" 2>/dev/null
# The unchanged server.c has no such route (the test would pass without the edit otherwise).
grep -q '/v1/toy' src/serve/server.c && fail "src/serve/server.c already routes /v1/toy"
cd "$ROOT" || exit 1
finish test_op_recipe
