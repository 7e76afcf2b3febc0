#!/bin/sh
# pairsight colocate on input a user gets wrong (issue 17, as a user meets
# it): co-locations that break the colocations.csv contract, and place with
# GPU types the tables or the model do not have. Every error names the file,
# line and field, or the flag and the value.
CLI=${1:?usage: test_colocate_input_cli.sh PAIRSIGHT}
F=tests/data/colocate
. tests/clitest.sh
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
finish test_colocate_input_cli
