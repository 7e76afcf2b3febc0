#!/bin/sh
# pairsight colocate on input a user gets wrong (issue 17, as a user meets
# it): co-locations that break the colocations.csv contract, and place with
# GPU types the tables or the model do not have. Every error names the file,
# line and field, or the flag and the value.
CLI=${1:?usage: test_colocate_input_cli.sh PAIRSIGHT}
F=tests/data/colocate
. tests/clitest.sh
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
SW="--workloads $F/sparse_workloads.csv"
SC="--colocations $F/sparse_colocations.csv"
expect 0 "$CLI" colocate train $SW $SC --kind lowrank --out "$T/lr.psc"

# A co-location of one workload is not a co-location (a row lost from a
# pair): refused, with the file and line, not predicted as if co-located.
sed -n '1,2p' $F/sparse_colocations.csv > "$T/one.csv"
expect 1 "$CLI" colocate predict --model "$T/lr.psc" $SW --colocations "$T/one.csv"
has "$T/err" "one.csv:2:"
has "$T/err" "has 1 workload"
expect 1 "$CLI" check $F/sparse_workloads.csv "$T/one.csv"
has "$T/err" "one.csv:2:3: co-location 'sim/res_batch8-train+res_batch8-train@100/100' has 1 workload"
expect 1 "$CLI" colocate train $SW --colocations "$T/one.csv" --kind ratio --out "$T/x.psc"
has "$T/err" "one.csv:2:"
# Slots 1..k, as `pairsight check` wants them: slot 3 of a pair is refused.
awk -F, 'BEGIN {OFS=","} NR==3 {$3=3} {print}' $F/sparse_colocations.csv > "$T/gap.csv"
expect 1 "$CLI" colocate predict --model "$T/lr.psc" $SW --colocations "$T/gap.csv"
has "$T/err" "gap.csv:3:3: co-location 'sim/res_batch8-train+res_batch8-train@100/100' has slot 3 but 2 rows"
expect 1 "$CLI" colocate eval $SW --colocations "$T/gap.csv" --seeds 1 --predictors ratio -q
has "$T/err" "gap.csv:3:3:"
# A workload missing from workloads.csv: the file, line and column.
awk -F, 'BEGIN {OFS=","} NR==4 {$4="nosuch"} {print}' $F/sparse_colocations.csv > "$T/unk.csv"
expect 1 "$CLI" colocate predict --model "$T/lr.psc" $SW --colocations "$T/unk.csv"
has "$T/err" "unk.csv:4:4: workload 'nosuch' on SIMGPU has no row in the workloads file"
expect 1 "$CLI" colocate eval $SW $SC --transfer "$T/unk.csv" --seeds 1 --predictors ratio -q
has "$T/err" "unk.csv:4:4: workload 'nosuch'"
# From standard input the rows are checked all the same.
expect 1 sh -c "'$CLI' colocate predict --model '$T/lr.psc' $SW --colocations - < '$T/gap.csv'"
has "$T/err" "has slot 3"
expect 1 sh -c "'$CLI' colocate predict --model '$T/lr.psc' $SW --colocations - < '$T/one.csv'"
has "$T/err" "has 1 workload"

# place: the library's "place:" is not said twice.
J="--jobs res_batch8-train,lm_batch8-train,rec_batch16-train"
expect 1 "$CLI" colocate place --model "$T/lr.psc" $SW --jobs nosuch --gpus 1
has "$T/err" "pairsight: colocate: place: --jobs: 'nosuch' has no row in $F/sparse_workloads.csv"
expect 1 "$CLI" colocate place --model "$T/lr.psc" $SW --jobs res_batch8-train,nosuch --gpus 1:SIMGPU
has "$T/err" "place: --jobs: 'nosuch' has no row in $F/sparse_workloads.csv on the GPU types of --gpus"
# A GPU type that workloads.csv lacks is named, with the types it has.
expect 1 "$CLI" colocate place --model "$T/lr.psc" $SW $J --gpus 2:simgpu
has "$T/err" "--gpus: GPU type 'simgpu' has no row in workloads.csv (it has SIMGPU)"
# Untyped GPUs with workloads on several GPUs: which one is meant is asked,
# not guessed (the first row's GPU was taken).
sed 's/^SIMGPU,/OTHERGPU,/' $F/sparse_workloads.csv > "$T/w2.csv"
(cat $F/sparse_workloads.csv; tail -n +2 "$T/w2.csv") > "$T/w12.csv"
expect 1 "$CLI" colocate place --model "$T/lr.psc" --workloads "$T/w12.csv" $J --gpus 2
has "$T/err" "job 'res_batch8-train' has rows on several GPUs in workloads.csv (SIMGPU, OTHERGPU): give --gpus N:TYPE"
expect 0 "$CLI" colocate place --model "$T/lr.psc" --workloads "$T/w12.csv" $J --gpus 2:SIMGPU
# A GPU type the model was not trained on: placed, with the warning predict gives.
expect 0 "$CLI" colocate place --model "$T/lr.psc" --workloads "$T/w12.csv" $J --gpus 1:SIMGPU,1:OTHERGPU
has "$T/err" "warning: model trained on GPU SIMGPU, placing on OTHERGPU"
expect 0 "$CLI" colocate place --model "$T/lr.psc" --workloads "$T/w2.csv" $J --gpus 2 --json
has "$T/err" "placing on OTHERGPU"
expect 0 "$CLI" colocate place --model "$T/lr.psc" $SW $J --gpus 2
grep -q warning "$T/err" && fail "place on the model's own GPU warns: $(cat "$T/err")"
# --jobs and --gpus errors say which flag and what is wrong.
expect 2 "$CLI" colocate place --model "$T/lr.psc" $SW --jobs "res_batch8-train*0" --gpus 1
has "$T/err" "--jobs: 'res_batch8-train*0'"
expect 2 "$CLI" colocate place --model "$T/lr.psc" $SW --jobs "res_batch8-train*65" --gpus 1
has "$T/err" "--jobs:"
expect 2 "$CLI" colocate place --model "$T/lr.psc" $SW --jobs "a,,b" --gpus 1
has "$T/err" "--jobs: empty job name"
expect 2 "$CLI" colocate place --model "$T/lr.psc" $SW --jobs res_batch8-train --gpus "2:"
has "$T/err" "--gpus: '2:'"
expect 2 "$CLI" colocate place --model "$T/lr.psc" $SW --jobs res_batch8-train --gpus 65
has "$T/err" "--gpus:"
# eval --place scores random splits: a mode it would not apply is refused,
# and --cases without --place is not silently dropped.
for mode in --unseen --unseen-pairs "--transfer $F/sparse_colocations.csv" "--test $F/sparse_colocations.csv"; do
    # shellcheck disable=SC2086
    expect 2 "$CLI" colocate eval $SW $SC --place $mode --seeds 1 --predictors ratio -q
    has "$T/err" "--place scores random splits"
done
expect 2 "$CLI" colocate eval $SW $SC --cases 4x2 --seeds 1 --predictors ratio -q
has "$T/err" "--cases needs --place"
# eval --place on 3-way sets with K = 2: no group can be measured, so every
# job runs alone and every policy scores 1; said, not left to be guessed.
W3="--workloads $F/workloads.csv --colocations $F/colocations3.csv"
expect 0 "$CLI" colocate eval $W3 --place --cases 4x2 --seeds 1 --predictors ratio
has "$T/err" "warning: no measured co-location of at most 2 workloads (--max-per-gpu): every job runs alone"
expect 0 "$CLI" colocate eval $W3 --place --cases 4x2 --seeds 1 --predictors ratio --max-per-gpu 3
grep -q warning "$T/err" && fail "eval --place warns with K = 3 on 3-way sets: $(cat "$T/err")"
# select: a target with rows on several GPUs asks for --gpu (the first
# row's was taken), and a GPU the model was not trained on warns.
C2="--candidates lm_batch8-train,rec_batch16-train"
expect 1 "$CLI" colocate select --model "$T/lr.psc" --workloads "$T/w12.csv" --target res_batch8-train $C2
has "$T/err" "select: target 'res_batch8-train' has rows on several GPUs in $T/w12.csv (SIMGPU, OTHERGPU): give --gpu"
expect 0 "$CLI" colocate select --model "$T/lr.psc" --workloads "$T/w12.csv" --target res_batch8-train $C2 --gpu SIMGPU
# The same candidate twice: a usage error that says so (issue 41 item 14;
# it was "row 3 ... has slot 1 twice" from inside the library).
expect 2 "$CLI" colocate select --model "$T/lr.psc" --workloads "$T/w12.csv" --target res_batch8-train --gpu SIMGPU \
    --candidates lm_batch8-train,rec_batch16-train+lm_batch8-train,lm_batch8-train
has "$T/err" "select: --candidates: 'lm_batch8-train' is listed twice: give each candidate once"
grep -q warning "$T/err" && fail "select on the model's GPU warns: $(cat "$T/err")"
expect 0 "$CLI" colocate select --model "$T/lr.psc" --workloads "$T/w12.csv" --target res_batch8-train $C2 --gpu OTHERGPU
has "$T/err" "warning: model trained on GPU SIMGPU, predicting for OTHERGPU"
# A model records the k of its training co-locations (ks) and warns on
# others, in predict, select and place; a model file without ks (written
# before it was recorded) loads and warns about nothing.
W3="--workloads $F/workloads.csv --colocations $F/colocations3.csv"
expect 0 "$CLI" colocate train $W3 --kind ratio --out "$T/r3.psc"
has "$T/r3.psc" "ks 3"
expect 0 "$CLI" colocate predict --model "$T/r3.psc" --workloads $F/workloads.csv --colocations $F/colocations4.csv
has "$T/err" "warning: model trained on co-locations of k = 3 workloads, predicting k = 4"
expect 0 "$CLI" colocate predict --model "$T/r3.psc" $W3
grep -q warning "$T/err" && fail "predict on the trained k warns: $(cat "$T/err")"
expect 0 "$CLI" colocate select --model "$T/r3.psc" --workloads $F/workloads.csv --target alpha_batch2-inf \
    --candidates beta_batch4-train
has "$T/err" "predicting k = 2"
expect 0 "$CLI" colocate place --model "$T/r3.psc" --workloads $F/workloads.csv --jobs alpha_batch2-inf*4 --gpus 2
has "$T/err" "placing groups of k = 2"
expect 0 "$CLI" colocate train $SW $SC --kind auto --out "$T/a.psc" -q
has "$T/a.psc" "ks 2,3,4"
"$PY" - "$T/r3.psc" "$T/old.psc" <<'EOF'
import re, sys, zlib
src = open(sys.argv[1], "rb").read()
out, at = [src[:src.index(b"\n") + 1]], src.index(b"\n") + 1
while not src.startswith(b"end", at):
    m = re.match(rb"section (\S+) (\d+) [0-9a-f]{8}\n", src[at:])
    name, n = m.group(1), int(m.group(2))
    data = src[at + m.end():at + m.end() + n]
    if name == b"params":
        data = re.sub(rb"\nks [0-9,]+\n", b"\n", data)
    head = b"%s %d" % (name, len(data))
    out.append(b"section %s %08x\n" % (head, zlib.crc32(data, zlib.crc32(head))) + data)
    at += m.end() + n
out.append(src[at:])
open(sys.argv[2], "wb").write(b"".join(out))
EOF
grep -q "^ks" "$T/old.psc" && fail "the older model file still has ks"
expect 0 "$CLI" colocate predict --model "$T/old.psc" --workloads $F/workloads.csv --colocations $F/colocations4.csv
grep -q warning "$T/err" && fail "a model without ks warns: $(cat "$T/err")"
# train --out - wrote a file named - (predict --out - is standard output).
case $CLI in /*) ABS=$CLI ;; *) ABS=$PWD/$CLI ;; esac
(cd "$T" && "$ABS" colocate train --workloads "$OLDPWD/$F/workloads.csv" --colocations "$OLDPWD/$F/colocations3.csv" \
    --kind ratio --out - -q >/dev/null 2>"$T/err"; echo $? >"$T/rc")
[ "$(cat "$T/rc")" = 2 ] || fail "train --out -: exit $(cat "$T/rc"), expected 2"
has "$T/err" "train: --out: a model is written to a file"
[ -e "$T/-" ] && fail "train --out - made a file named -"
# place --shares are a co-located job's (help, docs): a job alone runs at
# 100, its normalized throughput 1 (it ran at the lowest share given).
expect 0 "$CLI" colocate place --model "$T/lr.psc" $SW --jobs res_batch8-train,lm_batch8-train --gpus 2 \
    --shares 50 --json
has "$T/out" '"share_pct":100,"norm_tput":1}'
grep -q '"share_pct":50' "$T/out" && fail "place put a job alone at 50: $(cat "$T/out")"
# A pipe or FIFO is read once, by the loader (the file check reads only
# regular files twice): a FIFO works as a file does, and a bad one is still
# refused with its row.
mkfifo "$T/fifo.csv"
cat $F/sparse_colocations.csv > "$T/fifo.csv" &
expect 0 timeout 60 "$CLI" colocate predict --model "$T/lr.psc" $SW --colocations "$T/fifo.csv" --out "$T/fifo.out"
wait
"$CLI" colocate predict --model "$T/lr.psc" $SW $SC --out "$T/file.out" 2>/dev/null
cmp -s "$T/fifo.out" "$T/file.out" || fail "predict from a FIFO differs from the same file"
cat "$T/one.csv" > "$T/fifo.csv" &
expect 1 timeout 60 "$CLI" colocate predict --model "$T/lr.psc" $SW --colocations "$T/fifo.csv"
wait
has "$T/err" "has 1 workload"
finish test_colocate_input_cli
