#!/bin/sh
# pairsight check on the real data sets in ../shared/data: every file passes
# with its row counts. Skipped (77) where ../shared/data is absent.
# Usage: sh tests/test_check_shared.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_check_shared.sh PAIRSIGHT}
shared=../shared/data
[ -d "$shared" ] || { echo "skip: $shared not present"; exit 77; }
. tests/clitest.sh
expect 0 "$CLI" check "$shared"/*/*.csv
has "$T/out" "orion-v100/ops.csv: ops, 1703 rows, 5 (model, batch) groups"
has "$T/out" "kace-v100/colocations_splits.csv: colocations, 436 rows"
has "$T/out" "kace-v100/workloads.csv: workloads, 44 rows"

finish test_check_shared
