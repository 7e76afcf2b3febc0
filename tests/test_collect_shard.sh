#!/bin/sh
# Campaigns over many GPUs on the fake backend: N shards (--shard K/N) merged
# with `collect merge` equal the unsharded campaign row for row; a shard
# killed with SIGKILL resumes; merging a shard twice adds nothing; stores of
# another plan or device are refused; --devices runs one shard per device and
# merges them.
P=${1:?usage: test_collect_shard.sh PAIRSIGHT}
T=$(mktemp -d /tmp/ps_test_collect_shard.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# Wait (10 s at most) until database $1 has $2 tasks done.
wait_done() {
    i=0
    while [ $i -lt 200 ]; do
        done_=$("$P" collect status --db "$1" --json 2>/dev/null | sed -n 's/.*"tasks_done":\([0-9]*\).*/\1/p')
        [ "${done_:-0}" -ge "$2" ] && break
        sleep 0.05
        i=$((i + 1))
    done
}
CO0="--backend fake --hp resnet50:2 --lp bert-base:2 --tpcs 8,20,46 --runs 3"
CO="$CO0 --experiments 30"
PR="--backend fake --batch 2 --tpcs 8,20,46"

"$P" collect --help > "$T/help" || fail "--help exit"
for f in --shard --devices merge; do grep -q -- "$f" "$T/help" || fail "--help lacks $f"; done
"$P" collect merge --help > "$T/help" || fail "merge --help exit"
grep -q "usage: pairsight collect merge A.db B.db ... --db ALL.db" "$T/help" || fail "merge --help: $(head -n 2 "$T/help")"
"$P" collect coexec $CO --db "$T/x.db" --shard 3/3 2> "$T/err"; [ $? -eq 2 ] || fail "--shard 3/3: want exit 2"
"$P" collect coexec $CO --db "$T/x.db" --shard 1/3 --devices 0,1 2> "$T/err"; [ $? -eq 2 ] || fail "--shard with --devices"
"$P" collect merge --db "$T/x.db" 2> "$T/err"; [ $? -eq 2 ] || fail "merge without sources: want exit 2"
# --shard and --devices where they would be ignored, and a trailing comma.
"$P" collect merge "$T/none.db" --db "$T/x.db" --devices 0,1 2> "$T/err"; [ $? -eq 2 ] || fail "merge --devices"
"$P" collect status --db "$T/x.db" --shard 0/3 2> "$T/err"; [ $? -eq 2 ] || fail "status --shard"
grep -q "shard goes with profile, coexec or counters, not status" "$T/err" || fail "message: $(cat "$T/err")"
"$P" collect coexec $CO --db "$T/x.db" --devices 0, 2> "$T/err"; [ $? -eq 2 ] || fail "--devices 0,"
"$P" collect coexec $CO --db "$T/nodir/x.db" --devices 0,1 2> "$T/err"; [ $? -eq 1 ] || fail "--devices into no folder"
[ "$(wc -l < "$T/err")" -eq 1 ] && grep -q "folder '.*nodir' does not exist" "$T/err" || fail "message: $(cat "$T/err")"
for s in 0 3 a/b 1/0 -1/3 4/3 1/3x; do
    "$P" collect coexec $CO --db "$T/x.db" --shard "$s" 2> "$T/err"; [ $? -eq 2 ] || fail "--shard $s: want exit 2"
    grep -q "expected K/N with 0 <= K < N" "$T/err" || fail "--shard $s message: $(cat "$T/err")"
done
"$P" collect merge "$T/none.db" --db "$T/x.db" 2> "$T/err"; [ $? -eq 1 ] || fail "merge of a missing file"

# The unsharded campaign.
"$P" collect profile $PR --model resnet50 --db "$T/full.db" -q > /dev/null || fail profile
"$P" collect profile $PR --model bert-base --db "$T/full.db" -q > /dev/null || fail profile
"$P" collect coexec $CO --db "$T/full.db" -q > /dev/null || fail coexec
"$P" collect export --db "$T/full.db" --ops "$T/f_ops.csv" --coexec "$T/f_co.csv" -q || fail export

# Three shards; shard 1's co-execution part is killed mid-way and resumed.
for k in 0 1 2; do
    for m in resnet50 bert-base; do
        "$P" collect profile $PR --model $m --db "$T/s$k.db" --shard $k/3 -q > /dev/null || fail "profile $k"
    done
    [ $k -eq 1 ] && continue
    "$P" collect coexec $CO --db "$T/s$k.db" --shard $k/3 -q > /dev/null || fail "coexec $k"
done
"$P" collect coexec $CO --db "$T/s1.db" --shard 1/3 --fake-delay-us 100000 -q > /dev/null &
pid=$!
wait_done "$T/s1.db" 3
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
"$P" collect status --db "$T/s1.db" --json > "$T/st" || fail status
# Shard 1 of 3: TPC count 20 of each profile (2 tasks) and experiments 1, 4, ..., 28 (10).
grep -q '"tasks":12' "$T/st" || fail "shard 1 plans 12 tasks: $(cat "$T/st")"
grep -q '"tasks_done":12' "$T/st" && fail "the kill came too late: $(cat "$T/st")"
# A shard resumes only as itself.
"$P" collect coexec $CO --db "$T/s1.db" --shard 2/3 -q > /dev/null 2> "$T/err" && fail "resumed as another shard"
grep -q "shard 1/3, not 2/3" "$T/err" || fail "message: $(cat "$T/err")"
"$P" collect coexec $CO --db "$T/s1.db" --shard 1/3 -q --json > "$T/st" || fail resume
grep -q '"tasks_done":12' "$T/st" || fail "resume: $(cat "$T/st")"

"$P" collect merge "$T/s0.db" "$T/s1.db" "$T/s2.db" --db "$T/all.db" --json > "$T/m1" || fail merge
grep -q '"tasks_done":36' "$T/m1" || fail "merged tasks: $(cat "$T/m1")"
"$P" collect export --db "$T/all.db" --ops "$T/a_ops.csv" --coexec "$T/a_co.csv" -q || fail "export merged"
cmp -s "$T/a_ops.csv" "$T/f_ops.csv" || fail "merged ops.csv differs from the unsharded one"
cmp -s "$T/a_co.csv" "$T/f_co.csv" || fail "merged coexec.csv differs from the unsharded one"
[ "$(wc -l < "$T/a_co.csv")" -eq 91 ] || fail "coexec rows: $(wc -l < "$T/a_co.csv")"

# Merging a shard again adds nothing.
cp "$T/all.db" "$T/again.db"
"$P" collect merge "$T/s1.db" "$T/s1.db" --db "$T/again.db" --json > "$T/m2" || fail "merge again"
grep -q '"tasks_added":0,"rows_added":0' "$T/m2" || fail "merge again added: $(cat "$T/m2")"
"$P" collect export --db "$T/again.db" --ops "" --coexec "$T/g_co.csv" -q || fail "export again"
cmp -s "$T/g_co.csv" "$T/f_co.csv" || fail "merging twice changed coexec.csv"

# Another plan (more experiments) and another device are refused.
"$P" collect coexec $CO0 --experiments 31 --db "$T/p.db" --shard 0/3 -q > /dev/null || fail "other plan"
"$P" collect merge "$T/p.db" --db "$T/all.db" 2> "$T/err"; [ $? -eq 1 ] || fail "merged another plan"
grep -q "not the same campaign" "$T/err" || fail "message: $(cat "$T/err")"
"$P" collect profile $PR --model resnet50 --seq-len 64 --db "$T/q.db" --shard 0/3 -q > /dev/null || fail "seq 64"
"$P" collect merge "$T/q.db" --db "$T/all.db" 2> "$T/err"; [ $? -eq 1 ] || fail "merged another seq_len"
"$P" collect export --db "$T/all.db" --ops "" --coexec "$T/h_co.csv" -q || fail "export after refusals"
cmp -s "$T/h_co.csv" "$T/f_co.csv" || fail "a refused merge wrote rows"

# A shard resumes only as itself: not without --shard (that would run the
# whole plan into it), and a database of the whole plan does not become a shard.
"$P" collect coexec $CO --db "$T/s0.db" -q > /dev/null 2> "$T/err" && fail "shard resumed without --shard"
grep -q "holds shard 0/3 of a campaign: resume it with --shard 0/3" "$T/err" || fail "message: $(cat "$T/err")"
"$P" collect coexec $CO --db "$T/full.db" --shard 0/3 -q > /dev/null 2> "$T/err" && fail "whole plan resumed as a shard"
grep -q "made without --shard" "$T/err" || fail "message: $(cat "$T/err")"

# Bad sources stop the merge before anything is written: dest itself (by
# another name too), a missing, empty, truncated, non-SQLite or foreign file.
cp "$T/s0.db" "$T/d0.db"
"$P" collect merge "$T/s1.db" "$T/./d0.db" --db "$T/d0.db" 2> "$T/err"; [ $? -eq 1 ] || fail "merged into an input"
grep -q "is both a source and the destination" "$T/err" || fail "message: $(cat "$T/err")"
ln -s "$T/d0.db" "$T/link.db"
"$P" collect merge "$T/link.db" --db "$T/d0.db" 2> "$T/err"; [ $? -eq 1 ] || fail "merged a link to dest"
grep -q "is both a source and the destination" "$T/err" || fail "message: $(cat "$T/err")"
: > "$T/empty.db"
echo "not sqlite" > "$T/text.db"
head -c 5000 "$T/s2.db" > "$T/trunc.db"
/usr/bin/python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table t(x)'); c.commit()" \
    "$T/other.sqlite" 2> /dev/null || cp "$T/text.db" "$T/other.sqlite"
cp "$T/other.sqlite" "$T/other0.sqlite"
for bad in none.db empty.db text.db trunc.db other.sqlite; do
    "$P" collect merge "$T/s1.db" "$T/$bad" --db "$T/new.db" 2> "$T/err"; [ $? -eq 1 ] || fail "merged $bad"
    grep -q "$bad" "$T/err" || fail "message for $bad: $(cat "$T/err")"
    grep -q "engine failed\|database:  " "$T/err" && fail "garbled message for $bad: $(cat "$T/err")"
    [ -e "$T/new.db" ] && fail "a failed merge left $T/new.db ($bad)"
    "$P" collect merge "$T/s1.db" "$T/$bad" --db "$T/d0.db" 2> /dev/null && fail "merged $bad into d0"
done
"$P" collect export --db "$T/d0.db" --ops "" --coexec "$T/d0_co.csv" -q || fail "export d0"
"$P" collect export --db "$T/s0.db" --ops "" --coexec "$T/s0_co.csv" -q || fail "export s0"
cmp -s "$T/d0_co.csv" "$T/s0_co.csv" || fail "a refused merge wrote rows into d0"
# Two sources of different plans, into a database that has neither plan:
# refused before the first is copied.
"$P" collect profile $PR --model resnet50 --db "$T/pr.db" -q > /dev/null || fail "profile into pr.db"
"$P" collect status --db "$T/pr.db" > "$T/pr0" || fail "status pr.db"
"$P" collect merge "$T/s0.db" "$T/p.db" --db "$T/pr.db" 2> "$T/err"; [ $? -eq 1 ] || fail "merged two plans"
grep -q "p.db: plan/coexec/.* in $T/s0.db: not the same campaign" "$T/err" || fail "message: $(cat "$T/err")"
"$P" collect status --db "$T/pr.db" > "$T/pr1" || fail "status pr.db"
cmp -s "$T/pr0" "$T/pr1" || fail "a refused merge of two plans wrote: $(cat "$T/pr1")"
# A destination of another program is not taken over.
"$P" collect merge "$T/s1.db" --db "$T/other.sqlite" 2> "$T/err"; [ $? -eq 1 ] || fail "merged into a foreign database"
grep -q "not a campaign database" "$T/err" || fail "message: $(cat "$T/err")"
cmp -s "$T/other.sqlite" "$T/other0.sqlite" || fail "the foreign database was changed"
# A meta table with rows but no magic is another program's; an empty one is
# ours, left by a collector killed before its first write, and resumes.
if /usr/bin/python3 -c "import sqlite3" 2> /dev/null; then
    /usr/bin/python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)'); c.execute(\"insert into meta values('owner','another program')\"); c.commit()" "$T/meta.sqlite"
    cp "$T/meta.sqlite" "$T/meta0.sqlite"
    "$P" collect merge "$T/s1.db" --db "$T/meta.sqlite" 2> "$T/err"; [ $? -eq 1 ] || fail "merged into a foreign meta table"
    grep -q "no pairsight magic" "$T/err" || fail "message: $(cat "$T/err")"
    "$P" collect status --db "$T/meta.sqlite" 2> "$T/err"; [ $? -eq 1 ] || fail "status took a foreign meta table"
    grep -q "no pairsight magic" "$T/err" || fail "message: $(cat "$T/err")"
    cmp -s "$T/meta.sqlite" "$T/meta0.sqlite" || fail "the foreign database with a meta table was changed"
    /usr/bin/python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)'); c.commit()" "$T/killed.db"
    "$P" collect coexec $CO --db "$T/killed.db" --shard 0/3 -q > /dev/null || fail "resume of a database killed at its creation"
fi
# A shard not merged is told, in text and JSON.
"$P" collect merge "$T/s0.db" "$T/s2.db" --db "$T/part.db" --json > "$T/m3" 2> "$T/err" || fail "partial merge"
grep -q '"shards_missing":1' "$T/m3" || fail "partial merge JSON: $(cat "$T/m3")"
grep -q "lacks 1 shard of the campaign (1/3)" "$T/err" || fail "no missing-shard warning: $(cat "$T/err")"
"$P" collect merge "$T/s1.db" --db "$T/part.db" --json > "$T/m3" 2> "$T/err" || fail "last shard"
grep -q '"shards_missing":0' "$T/m3" || fail "complete merge JSON: $(cat "$T/m3")"
[ -s "$T/err" ] && fail "complete merge warns: $(cat "$T/err")"
# collect status says which shard a database is, and which shards a merged
# one lacks (text and JSON).
"$P" collect status --db "$T/s1.db" > "$T/st1" || fail "status s1"
grep -q "shard 1/3 of a campaign" "$T/st1" || fail "status of a shard: $(cat "$T/st1")"
"$P" collect merge "$T/s0.db" --db "$T/half.db" -q 2> /dev/null || fail "merge one shard"
"$P" collect status --db "$T/half.db" > "$T/st1" || fail "status half"
grep -q "merged shards: 2 missing (1/3, 2/3)" "$T/st1" || fail "status of a partial merge: $(cat "$T/st1")"
"$P" collect status --db "$T/half.db" --json > "$T/st1" || fail "status half --json"
grep -q '"shard":null,"shards_missing":2' "$T/st1" || fail "status --json of a partial merge: $(cat "$T/st1")"
# Shards of 3 and of 4 of one plan: those of 3 make it whole, no warning.
"$P" collect coexec $CO --db "$T/t0.db" --shard 0/4 -q > /dev/null || fail "shard 0/4"
"$P" collect merge "$T/s0.db" "$T/s1.db" "$T/s2.db" "$T/t0.db" --db "$T/mixed.db" -q 2> "$T/err" || fail "mixed N"
[ -s "$T/err" ] && fail "shards of 3 and 4 warned: $(cat "$T/err")"

# status and export of a mistyped --db fail and create nothing; an export
# that fails for want of rows writes neither file.
"$P" collect status --db "$T/typo.db" 2> "$T/err" && fail "status of a missing database"
grep -q "typo.db: no such campaign database" "$T/err" || fail "message: $(cat "$T/err")"
[ -e "$T/typo.db" ] && fail "status created $T/typo.db"
"$P" collect profile $PR --model resnet50 --db "$T/po.db" -q > /dev/null || fail "profile only"
"$P" collect export --db "$T/po.db" --ops "$T/po_ops.csv" --coexec "$T/po_co.csv" 2> "$T/err" && fail "export without coexec"
grep -q "po.db: the campaign has no co-execution rows" "$T/err" || fail "message: $(cat "$T/err")"
[ -e "$T/po_ops.csv" ] && fail "a failed export wrote ops.csv"

# One shard per device, run in parallel and merged.
"$P" collect coexec $CO --db "$T/dev.db" --devices 0,1,2,3 -q > /dev/null || fail "--devices"
[ -f "$T/dev.db.shard3-of-4" ] || fail "no shard database for device 3"
"$P" collect export --db "$T/dev.db" --ops "" --coexec "$T/d_co.csv" -q || fail "export --devices"
cmp -s "$T/d_co.csv" "$T/f_co.csv" || fail "--devices coexec.csv differs from the unsharded one"

# Counters on partitions, device memory and the runs' clocks are merged
# too: ops.csv with its *_tpc counters and the status equal the unsharded.
for d in cfull c0 c1; do
    sh=""
    [ $d != cfull ] && sh="--shard ${d#c}/2"
    # shellcheck disable=SC2086
    "$P" collect profile $PR --model resnet50 --db "$T/$d.db" $sh -q > /dev/null || fail "profile $d"
    # shellcheck disable=SC2086
    "$P" collect counters --backend fake --model resnet50 --batch 2 --tpcs 8,20 --db "$T/$d.db" $sh -q > /dev/null ||
        fail "counters $d"
done
"$P" collect merge "$T/c0.db" "$T/c1.db" --db "$T/call.db" -q || fail "merge counters"
"$P" collect export --db "$T/cfull.db" --ops "$T/cf_ops.csv" --coexec "" -q || fail "export cfull"
"$P" collect export --db "$T/call.db" --ops "$T/ca_ops.csv" --coexec "" -q || fail "export call"
cmp -s "$T/cf_ops.csv" "$T/ca_ops.csv" || fail "merged ops.csv lacks the partition counters"
"$P" collect status --db "$T/cfull.db" | sed 1d > "$T/cf_st"
"$P" collect status --db "$T/call.db" | sed 1d > "$T/ca_st"
cmp -s "$T/cf_st" "$T/ca_st" || fail "merged status differs: $(cat "$T/ca_st")"
"$P" collect merge "$T/c0.db" "$T/c1.db" --db "$T/call.db" --json > "$T/m4" || fail "merge counters again"
grep -q '"tasks_added":0,"rows_added":0' "$T/m4" || fail "merge counters again added: $(cat "$T/m4")"
"$P" collect status --db "$T/call.db" --json | sed 's/"db":"[^"]*"//' > "$T/ca_st"
"$P" collect status --db "$T/cfull.db" --json | sed 's/"db":"[^"]*"//' > "$T/cf_st"
cmp -s "$T/cf_st" "$T/ca_st" || fail "status after merging twice: $(cat "$T/ca_st") vs $(cat "$T/cf_st")"

# A shard merged before it finished: its unfinished task had only a
# refused run's clock (committed before the task is done), and the next
# merge of the finished shard brings that task's clocks whole.
if /usr/bin/python3 -c "import sqlite3" 2> /dev/null; then
    cp "$T/c0.db" "$T/c0part.db"
    /usr/bin/python3 -c "
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
t = c.execute('SELECT task FROM clocks ORDER BY task LIMIT 1').fetchone()[0]
c.execute('UPDATE tasks SET done = 0 WHERE key = ?', (t,))
c.execute('DELETE FROM clocks WHERE task = ?', (t,))
c.execute('INSERT INTO clocks VALUES (?, 0, 900.0, 1)', (t,))
for tab, col in (('ops', 'task'), ('counters', 'task'), ('counters_tpc', 'task'), ('coexec', 'task')):
    cols = [r[1] for r in c.execute('PRAGMA table_info(%s)' % tab)]
    if col in cols:
        c.execute('DELETE FROM %s WHERE %s = ?' % (tab, col), (t,))
c.commit()" "$T/c0part.db" || fail "making a partial shard"
    "$P" collect merge "$T/c0part.db" --db "$T/cpart.db" -q 2> /dev/null || fail "merge of the partial shard"
    "$P" collect merge "$T/c0.db" "$T/c1.db" --db "$T/cpart.db" -q || fail "merge of the finished shards"
    q="SELECT task, run, sm_mhz, refused FROM clocks ORDER BY task, run"
    /usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchall())" \
        "$T/cpart.db" "$q" > "$T/cp_clk"
    /usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchall())" \
        "$T/call.db" "$q" > "$T/ca_clk"
    cmp -s "$T/cp_clk" "$T/ca_clk" || fail "clocks after merging a partial shard: $(cat "$T/cp_clk")"
fi

# A shard of --devices killed with SIGKILL: the command fails naming it and
# how it ended, and the same command again resumes it and merges.
"$P" collect coexec $CO --db "$T/dk.db" --devices 0,1 --fake-delay-us 100000 -q > /dev/null 2> "$T/err" &
pid=$!
wait_done "$T/dk.db.shard0-of-2" 2
kill -9 "$(pgrep -P $pid | head -n 1)" 2>/dev/null
wait $pid && fail "--devices with a shard killed: exit 0"
grep -q "on device [01] failed (killed by signal 9" "$T/err" || fail "message: $(cat "$T/err")"
[ -e "$T/dk.db" ] && fail "--devices merged with a shard missing"
"$P" collect coexec $CO --db "$T/dk.db" --devices 0,1 -q > /dev/null || fail "--devices resumed"
"$P" collect export --db "$T/dk.db" --ops "" --coexec "$T/dk_co.csv" -q || fail "export --devices resumed"
cmp -s "$T/dk_co.csv" "$T/f_co.csv" || fail "resumed --devices coexec.csv differs from the unsharded one"

# The Slurm array script and the Kubernetes Indexed Job's script, run here
# as their schedulers would (two tasks, fake backend), merge to the same
# rows as one unsharded run of the same plan.
S=scripts/slurm/collect-array.sbatch
Y=scripts/k8s/collect-job.yaml
ENV="PAIRSIGHT=$P BACKEND=fake HP=resnet50:2 LP=bert-base:2 EXPERIMENTS=8 RUNS=2"
for k in 0 1; do
    # An array numbered from 1 (--array=1-2): task IDs 1 and 2 are shards 0 and 1.
    env $ENV OUT="$T/slurm" SLURM_ARRAY_TASK_ID=$((k + 1)) SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=2 \
        bash "$S" > /dev/null 2>&1 || fail "slurm task $k"
done
env $ENV OUT="$T/slurm2" SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_STEP=2 SLURM_ARRAY_TASK_COUNT=2 bash "$S" \
    > /dev/null 2> "$T/err" && fail "slurm array with step 2"
grep -q "submit it with step 1" "$T/err" || fail "message: $(cat "$T/err")"
grep -q '^#SBATCH --output=[^/]*$' "$S" || fail "#SBATCH --output names a folder Slurm would not create"
sed -n '/^            - |$/,/^          resources:/p' "$Y" | sed '1d;$d' > "$T/k8s.sh"
[ -s "$T/k8s.sh" ] || fail "no script in $Y"
mkdir -p "$T/k8s"
for k in 0 1; do
    env $ENV DATA="$T/k8s" SHARDS=2 JOB_COMPLETION_INDEX=$k sh -e "$T/k8s.sh" > /dev/null 2>&1 || fail "k8s pod $k"
done
for m in resnet50 bert-base; do
    "$P" collect profile --backend fake --model $m --batch 2 --db "$T/one.db" -q > /dev/null || fail "one $m"
done
"$P" collect coexec --backend fake --hp resnet50:2 --lp bert-base:2 --experiments 8 --runs 2 --db "$T/one.db" -q \
    > /dev/null || fail "one coexec"
"$P" collect export --db "$T/one.db" --ops "$T/o_ops.csv" --coexec "$T/o_co.csv" -q || fail "export one"
for d in slurm k8s; do
    "$P" collect merge "$T/$d"/shard-*.db --db "$T/$d.db" -q || fail "merge $d"
    "$P" collect export --db "$T/$d.db" --ops "$T/${d}_ops.csv" --coexec "$T/${d}_co.csv" -q || fail "export $d"
    cmp -s "$T/${d}_ops.csv" "$T/o_ops.csv" && cmp -s "$T/${d}_co.csv" "$T/o_co.csv" || fail "$d shards differ"
done
echo "test_collect_shard: ok"
