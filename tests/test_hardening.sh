#!/bin/sh
# Regression tests of the hardening audit (issue 11): what users and bad luck
# do to the CLI. Usage: sh tests/test_hardening.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_hardening.sh PAIRSIGHT}
case $CLI in /*) ;; *) CLI=$PWD/$CLI ;; esac
. tests/clitest.sh

expect 0 "$CLI" simulate --gpu a100 --experiments 40 --runs 2 --threads 1 --seed 3 --out "$T/c" -q
expect 0 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/m.psm" \
    --threads 1 --depths 4 --etas 0.3 --rounds 20 -q
OPS="$T/c/ops.csv"
first=$(awk -F, 'NR == 2 { print $1 }' "$T/c/coexec.csv")

# Item 2: starts and lengths near INT_MAX are refused with a message, never
# by a crash (start + len overflowed: SIGSEGV in train, eval, adapt, predict).
for col in 5 6 9 10; do
    awk -F, -v OFS=, -v e="$first" -v c=$col 'NR > 1 && $1 == e { $c = 2147483647 } 1' \
        "$T/c/coexec.csv" >"$T/big.csv"
    expect 1 "$CLI" train --ops "$OPS" --coexec "$T/big.csv" --out "$T/x.psm" --threads 1 --rounds 2 -q
    has "$T/err" "is outside its"
    expect 1 "$CLI" eval --model "$T/m.psm" --ops "$OPS" --coexec "$T/big.csv"
    has "$T/err" "is outside its"
    expect 1 "$CLI" adapt --model "$T/m.psm" --ops "$OPS" --coexec "$T/big.csv" --out "$T/x.psm" -q
    has "$T/err" "is outside its"
    awk -F, -v OFS=, 'NR <= 3 { print $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }' "$T/big.csv" >"$T/q.csv"
    expect 1 "$CLI" predict --model "$T/m.psm" --ops "$OPS" --queries "$T/q.csv"
    has "$T/err" "q.csv:2: "
    has "$T/err" "is outside its"
done
# hp_len 2147483647 is named as such, not as "length -16".
grep -q "length -" "$T/err" && fail "negative length in: $(cat "$T/err")"
Q="hp_model=resnet50,hp_batch=8,hp_start=0,hp_len=12,lp_model=bert-base,lp_batch=8,lp_start=10,lp_len=16,hp_tpcs=27,lp_tpcs=27"
expect 1 "$CLI" explain --model "$T/m.psm" --ops "$OPS" --query "$(echo "$Q" | sed 's/hp_start=0/hp_start=999999999/')"
has "$T/err" "is outside its"

# Item 7: a queries file naming a key column twice is refused, as the table
# loaders refuse theirs (it was accepted, the second column silently used).
awk -F, -v OFS=, 'NR <= 3 { print $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, (NR == 1 ? "hp_start" : 99) }' \
    "$T/c/coexec.csv" >"$T/q.csv"
expect 1 "$CLI" predict --model "$T/m.psm" --ops "$OPS" --queries "$T/q.csv"
has "$T/err" "q.csv:1:12: duplicate column 'hp_start' (first at column 4)"
# explain --query: a key given twice is a usage error too.
expect 2 "$CLI" explain --model "$T/m.psm" --ops "$OPS" --query "$Q,hp_len=3"
has "$T/err" "pairsight: explain: --query: hp_len is given twice"
# An unknown column named twice is echoed, as before.
awk -F, -v OFS=, 'NR <= 3 { print $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, (NR == 1 ? "note,note" : "a,b") }' \
    "$T/c/coexec.csv" >"$T/q.csv"
expect 0 "$CLI" predict --model "$T/m.psm" --ops "$OPS" --queries "$T/q.csv"
has "$T/out" "lp_tpcs,note,note,hp_ns_pred"

# Item 3: check validates a coexec file against the ops files it is given
# and names coexec.csv:LINE:COL (each file alone passes; train failed later
# without file:line).
CX="$T/c/coexec.csv"
for case in "3 vgg16 no profile of vgg16" "5 2147483647 outside the 175 operators" "6 2147483647 outside the" \
    "11 12 no standalone profile at 12 TPCs"; do
    set -- $case
    col=$1 val=$2
    shift 2
    awk -F, -v OFS=, -v e="$first" -v c=$col -v v=$val 'NR > 1 && $1 == e { $c = v } 1' "$CX" >"$T/cx.csv"
    expect 0 "$CLI" check "$T/cx.csv"
    expect 1 "$CLI" check "$OPS" "$T/cx.csv"
    has "$T/err" "cx.csv:2:$col: "
    has "$T/err" "$*"
done
expect 0 "$CLI" check "$T/c/coexec.csv" "$OPS"
has "$T/out" "coexec.csv: coexec, 80 rows"

# Item 3 for the workload-level tables: check validates colocations and
# workload_scaling files against the workloads files it is given (each
# passes alone; colocate train failed later without file:line).
F=tests/data/colocate
expect 0 "$CLI" check "$F/workloads.csv" "$F/colocations3.csv" "$F/workload_scaling.csv"
has "$T/out" "colocations3.csv: colocations, 120 rows, 40 colocations"
# A co-location naming a workload absent from workloads.csv (line 3).
sed '3s/,alpha_batch8-inf,/,zeta_batch1-inf,/' "$F/colocations3.csv" >"$T/cl.csv"
expect 0 "$CLI" check "$T/cl.csv"
expect 1 "$CLI" check "$F/workloads.csv" "$T/cl.csv"
has "$T/err" "cl.csv:3:4: workload 'zeta_batch1-inf' on TESTGPU has no row in the workloads file given"
has "$T/err" "known: alpha_batch2-inf, alpha_batch8-inf, beta_batch4-train, ..."
# ... or one on another GPU than its solo profile.
sed '2,4s/,TESTGPU,/,OTHERGPU,/' "$F/colocations3.csv" >"$T/cl.csv"
expect 1 "$CLI" check "$F/workloads.csv" "$T/cl.csv"
has "$T/err" "cl.csv:2:4: workload 'alpha_batch2-inf' on OTHERGPU has no row"
# A scaling curve (a share's solo throughput) of a workload without a solo
# profile.
sed '3s/,alpha_batch2-inf,/,delta_batch2-inf,/' "$F/workload_scaling.csv" >"$T/sc.csv"
expect 0 "$CLI" check "$T/sc.csv"
expect 1 "$CLI" check "$T/sc.csv" "$F/workloads.csv"
has "$T/err" "sc.csv:3:2: workload 'delta_batch2-inf' on TESTGPU has no row"
# Wrong k: a co-location whose slots are not 1..k (slot 3 of 3 renumbered
# 4), with or without a workloads file.
sed '4s/,TESTGPU,3,/,TESTGPU,4,/' "$F/colocations3.csv" >"$T/cl.csv"
expect 1 "$CLI" check "$T/cl.csv"
has "$T/err" "cl.csv:4:3: co-location 't3/alpha_batch2-inf+alpha_batch8-inf+beta_batch4-train@100/100/100' has slot 4 but 3 rows"
expect 1 "$CLI" check "$F/workloads.csv" "$T/cl.csv"

# Item 6: thread counts and sizes are bounded: a usage error, not a libgomp
# crash (--threads 100000) or 2 GB of stacks (--threads 20000).
for n in 100000 20000; do
    expect 2 "$CLI" train --ops "$OPS" --coexec "$T/c/coexec.csv" --out "$T/x.psm" --threads $n -q
    has "$T/err" "--threads: bad value '$n'"
    expect 2 "$CLI" adapt --model "$T/m.psm" --ops "$OPS" --coexec "$T/c/coexec.csv" --out "$T/x.psm" --threads $n
    expect 2 "$CLI" eval --model "$T/m.psm" --ops "$OPS" --coexec "$T/c/coexec.csv" --threads $n
    expect 2 "$CLI" simulate --gpu a100 --experiments 2 --threads $n --out "$T/s"
done
expect 2 "$CLI" train --ops "$OPS" --coexec "$T/c/coexec.csv" --out "$T/x.psm" --rounds 1000000000 -q
expect 2 "$CLI" train --ops "$OPS" --coexec "$T/c/coexec.csv" --out "$T/x.psm" --window 100000 -q
expect 1 "$CLI" simulate --gpu a100 --experiments 100000000 --runs 10000 --out "$T/s" -q
has "$T/err" "more than 2e7"
F=tests/data/colocate
W="--workloads $F/workloads.csv --scaling $F/workload_scaling.csv --colocations $F/colocations3.csv"
expect 2 "$CLI" colocate train $W --kind kace_rf --trees 1000000 --out "$T/x.psc"
has "$T/err" "--trees: bad value '1000000': expected an integer in 1..10000"
expect 2 "$CLI" colocate train $W --kind mps --rounds 100000000 --out "$T/x.psc"
[ -e "$T/x.psm" ] || [ -e "$T/x.psc" ] && fail "a refused command wrote its output"

# Item 8: JSON is valid JSON (NaN as null with a reason, invalid UTF-8 as
# U+FFFD), and a workload name with a space round-trips through a model.
PY=/usr/bin/python3
json_ok() { "$PY" -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$1"; }
mkdir -p "$T/w"
for f in workloads colocations3 workload_scaling; do
    sed 's/alpha_batch2-inf/alpha batch2/g' $F/$f.csv >"$T/w/$f.csv"
done
printf 'TESTGPU,huge\377_batch1-inf,50.0,1e308,1e308,1e308,1e308,1e308,1e308,1e308,1e308,1e308\n' >>"$T/w/workloads.csv"
WS="--workloads $T/w/workloads.csv --scaling $T/w/workload_scaling.csv"
for k in ratio kace_lr mps kace_mlp; do
    expect 0 "$CLI" colocate train $WS --colocations "$T/w/colocations3.csv" --kind $k --out "$T/w/$k.psc" \
        --trees 5 --epochs 5 --rounds 20 -q
    expect 0 "$CLI" colocate predict --model "$T/w/$k.psc" $WS --colocations "$T/w/colocations3.csv"
    has "$T/out" "alpha batch2"
done
expect 0 "$CLI" colocate select --model "$T/w/kace_lr.psc" $WS --target "alpha batch2" \
    --candidates "$(printf 'huge\377_batch1-inf')",alpha_batch8-inf --json
json_ok "$T/out" || fail "select --json is not JSON: $(cat "$T/out")"
has "$T/out" '"candidate":"huge\ufffd_batch1-inf","tput_sum":null,"reason":'
"$PY" -c 'import json, sys; r = json.load(open(sys.argv[1]))["ranking"]; sys.exit(r[-1]["tput_sum"] is not None)' \
    "$T/out" || fail "a candidate without a prediction does not rank last: $(cat "$T/out")"
expect 0 "$CLI" colocate select --model "$T/w/ratio.psc" $WS --target "alpha batch2" --candidates alpha_batch8-inf --json
json_ok "$T/out" || fail "select --json is not JSON: $(cat "$T/out")"
has "$T/out" '"target":"alpha batch2"'

# Item 9: two writers at once. The second train of one --out is refused
# while the first runs (one of two results was silently lost).
wait_for() { i=0; while [ ! -e "$1" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done; }
"$CLI" train --ops "$OPS" --coexec "$T/c/coexec.csv" --out "$T/two.psm" --threads 1 --rounds 400 \
    --early-stop 400 -q >"$T/first.out" 2>&1 &
pid=$!
wait_for "$T/two.psm.lock"
expect 1 "$CLI" train --ops "$OPS" --coexec "$T/c/coexec.csv" --out "$T/two.psm" --threads 1 --rounds 2 -q
has "$T/err" "two.psm is being written by pid $pid"
wait $pid || fail "the first train failed: $(cat "$T/first.out")"
[ -e "$T/two.psm.lock" ] && fail "lock file left behind"
expect 0 "$CLI" predict --model "$T/two.psm" --ops "$OPS" --queries "$T/q.csv"
# Two collectors appending to one CSV: the second waits, no row is lost.
cd "$T"
# (PS_TEST_SAVE_PAUSE_MS holds the first in its save, lock taken.)
PS_TEST_SAVE_PAUSE_MS=150 "$CLI" collect colocate --backend fake --jobs mobilenetv2:4@50,bert-base:2@50 \
    --seconds 0.5 -q >/dev/null 2>"$T/c1" &
p1=$!
wait_for colocations.csv.lock
"$CLI" collect colocate --backend fake --jobs mobilenetv2:4@30,bert-base:2@70 --seconds 0.01 -q >/dev/null 2>"$T/c2" ||
    fail "second collector: $(cat "$T/c2")"
wait $p1 || fail "first collector: $(cat "$T/c1")"
[ "$(awk -F, 'NR > 1' colocations.csv | wc -l)" -eq 4 ] || fail "rows lost: $(cat colocations.csv)"
grep -q "being written by pid $p1: waiting" "$T/c2" || fail "the second collector did not wait: $(cat "$T/c2")"
# Two collect scaling runs read-modify-write the same two CSVs: the second
# waits for the first and adds its rows to the first's.
PS_TEST_SAVE_PAUSE_MS=150 "$CLI" collect scaling --backend fake --model mobilenetv2 --batch 4 --shares 10,100 \
    --seconds 0.01 -q >/dev/null 2>"$T/c1" &
p1=$!
wait_for workload_scaling.csv.lock
"$CLI" collect scaling --backend fake --model bert-base --batch 2 --shares 10,50,100 --seconds 0.01 -q \
    >/dev/null 2>"$T/c2" || fail "second scaling: $(cat "$T/c2")"
wait $p1 || fail "first scaling: $(cat "$T/c1")"
grep -q "being written by pid $p1: waiting" "$T/c2" || fail "the second scaling did not wait: $(cat "$T/c2")"
[ "$(awk -F, 'NR > 1' workload_scaling.csv | wc -l)" -eq 5 ] || fail "scaling rows lost: $(cat workload_scaling.csv)"
[ "$(awk -F, 'NR > 1' workloads.csv | wc -l)" -eq 2 ] || fail "workload rows lost: $(cat workloads.csv)"
rm -f workload_scaling.csv workloads.csv
# Two collectors on one campaign database: the second is told who holds it,
# in words, not SQLite's ("UNIQUE constraint failed", "database is locked").
"$CLI" collect profile --backend fake --model resnet50 --batch 2 --tpcs 8,46 --db cdb.db -q >/dev/null || fail profile
"$CLI" collect coexec --backend fake --hp resnet50:2 --lp resnet50:2 --tpcs 8,46 --experiments 30 --runs 2 \
    --fake-delay-us 20000 --db cdb.db -q >/dev/null 2>"$T/k1" &
p1=$!
wait_for cdb.db.lock
expect 1 "$CLI" collect coexec --backend fake --hp resnet50:2 --lp resnet50:2 --tpcs 8,46 --experiments 30 \
    --runs 2 --db cdb.db -q
has "$T/err" "cdb.db is being written by pid $p1"
grep -qi "sqlite\|constraint\|database is locked" "$T/err" && fail "raw SQLite text: $(cat "$T/err")"
wait $p1 || fail "first collector: $(cat "$T/k1")"
cd - >/dev/null

# Item 10: a save cleans the temporary files of writers that died (a train
# killed during its save left m.psm.tmp.PID forever), not those of live ones.
dead=4194000
while kill -0 $dead 2>/dev/null; do dead=$((dead + 1)); done
echo junk >"$T/m.psm.tmp.$dead"
echo junk >"$T/m.psm.tmp.$$"
expect 0 "$CLI" adapt --model "$T/m.psm" --ops "$OPS" --coexec "$T/c/coexec.csv" --out "$T/m.psm.new" -q
expect 0 "$CLI" train --ops "$OPS" --coexec "$T/c/coexec.csv" --out "$T/m.psm" --threads 1 --rounds 5 -q
[ -e "$T/m.psm.tmp.$dead" ] && fail "stale temporary file of a dead writer left"
[ -e "$T/m.psm.tmp.$$" ] || fail "a live writer's temporary file was removed"
rm -f "$T/m.psm.tmp.$$" "$T/m.psm.new"
# collect scaling killed between its two saves resumes (it said "already has
# ... at 10%").
cd "$T"
"$CLI" collect scaling --backend fake --model mobilenetv2 --batch 4 --shares 10,100 --seconds 0.01 -q >/dev/null ||
    fail "scaling"
rm workloads.csv # as if killed after the first save
expect 0 "$CLI" collect scaling --backend fake --model mobilenetv2 --batch 4 --shares 10,100 --seconds 0.01 -q
has "$T/err" "an interrupted run"
grep -q mobilenetv2_batch4-inf workloads.csv || fail "resume did not write the workload"
expect 1 "$CLI" collect scaling --backend fake --model mobilenetv2 --batch 4 --shares 10,100 --seconds 0.01 -q
has "$T/err" "already has mobilenetv2_batch4-inf"
cd - >/dev/null

finish test_hardening
