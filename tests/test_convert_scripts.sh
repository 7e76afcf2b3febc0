#!/bin/sh
# scripts/gavel_convert.py and scripts/kace_comb_convert.py on small files
# in the real artefacts' formats: both spellings of Gavel's job keys, jobs
# at other scale factors, a job that does not run alone, a pair that did not
# fit, the GPU list, and bad input (a clear error, exit 1, no half table);
# KACE's two files read with git from a clone and from a bare mirror. The
# converted tables must load in pairsight colocate.
CLI=${1:?usage: test_convert_scripts.sh PAIRSIGHT}
. tests/clitest.sh
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
G=scripts/gavel_convert.py
K=scripts/kace_comb_convert.py

# Gavel's simulation_throughputs.json spelling: "(name, scale factor)".
cat >"$T/sim.json" <<'EOF'
{"v100": {
 "('ResNet-18 (batch size 16)', 1)": {"null": 40.0,
   "('ResNet-18 (batch size 16)', 1)": [30.0, 30.0], "('A3C', 1)": [35.0, 4.0],
   "('LM (batch size 5)', 1)": [0.0, 0.0], "('ResNet-18 (batch size 16)', 2)": [1.0, 1.0]},
 "('A3C', 1)": {"null": 5.0, "('ResNet-18 (batch size 16)', 1)": [4.0, 35.0], "('A3C', 1)": [4.5, 4.5],
   "('LM (batch size 5)', 1)": [4.0, 0.0]},
 "('LM (batch size 5)', 1)": {"null": 60.0, "('LM (batch size 5)', 1)": [50.0, 50.0],
   "('ResNet-18 (batch size 16)', 1)": [0.0, 0.0]},
 "('ResNet-18 (batch size 16)', 2)": {"null": 70.0}},
 "k80": {"('A3C', 1)": {"null": 2.0, "('A3C', 1)": [1.5, 1.5]}}}
EOF
expect 0 "$PY" $G "$T/sim.json" - --list
has "$T/out" "k80"
has "$T/out" "v100"
expect 0 "$PY" $G "$T/sim.json" "$T/g" v100
has "$T/err" "v100: 3 workloads, 5 pairs"
has "$T/g/workloads.csv" "v100,resnet-18_batch16-train,40.0"
has "$T/g/workloads.csv" "v100,lm_batch5-train,60.0"
has "$T/g/colocations.csv" "gavel-v100/a3c-train+resnet-18_batch16-train@100/100,v100,1,a3c-train,100,4.0"
has "$T/g/colocations.csv" "gavel-v100/a3c-train+lm_batch5-train@100/100,v100,2,lm_batch5-train,100,"
grep -q "lm_batch5-train+resnet-18" "$T/g/colocations.csv" && fail "a pair that did not fit was kept"
grep -q ",70.0" "$T/g/workloads.csv" && fail "a job at scale factor 2 was kept"
expect 0 "$CLI" colocate train --workloads "$T/g/workloads.csv" --colocations "$T/g/colocations.csv" \
    --kind ratio --out "$T/g.psc" -q
expect 0 "$PY" $G "$T/sim.json" "$T/all"
has "$T/all/workloads.csv" "k80,a3c-train,2.0"

# The oracle_throughputs.json spelling: plain names; a job with 0 alone.
cat >"$T/oracle.json" <<'EOF'
{"p100": {"ResNet-50 (batch size 16)": {"null": 8.0, "ResNet-50 (batch size 16)": [5.0, 5.0],
   "CycleGAN": [6.0, 1.0], "ResNet-50 (batch size 128)": [1.0, 1.0]},
 "CycleGAN": {"null": 1.5, "ResNet-50 (batch size 16)": [1.0, 6.0], "CycleGAN": [1.0, 1.0]},
 "ResNet-50 (batch size 128)": {"null": 0.0, "ResNet-50 (batch size 16)": [1.0, 1.0]}}}
EOF
expect 0 "$PY" $G "$T/oracle.json" "$T/o"
has "$T/err" "left out (throughput 0 alone, so no normalized throughput): ResNet-50 (batch size 128)"
has "$T/err" "p100: 2 workloads, 3 pairs"
has "$T/o/colocations.csv" "gavel-p100/cyclegan-train+resnet-50_batch16-train@100/100,p100,2,resnet-50_batch16-train,100,6.0"
grep -q "batch128" "$T/o/workloads.csv" "$T/o/colocations.csv" && fail "a job that does not run alone was kept"

# An output folder that cannot be made, or '-' (for --list only): a message,
# exit 1, no traceback; a JSON file with a UTF-8 BOM is read.
expect 1 "$PY" $G "$T/sim.json" /proc/none/x v100
has "$T/err" "gavel_convert.py: /proc/none/x: cannot write"
grep -q Traceback "$T/err" && fail "gavel_convert.py: a traceback for an unwritable folder"
expect 1 "$PY" $G "$T/sim.json" - v100
has "$T/err" "'-' is for --list only"
[ -e ./- ] && fail "gavel_convert.py made a folder named -"
printf '\357\273\277' > "$T/bom.json"
cat "$T/oracle.json" >> "$T/bom.json"
expect 0 "$PY" $G "$T/bom.json" "$T/ob"
cmp -s "$T/o/colocations.csv" "$T/ob/colocations.csv" || fail "a JSON file with a BOM converts differently"

# Bad input: a clear message, exit 1, no table left behind.
expect 1 "$PY" $G "$T/none.json" "$T/x"
has "$T/err" "No such file or directory"
expect 1 "$PY" $G "$T/oracle.json" "$T/x" a100
has "$T/err" "has no GPU a100 (it has p100)"
printf '{"v100": {"A3C": {"null": 5.0, "A3C": [4.5]}}}' >"$T/bad.json"
expect 1 "$PY" $G "$T/bad.json" "$T/x"
has "$T/err" "expected the pair's two throughputs"
[ -e "$T/x/colocations.csv" ] || [ -e "$T/x/colocations.csv.tmp" ] && fail "a failed conversion left a table"
printf 'not json' >"$T/bad2.json"
expect 1 "$PY" $G "$T/bad2.json" "$T/x"
has "$T/err" "not JSON"
expect 0 "$PY" $G --help
has "$T/out" "examples:"

# KACE: the two files at their paths in a git repository.
if command -v git >/dev/null 2>&1; then
    R="$T/kace"
    mkdir -p "$R/output/shared_throughput" "$R/scripts/multiinstance/dataset/KACE"
    printf 'workload\nA\nB\nC\nD\n' >"$T/wl.csv"
    {
        echo 'workload1,workload2,workload3,"(w1_100, w2_100, w3_100)"'
        echo 'A,B,C,"(1.5, 2.0, None)"'
        echo 'A,B,C,"(9.0, 9.0, 9.0)"'
        echo 'A,B,Z,"(1.0, 1.0, 1.0)"'
    } >"$R/output/shared_throughput/0730_share3_batch2-8_share_steps_stage2.csv"
    {
        echo 'workload1,workload2,workload3,workload4,w1throughput,w2throughput,w3throughput,w4throughput'
        echo 'A,B,C,D,1.0,2.0,3.0,0.0'
    } >"$R/scripts/multiinstance/dataset/KACE/0906_total_labels_comb4_batch2-8_targetMPS100.csv"
    (cd "$R" && git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm t) ||
        fail "git repository for the KACE files"
    expect 0 "$PY" $K "$R" "$T/wl.csv" "$T/k"
    has "$T/err" "kace-comb3: 1 co-locations (1 rows with an unknown workload skipped)"
    has "$T/k/kace-comb3/colocations.csv" "kace-comb3/A+B+C@100/100/100,V100-SXM2-32GB,1,A,100,1.5"
    has "$T/k/kace-comb3/colocations.csv" "kace-comb3/A+B+C@100/100/100,V100-SXM2-32GB,3,C,100,"
    grep -q ",9.0" "$T/k/kace-comb3/colocations.csv" && fail "a co-location measured twice was kept twice"
    has "$T/k/kace-comb4/colocations.csv" "kace-comb4/A+B+C+D@100/100/100/100,V100-SXM2-32GB,4,D,100,"
    git clone -q --mirror "$R" "$T/kace.git" || fail "bare mirror"
    expect 0 "$PY" $K "$T/kace.git" "$T/wl.csv" "$T/k2"
    cmp -s "$T/k/kace-comb4/colocations.csv" "$T/k2/kace-comb4/colocations.csv" || fail "mirror and clone differ"
    expect 1 "$PY" $K "$T" "$T/wl.csv" "$T/k3"
    has "$T/err" "cannot read output/shared_throughput/"
    expect 1 "$PY" $K "$R" "$T/none.csv" "$T/k3"
    has "$T/err" "No such file or directory"
    expect 1 "$PY" $K "$R" "$T/wl.csv" /proc/none/x
    has "$T/err" "kace_comb_convert.py: /proc/none/x/kace-comb3: cannot write"
    grep -q Traceback "$T/err" && fail "kace_comb_convert.py: a traceback for an unwritable folder"
    # workloads.csv as FORMATS.md allows it: comment lines, a BOM, CRLF.
    { printf '\357\273\277# KACE workloads\r\n'; sed 's/$/\r/' "$T/wl.csv"; } > "$T/wl2.csv"
    expect 0 "$PY" $K "$R" "$T/wl2.csv" "$T/k4"
    cmp -s "$T/k/kace-comb3/colocations.csv" "$T/k4/kace-comb3/colocations.csv" ||
        fail "a workloads.csv with a comment, a BOM and CRLF converts differently"
else
    echo "git absent: the KACE converter's part skipped"
fi
finish test_convert_scripts
