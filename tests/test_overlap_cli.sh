#!/bin/sh
# pairsight import abacus / check / overlap eval on a tiny Abacus-like git
# repository built here (tests/abacus_fixture.sh): work tree, bare mirror,
# --rev, the default commit, row errors with FILE:LINE:COLUMN.
PS=${1:-build/pairsight}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v git >/dev/null 2>&1 || { echo "skip: git not on PATH"; exit 77; }
. tests/abacus_fixture.sh
make_abacus "$T/ab" || fail "fixture"
git clone -q --bare "$T/ab" "$T/mirror.git" || fail "bare clone"
OLD=$(git -C "$T/ab" rev-parse HEAD~1)

# The bare mirror at the default commit: the newest that holds the profiles.
"$PS" import abacus "$T/mirror.git" --out "$T/o.csv" 2> "$T/err" || { cat "$T/err"; fail "import mirror"; }
grep -q "600 experiments from 5 files" "$T/err" || { cat "$T/err"; fail "summary: $(cat "$T/err")"; }
grep -q "$OLD" "$T/err" || fail "default rev is not the commit before the deletion"
"$PS" check "$T/o.csv" > "$T/chk" || fail "check rejects the import"
grep -q "overlap, 1260 rows, 600 experiments" "$T/chk" || fail "check line: $(cat "$T/chk")"
head -1 "$T/o.csv" | grep -q "^experiment,gpu,setting,mechanism,k,slot,model,batch,seq_len,op_start,op_end,model_ops,median_us,mean_us,std_us$" || fail header
grep -q "^A100/2in7/resnet50_bert:2,A100-40GB,dedicated,mps,2,1,resnet50," "$T/o.csv" || fail "first row"
grep -q ",mig-2g.10gb,mps,2," "$T/o.csv" || fail "mig rows"

# --rev, and the work tree of the older commit: the same table.
"$PS" import abacus "$T/mirror.git" --rev "$OLD" --out "$T/r.csv" -q || fail "import --rev"
cmp -s "$T/o.csv" "$T/r.csv" || fail "--rev differs from the default"
git -C "$T/ab" checkout -q "$OLD" || fail checkout
"$PS" import abacus "$T/ab" --out "$T/w.csv" --json > "$T/j" || fail "import work tree"
cmp -s "$T/o.csv" "$T/w.csv" || fail "work tree differs from the mirror"
grep -q '"rev":"worktree"' "$T/j" || grep -q '"rev": "worktree"' "$T/j" || fail "json: $(cat "$T/j")"

# Issue 41 item 11: a name git quotes (core.quotePath) is read in both modes,
# the same set; in the work tree a FIFO or a link is an error, not a hang or
# "content absent".
Q="$T/ab/data/profile/A100/2in7/na\"\303\257ve.csv"
Q=$(printf '%b' "$Q")
cp "$T/ab/data/profile/A100/2in7/resnet50_bert.csv" "$Q" || fail "quoted copy"
git -C "$T/ab" add -A && git -C "$T/ab" -c user.name=t -c user.email=t@t commit -qm quoted || fail "commit quoted"
"$PS" import abacus "$T/ab" --out "$T/q1.csv" 2> "$T/err" || fail "work tree with a quoted name: $(cat "$T/err")"
grep -q "from 6 files" "$T/err" || fail "work tree: $(cat "$T/err")"
"$PS" import abacus "$T/ab" --rev HEAD --out "$T/q2.csv" 2> "$T/err" || fail "git with a quoted name: $(cat "$T/err")"
grep -q "from 6 files" "$T/err" || fail "git mode dropped the quoted name: $(cat "$T/err")"
cmp -s "$T/q1.csv" "$T/q2.csv" || fail "git and work tree differ"
mkfifo "$T/ab/data/profile/A100/2in7/fifo.csv" || fail mkfifo
timeout 20 "$PS" import abacus "$T/ab" --out "$T/x.csv" 2> "$T/err"; [ $? = 1 ] || fail "a FIFO: $(cat "$T/err")"
grep -q "fifo.csv: not a regular file" "$T/err" || fail "message: $(cat "$T/err")"
rm "$T/ab/data/profile/A100/2in7/fifo.csv"
ln -s /dev/zero "$T/ab/data/profile/A100/2in7/zero.csv"
timeout 20 "$PS" import abacus "$T/ab" --out "$T/x.csv" 2> "$T/err"; [ $? = 1 ] || fail "a link: $(cat "$T/err")"
grep -q "zero.csv: .*only regular files are read" "$T/err" || fail "message: $(cat "$T/err")"
rm "$T/ab/data/profile/A100/2in7/zero.csv" "$Q"
git -C "$T/ab" checkout -q "$OLD" 2>/dev/null || fail "back to $OLD"

# A commit without the profiles; a bad row names the file, line and column.
"$PS" import abacus "$T/mirror.git" --rev HEAD --out "$T/x.csv" 2> "$T/err" && fail "HEAD has no profiles"
grep -q "no profile" "$T/err" || fail "message: $(cat "$T/err")"
sed -i '4s/^resnet50,[0-9]*,/resnet50,99,/' "$T/ab/data/profile/A100/2in7/resnet50_vgg16.csv"
"$PS" import abacus "$T/ab" --out "$T/x.csv" 2> "$T/err" && fail "accepted start 99"
grep -q "resnet50_vgg16.csv:4:2: not an integer in 0..18" "$T/err" || fail "message: $(cat "$T/err")"
[ -e "$T/x.csv" ] && fail "wrote output on error"
sed -i '4s/^resnet50,99,/resnet60,1,/' "$T/ab/data/profile/A100/2in7/resnet50_vgg16.csv"
"$PS" import abacus "$T/ab" --out "$T/x.csv" 2> "$T/err" && fail "accepted resnet60"
grep -q "resnet50_vgg16.csv:4:1: not one of Abacus's seven models" "$T/err" || fail "message: $(cat "$T/err")"

# check: broken overlap tables.
sed '3d' "$T/o.csv" > "$T/b1.csv"
"$PS" check "$T/b1.csv" 2> "$T/err" && fail "accepted a missing slot"
grep -q "b1.csv:2:6: experiment 'A100/2in7/resnet50_bert:2' has k=2 but not a row for each slot" "$T/err" || fail "message: $(cat "$T/err")"
sed '3s/,mps,2,2,/,mps,2,1,/' "$T/o.csv" > "$T/b2.csv"
"$PS" check "$T/b2.csv" 2> "$T/err" && fail "accepted a slot twice"
grep -q "b2.csv:3:6: slot: given twice" "$T/err" || fail "message: $(cat "$T/err")"
sed '3s/,A100-40GB,/,Z99,/' "$T/o.csv" > "$T/b3.csv"
"$PS" check "$T/b3.csv" 2> "$T/err" && fail "accepted an unknown GPU"
grep -q "b3.csv:3:2: gpu: not a GPU of the catalog" "$T/err" || fail "message: $(cat "$T/err")"
awk -F, 'NR == 2 { $11 = 30 } { print }' OFS=, "$T/o.csv" > "$T/b4.csv"
"$PS" check "$T/b4.csv" 2> "$T/err" && fail "accepted op_end past model_ops"
grep -q "b4.csv:2:11: op_end" "$T/err" || fail "message: $(cat "$T/err")"
sed '3s/,mps,2,2,\(.*\),[0-9.]*,\([0-9.]*\),\([0-9.]*\)$/,mps,2,2,\1,1.5,\2,\3/' "$T/o.csv" > "$T/b5.csv"
"$PS" check "$T/b5.csv" 2> "$T/err" && fail "accepted two medians"
grep -q "b5.csv:3:13: median_us: differs from the value on line 2" "$T/err" || fail "message: $(cat "$T/err")"

# overlap eval: every protocol and method in the JSON; the predictor learns
# the fixture's law better than max(solo) on held-out pairs.
"$PS" overlap eval --overlap "$T/o.csv" --rounds 60 --mlp-epochs 5 --json > "$T/e.json" || fail "eval"
for p in random leave-pair k-way leave-model mig; do
    for m in pairsight abacus_mlp abacus_xgb max_solo sum_solo; do
        /usr/bin/python3 -c "import json,sys; d=json.load(open('$T/e.json')); assert d['schema'] and '$m' in d['protocols']['$p'], '$p $m'" || fail "json lacks $p $m"
    done
done
/usr/bin/python3 -c "
import json; d = json.load(open('$T/e.json'))['protocols']['leave-pair']
assert d['pairsight']['n'] == 480, d['pairsight']
for p in ('random', 'leave-pair', 'k-way', 'leave-model', 'mig'):
    f = json.load(open('$T/e.json'))['protocols'][p]['floor']
    assert f['n'] > 0 and 0 < f['mape'] < 50, (p, f)
assert d['pairsight']['mape'] < d['max_solo']['mape'], d
" || fail "leave-pair: $(cat "$T/e.json")"
"$PS" overlap eval --overlap "$T/o.csv" --protocols random,nope 2> "$T/err" && fail "accepted protocol nope"
grep -q "unknown protocol 'nope'" "$T/err" || fail "message: $(cat "$T/err")"
"$PS" overlap eval --help | grep -q -- "--protocols LIST" || fail "help"

# train and predict; operator lists named by module path add FLOPs per range.
"$PS" overlap train --overlap "$T/o.csv" --out "$T/m.model" --rounds 40 -q || fail train
head -1 "$T/m.model" | grep -q "^pairsight-overlap-model 4$" || fail "model magic"
"$PS" overlap predict --model "$T/m.model" --overlap "$T/o.csv" > "$T/p.csv" 2> "$T/err" || fail predict
grep -q "^experiment,predicted_us,median_us$" "$T/p.csv" || fail "predict header"
[ "$(wc -l < "$T/p.csv")" -eq 601 ] || fail "predict rows"
grep -q "MAPE" "$T/err" || fail "predict summary"
# A model of 2-way co-runs predicts every 3-way one (composed from pairs).
awk -F, 'NR == 1 || ($3 == "dedicated" && $5 == 2)' "$T/o.csv" > "$T/two.csv"
awk -F, 'NR == 1 || $5 == 3' "$T/o.csv" > "$T/three.csv"
"$PS" overlap train --overlap "$T/two.csv" --out "$T/m3.model" --rounds 40 -q || fail "train 2-way"
grep -q "kmax 2" "$T/m3.model" || fail "kmax of a 2-way model"
"$PS" overlap predict --model "$T/m3.model" --overlap "$T/three.csv" > /dev/null 2> "$T/err" || fail "predict 3-way"
grep -q "60 of 60 experiments predicted" "$T/err" || fail "3-way: $(cat "$T/err")"
# A new setting from its single runs: the mig co-runs get the setting model.
awk -F, 'NR == FNR { if ($10 == $11) idle[$1] = 1; next }
    FNR == 1 || $3 == "dedicated" || ($3 == "mig-2g.10gb" && idle[$1])' "$T/o.csv" "$T/o.csv" > "$T/ms.csv"
awk -F, 'NR == 1 || $3 == "mig-2g.10gb"' "$T/o.csv" > "$T/mig.csv"
"$PS" overlap train --overlap "$T/ms.csv" --out "$T/m4.model" --rounds 40 -q || fail "train with mig single runs"
grep -q "^seen 1 dedicated$" "$T/m4.model" || fail "seen settings: $(grep -a '^seen' "$T/m4.model")"
grep -aq "^setting-booster " "$T/m4.model" || fail "no setting booster"
"$PS" overlap predict --model "$T/m4.model" --overlap "$T/mig.csv" > /dev/null 2> "$T/err" || fail "predict mig"
# 8 of them run a (model, batch) with no single run in the slice: unknown.
grep -q "52 of 60 experiments predicted" "$T/err" || fail "mig: $(cat "$T/err")"
echo "garbage" > "$T/bad.model"
"$PS" overlap predict --model "$T/bad.model" --overlap "$T/o.csv" 2> "$T/err" && fail "accepted a bad model"
grep -q "bad.model:1:1: not a pairsight overlap model" "$T/err" || fail "message: $(cat "$T/err")"
mkdir "$T/ops"
printf '# pairsight oplist 1\n# model=resnet50 batch=4 seq_len=0 ops=4\nconv conv1 n=4 c=3 h=224 w=224 k=64 r=7 s=7 stride=2 pad=3\nconv layer1.0.conv1 n=4 c=64 h=56 w=56 k=64\ngemm fc m=4 n=1000 k=2048\neltwise elsewhere.relu elems=10\n' > "$T/ops/r50.txt"
"$PS" overlap train --overlap "$T/o.csv" --oplists "$T/ops" --out "$T/m2.model" --rounds 20 -q || fail "train --oplists"
"$PS" overlap predict --model "$T/m2.model" --overlap "$T/o.csv" > /dev/null 2> "$T/err" && fail "predict without the oplists"
grep -q "trained with --oplists" "$T/err" || fail "message: $(cat "$T/err")"
"$PS" overlap predict --model "$T/m2.model" --overlap "$T/o.csv" --oplists "$T/ops" > /dev/null 2>&1 || fail "predict --oplists"
# Issue 41 item 11: memory follows the input, not a blob's inflated size. A
# packed blob of 128 MiB of blank lines (a few hundred KB of git) after two
# rows used to be read whole, by git and again by the importer: the peak
# (children included, git too) stays within 32 MiB of the small fixture's.
peak() { python3 -c 'import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"; }
B="$T/bomb"
mkdir -p "$B/data/profile/A100/2in7" || fail "bomb dir"
{ head -3 "$T/ab/data/profile/A100/2in7/resnet50_bert.csv"; head -c 134217728 /dev/zero | tr '\0' '\n'; } > "$B/data/profile/A100/2in7/a.csv"
(cd "$B" && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm bomb && git repack -adq) || fail "bomb repo"
rm "$B/data/profile/A100/2in7/a.csv"
set -- $(peak "$PS" import abacus "$T/mirror.git" --rev "$OLD" --out "$T/p1.csv")
[ "$1" = 0 ] || fail "import for the baseline peak"
base=$2
set -- $(peak "$PS" import abacus "$B" --rev HEAD --out "$T/p2.csv")
[ "$1" = 0 ] || fail "import of the blank-line blob"
[ "$(wc -l < "$T/p2.csv")" = 5 ] || fail "blank-line blob: $(cat "$T/p2.csv")"
[ "$2" -lt $((base + 32768)) ] || fail "peak RSS $2 KB for a 128 MiB blob of blank lines (small fixture: $base KB)"
echo "ok"
