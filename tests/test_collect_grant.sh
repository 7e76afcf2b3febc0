#!/bin/sh
# A driver may grant a green context fewer SMs than asked (PyTorch #195378:
# 114 for 120 on an L40S). The fake backend models one that rounds down to a
# multiple of 8 SMs (--fake-grant 8): `collect info` records what each count
# is granted, and a campaign asked for 10 TPCs (20 SMs) measures on the 16
# SMs granted, so that its rows name the SMs the context actually got.
CLI=${1:?usage: test_collect_grant.sh PAIRSIGHT}
. tests/clitest.sh

expect 0 "$CLI" collect info --backend fake --fake-grant 8 --json
has "$T/out" '"tpcs":10,"asked_sms":20,"granted_sms":16}'
has "$T/out" '"tpcs":8,"asked_sms":16,"granted_sms":16}'
has "$T/out" '"tpcs":54,"asked_sms":108,"granted_sms":108}'
has "$T/out" '"valid_tpcs":[4,8,12,'
expect 0 "$CLI" collect info --backend fake --fake-grant 8
has "$T/out" "granted SMs        other than asked (asked->granted): 10->8, 12->8, 14->8, 18->16, 20->16"
# Without a grant model nothing is probed: no grants listed.
expect 0 "$CLI" collect info --backend fake --json
has "$T/out" '"green_contexts":[]'

B="--backend fake --fake-grant 8 --db $T/c.db -q"
# shellcheck disable=SC2086
expect 0 "$CLI" collect profile $B --model mobilenetv2 --batch 2 --tpcs 10,44,54
has "$T/err" "10 TPCs: the driver grants a green context 16 SMs for the 20 asked; measuring on 8 TPCs"
# shellcheck disable=SC2086
expect 0 "$CLI" collect coexec $B --hp mobilenetv2:2 --lp mobilenetv2:2 --tpcs 10,44 --experiments 3 --runs 1
expect 0 "$CLI" collect export --db "$T/c.db" --ops "$T/ops.csv" --coexec "$T/coexec.csv" -q
# ops.csv: gpu,model,batch,op,...,tpcs is column 6 (FORMATS.md); coexec.csv: hp_tpcs, lp_tpcs 11 and 12.
tp=$(awk -F, 'NR > 1 { print $6 }' "$T/ops.csv" | sort -un | tr '\n' ' ')
[ "$tp" = "8 44 54 " ] || fail "ops.csv TPC counts: '$tp', want 8 44 54 (10 asked, 8 granted)"
sp=$(awk -F, 'NR > 1 { print $11 "/" $12 }' "$T/coexec.csv" | sort -u | tr '\n' ' ')
[ "$sp" = "44/8 8/44 " ] || fail "coexec.csv splits: '$sp', want 44/8 8/44"
# An asked count the driver refuses outright (2 SMs, below the minimum) stays an error.
# shellcheck disable=SC2086
expect 1 "$CLI" collect profile $B --model mobilenetv2 --batch 2 --tpcs 1
expect 0 "$CLI" check "$T/ops.csv" "$T/coexec.csv"
finish test_collect_grant
