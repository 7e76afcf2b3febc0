#!/bin/sh
# pairsight overlap twin on a made-up overlap.csv (tests/data/overlap_twin.csv:
# resnet50 and vgg16 at batch 4, 2- and 3-way) and small operator lists
# (tests/data/overlap_twin_oplists): text and JSON, calibration on the 2-way
# experiments, and the errors.
# Usage: sh tests/test_overlap_twin_cli.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_overlap_twin_cli.sh PAIRSIGHT}
. tests/clitest.sh
O=tests/data/overlap_twin.csv
L=tests/data/overlap_twin_oplists
expect 0 "$CLI" overlap twin --overlap "$O" --oplists "$L"
has "$T/out" "k=2"
has "$T/out" "resnet50_vgg16_vgg16"
has "$T/err" "2 operator lists (0 operators in no group), 12 experiments"
expect 0 "$CLI" overlap twin --overlap "$O" --oplists "$L" --calibrate --fit-flops --fit-every 1 --json -q
cp "$T/out" "$T/cal.json"
/usr/bin/python3 - "$T/cal.json" <<'PY' || fail "calibration JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "pairsight.overlap_twin.v1", d["schema"]
b, a = d["before"], d["after"]
assert b["params"]["launch_us"] == 3.8 and b["params"]["flop_scale"] == 1, b["params"]
assert set(b["by_k"]) == {"2", "3"} and b["by_k"]["2"]["n"] == 7 and b["by_k"]["3"]["n"] == 3, b["by_k"]
assert b["by_file"]["resnet50_vgg16"]["k"] == 2 and b["by_file"]["resnet50_vgg16"]["n_solo"] == 2
# The fit sees the 2-way experiments only and cannot do worse there than the defaults.
assert a["by_k"]["2"]["mape"] <= b["by_k"]["2"]["mape"], (a["by_k"], b["by_k"])
assert a["params"]["launch_us"] != 3.8, a["params"]
PY
expect 0 "$CLI" overlap twin --overlap "$O" --oplists "$L" --launch-us 50 --sm-pack 1e9 --every 2 --json
has "$T/out" '"launch_us":50'
# Errors: a missing folder, a list whose groups are out of order, no --oplists.
expect 1 "$CLI" overlap twin --overlap "$O" --oplists "$T/none"
has "$T/err" "$T/none"
mkdir "$T/bad"
printf '# pairsight oplist 1\n# model=resnet50 batch=4 seq_len=0 ops=2\nconv layer1.0.conv1 n=4 c=64 h=56 w=56 k=64 r=1 s=1 stride=1 pad=0 groups=1\nconv conv1 n=4 c=3 h=224 w=224 k=64 r=7 s=7 stride=2 pad=3 groups=1\n' > "$T/bad/r.oplist"
expect 1 "$CLI" overlap twin --overlap "$O" --oplists "$T/bad"
has "$T/err" "groups out of order"
expect 2 "$CLI" overlap twin --overlap "$O"
expect 0 "$CLI" overlap twin --help
has "$T/out" "--fit-every N"
finish test_overlap_twin_cli
