#!/bin/sh
# shellcheck disable=SC2086 # $CO is a list of options
# `collect merge` and `collect export` do not trust the store (issue 30,
# item 4): columns are copied by name, a task marked done without its rows
# is not done, export validates every cell as `check` does, and a source
# without its GPU identity is refused. Stores are made on the fake backend
# and damaged with Python's sqlite3 module.
P=${1:?usage: test_store_trust.sh PAIRSIGHT}
PY=/usr/bin/python3
$PY -c "import sqlite3" 2> /dev/null || { echo "SKIP: no sqlite3 module in $PY"; exit 77; }
T=$(mktemp -d /tmp/ps_test_store_trust.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
sql() { db=$1; shift; $PY -c "
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for q in sys.argv[2:]:
    c.execute(q)
c.commit()" "$db" "$@" || fail "sql on $db: $*"; }
CO="--backend fake --hp resnet50:2 --lp bert-base:2 --tpcs 8,20,46 --runs 3 --experiments 30"
"$P" collect coexec $CO --db "$T/full.db" -q > /dev/null || fail "unsharded campaign"
for k in 0 1 2; do
    "$P" collect coexec $CO --db "$T/s$k.db" --shard $k/3 -q > /dev/null || fail "shard $k/3"
done
"$P" collect export --db "$T/full.db" --ops "" --coexec "$T/full.csv" -q || fail "export full"

# 1. A source whose coexec table has the same columns in another order (hp
# and lp swapped in position, right by name) merges row for row.
cp "$T/s1.db" "$T/s1r.db"
C="experiment, run, gpu, lp_model, lp_batch, lp_start, lp_len, hp_model, hp_batch, hp_start, hp_len, lp_tpcs, hp_tpcs"
sql "$T/s1r.db" "ALTER TABLE coexec RENAME TO old" \
    "CREATE TABLE coexec(experiment TEXT NOT NULL, run INTEGER NOT NULL, gpu TEXT NOT NULL, lp_model TEXT NOT NULL,
     lp_batch INTEGER NOT NULL, lp_start INTEGER NOT NULL, lp_len INTEGER NOT NULL, hp_model TEXT NOT NULL,
     hp_batch INTEGER NOT NULL, hp_start INTEGER NOT NULL, hp_len INTEGER NOT NULL, lp_tpcs INTEGER NOT NULL,
     hp_tpcs INTEGER NOT NULL, lp_ns REAL NOT NULL, hp_ns REAL NOT NULL, mechanism TEXT,
     PRIMARY KEY(experiment, run))" \
    "INSERT INTO coexec($C, lp_ns, hp_ns, mechanism) SELECT $C, lp_ns, hp_ns, mechanism FROM old" "DROP TABLE old"
"$P" collect merge "$T/s0.db" "$T/s1r.db" "$T/s2.db" --db "$T/m1.db" -q || fail "merge of a reordered table"
"$P" collect export --db "$T/m1.db" --ops "" --coexec "$T/m1.csv" -q || fail "export m1"
cmp -s "$T/m1.csv" "$T/full.csv" || fail "a reordered coexec table merged with columns swapped"

# 2. Done marks without their rows: 10 experiments of s1 lose all their
# rows, one loses one run. Those tasks are not done after the merge (told
# on stderr and in --json), and collect runs them again whole.
cp "$T/s1.db" "$T/s1d.db"
sql "$T/s1d.db" "DELETE FROM coexec WHERE experiment IN (SELECT DISTINCT experiment FROM coexec ORDER BY 1 LIMIT 9)" \
    "DELETE FROM coexec WHERE run = 0 AND experiment = (SELECT max(experiment) FROM coexec)"
"$P" collect status --db "$T/s1d.db" > "$T/st" || fail "status s1d"
grep -q "0 of 10 tasks done" "$T/st" || fail "status counts done marks without rows: $(cat "$T/st")"
"$P" collect merge "$T/s0.db" "$T/s1d.db" "$T/s2.db" --db "$T/m2.db" --json > "$T/m2" 2> "$T/err" ||
    fail "merge of done marks without rows: $(cat "$T/err")"
grep -q '"tasks":30,"tasks_done":20,"shards_missing":0,"tasks_short":10' "$T/m2" || fail "merge JSON: $(cat "$T/m2")"
grep -q "10 tasks marked done in a source lack their rows (first coexec/" "$T/err" || fail "message: $(cat "$T/err")"
"$P" collect status --db "$T/m2.db" > "$T/st" || fail "status m2"
grep -q "20 of 30 tasks done" "$T/st" || fail "status after a merge of rowless tasks: $(cat "$T/st")"
"$P" collect coexec $CO --db "$T/m2.db" -q > /dev/null || fail "collect again into m2: $(cat "$T/err")"
"$P" collect export --db "$T/m2.db" --ops "" --coexec "$T/m2.csv" -q || fail "export m2"
cmp -s "$T/m2.csv" "$T/full.csv" || fail "the tasks run again differ from the unsharded campaign"

# 3. Export validates what the store holds; a refusal names the table, the
# row and the column, and writes no file.
n=0
for bad in "hp_ns = -5" "hp_ns = 'abc'" "hp_ns = x'00ff'" "hp_ns = 9e999" "hp_len = 99999999999" \
    "lp_tpcs = 0" "gpu = ''"; do
    n=$((n + 1))
    cp "$T/full.db" "$T/x$n.db"
    sql "$T/x$n.db" "UPDATE coexec SET $bad WHERE rowid = 7"
    col=${bad%% =*}
    "$P" collect export --db "$T/x$n.db" --ops "" --coexec "$T/x$n.csv" -q 2> "$T/err" && fail "exported $bad"
    grep -q "x$n.db: table coexec, row 7.*column $col" "$T/err" || fail "message for $bad: $(cat "$T/err")"
    [ -e "$T/x$n.csv" ] && fail "a refused export wrote $T/x$n.csv ($bad)"
done
# A rule across rows (one experiment, one set of TPCs) names both rows.
sql "$T/x$n.db" "UPDATE coexec SET gpu = 'FAKE-GPU', lp_tpcs = 9 WHERE rowid = 7"
"$P" collect export --db "$T/x$n.db" --ops "" --coexec "$T/x$n.csv" -q 2> "$T/err" && fail "exported TPCs that differ"
grep -q "table coexec, row 8, column lp_tpcs: .*(against row 7)" "$T/err" || fail "message: $(cat "$T/err")"
"$P" collect profile --backend fake --batch 2 --tpcs 8,20,46 --model resnet50 --db "$T/pr.db" -q > /dev/null ||
    fail "profile"
"$P" collect export --db "$T/pr.db" --ops "$T/pr.csv" --coexec "" -q || fail "export of a sound profile"
for bad in "duration_ns = 'abc'" "duration_ns = -1" "tpcs = 4294967304"; do
    cp "$T/pr.db" "$T/y.db"
    sql "$T/y.db" "UPDATE ops SET $bad WHERE rowid = 3"
    "$P" collect export --db "$T/y.db" --ops "$T/y.csv" --coexec "" -q 2> "$T/err" && fail "exported ops $bad"
    grep -q "y.db: table ops, row 3.*column ${bad%% =*}" "$T/err" || fail "message for ops $bad: $(cat "$T/err")"
done

# 4. A source without its GPU in the meta table, or with rows of another
# GPU, is refused before anything is written.
cp "$T/s1.db" "$T/s1g.db"
sql "$T/s1g.db" "DELETE FROM meta WHERE key = 'gpu'" "UPDATE coexec SET gpu = 'A100-SXM4-40GB'"
cp "$T/s0.db" "$T/d.db"
"$P" collect merge "$T/s1g.db" --db "$T/d.db" 2> "$T/err"; [ $? -eq 1 ] || fail "merged a store without its gpu"
grep -q "s1g.db: the campaign database has no gpu in its meta table" "$T/err" || fail "message: $(cat "$T/err")"
cp "$T/s1.db" "$T/s1o.db"
sql "$T/s1o.db" "UPDATE coexec SET gpu = 'A100-SXM4-40GB' WHERE rowid = 2"
"$P" collect merge "$T/s1o.db" --db "$T/d.db" 2> "$T/err"; [ $? -eq 1 ] || fail "merged rows of another gpu"
grep -q "s1o.db: table coexec holds rows of gpu 'A100-SXM4-40GB' in a campaign of gpu 'FAKE-GPU'" "$T/err" ||
    fail "message: $(cat "$T/err")"
"$P" collect status --db "$T/d.db" > "$T/st" || fail "status d"
grep -q "10 of 10 tasks done; 0 op rows, 0 counter rows, 30 coexec rows" "$T/st" || fail "a refused merge wrote: $(cat "$T/st")"
echo "test_store_trust: ok"
