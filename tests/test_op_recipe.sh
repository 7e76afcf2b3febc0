#!/bin/sh
# docs/ARCHITECTURE.md's recipes "Adding an endpoint" and "Adding a command",
# followed for an operation the library declares (plan): one row in
# src/serve/server.c's route table, one row in src/cli/main.c's command
# table, nothing else. Those two files alone recompiled (their targets'
# flags, from CMake's flags.make; tests/recipe.sh), server.c into a copy of
# the build's libpairsight_serve.a, and the CLI linked again (its link.txt):
# the toy endpoint POST /v1/toy then answers what POST /v1/plan answers and
# /metrics counts it under its path; the toy command `pairsight toy` writes
# what `pairsight plan` writes, with plan's options, help and bounds.
CLI=${1:?usage: test_op_recipe.sh PAIRSIGHT}
. tests/clitest.sh
. tests/recipe.sh
command -v curl >/dev/null || { echo "skip: no curl"; exit 77; }

# The edit of the recipe: a row after /v1/plan's.
awk '{ print }
     /^    \{"POST", "\/v1\/plan", / { print "    {\"POST\", \"/v1/toy\", serve_op, SERVE_NEEDS_MODEL, \"plan\"}," }' \
    src/serve/server.c > "$T/server.c"
[ "$(grep -c '/v1/toy' "$T/server.c")" -eq 1 ] || { echo "FAIL: the recipe's row did not apply to src/serve/server.c"; exit 1; }
awk '{ print }
     /^    \{"plan", cmd_plan, / { print "    {\"toy\", NULL, \"plan as its operation declares it\", \"plan\"},"
                                  print "    {\"toy-replay\", NULL, \"replay as its operation declares it\", \"replay\"}," }' \
    src/cli/main.c > "$T/main.c"
[ "$(grep -c '"toy' "$T/main.c")" -eq 2 ] || { echo "FAIL: the recipe's rows did not apply to src/cli/main.c"; exit 1; }
recipe_compile pairsight_serve libpairsight_serve.a "$T/server.c"
recipe_compile pairsight_cli - "$T/main.c"
recipe_link
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

# The command: plan's options, help and bounds from the operation's table.
args="--model $T/m.psm --ops $T/c/ops.csv --hp resnet50:8 --lp bert-base:8 --slo-factor 1.3 --coverage 0"
# shellcheck disable=SC2086
expect 0 "$P" plan $args -q
sed 's/"plan_seconds":[^,}]*//' "$T/out" > "$T/plan.cli"
# shellcheck disable=SC2086
expect 0 "$P" toy $args
sed 's/"plan_seconds":[^,}]*//' "$T/out" > "$T/toy.cli"
cmp -s "$T/plan.cli" "$T/toy.cli" || fail "pairsight toy differs from pairsight plan: $(cat "$T/toy.cli")"
has "$T/toy.cli" '"lp_model":"bert-base"'
expect 0 "$P" toy --help
for o in "--model FILE" "--ops FILE" "--slo-factor F" "--lp-start N" "--time-value V" "--hp MODEL:BATCH" "--out FILE"; do
    has "$T/out" "$o"
done
has "$T/out" "within a latency budget"
# shellcheck disable=SC2086
expect 2 "$P" toy $args --time-value 101
has "$T/err" "--time-value: bad value '101': expected a number in [0, 100]"
expect 0 "$P" --help
has "$T/out" "  toy "
# A second toy command, for replay: its optional inputs (model?, coexec?) are optional options.
expect 0 "$P" toy-replay --help
has "$T/out" "--coexec FILE"
has "$T/out" "--load RHO"
expect 0 "$P" toy-replay --ops "$T/c/ops.csv" --hp resnet50:8 --lp bert-base:8 --requests 20 --warmup 20 \
    --policies dedicated,orion
has "$T/out" '"schema":"pairsight.replay_result.v1"'
has "$T/out" '"orion":{'
expect 2 "$P" toy-replay --ops "$T/c/ops.csv" --hp resnet50:8 --lp bert-base:8 --load 1
has "$T/err" "--load: bad value '1'"
# The unchanged sources have neither (the test would pass without the edits otherwise).
grep -q '/v1/toy' src/serve/server.c && fail "src/serve/server.c already routes /v1/toy"
expect 2 "$CLI" toy --help
cd "$ROOT" || exit 1
finish test_op_recipe
