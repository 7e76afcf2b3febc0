#!/bin/sh
# The per-data-set table of `pairsight colocate eval` (docs/colocate.md,
# "Results on every table"): every co-location table it finds is evaluated
# (20 % training, every predictor, auto under every rule) into OUT/NAME.json,
# then scripts/colocate_table.py prints the policies x data sets table (one
# column per k where a table has several), auto minus the best predictor,
# auto's mean blend weights and its pick rule's choices.
#
# usage: scripts/colocate_table.sh [--out DIR] [--seeds N] [--tables a,b,..]
#            [--extra DIR] [--predictors LIST] [--pairsight BIN]
#   --extra DIR   converted tables (scripts/gavel_convert.py -> DIR/gavel-*/,
#                 scripts/kace_comb_convert.py -> DIR/kace-comb3|comb4|mixed/);
#                 tables that are not there are skipped, and said so
#   --tables      default: every table known (kace-v100 kace-splits kace-sparse
#                 kace-comb3 kace-comb4 kace-mixed gavel-v100 gavel-p100
#                 gavel-k80 fixture3 fixture4 sim-sparse); NAME-fNN is table
#                 NAME at NN % training (e.g. gavel-p100-f40), sim-sparse-sN
#                 the sparse fixture's law redrawn with seed N
#                 (tests/data/colocate/make_sparse.py N OUT/sim-sN)
# Each eval's wall time goes to OUT/times.txt. Runs under nice -n 10.
set -eu
out=out/colocate-table seeds=20 extra= preds= ps=build/pairsight
tables="kace-v100 kace-splits kace-sparse kace-comb3 kace-comb4 kace-mixed gavel-v100 gavel-p100 gavel-k80 fixture3 fixture4 sim-sparse"
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --tables) tables=$(echo "$2" | tr , ' '); shift 2 ;;
    --extra) extra=$2; shift 2 ;;
    --predictors) preds=$2; shift 2 ;;
    --pairsight) ps=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "colocate_table.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
K=../shared/data/kace-v100 F=tests/data/colocate
mkdir -p "$out"
: > "$out/times.txt"
# kace-sparse: kace-v100's workloads cut to gpu, workload, exclusive_tput.
if [ -f "$K/workloads.csv" ]; then
    cut -d, -f1-3 "$K/workloads.csv" > "$out/kace-sparse-workloads.csv"
fi
args() {
    case $1 in
    kace-v100) f="$K/colocations.csv"; echo "--workloads $K/workloads.csv --colocations $f --scaling $K/workload_scaling.csv" ;;
    kace-splits) f="$K/colocations_splits.csv"; echo "--workloads $K/workloads.csv --colocations $f --scaling $K/workload_scaling.csv" ;;
    kace-sparse) f="$K/colocations.csv"; echo "--workloads $out/kace-sparse-workloads.csv --colocations $f" ;;
    kace-comb3|kace-comb4|kace-mixed) f="$extra/$1/colocations.csv"
        echo "--workloads $K/workloads.csv --colocations $f --scaling $K/workload_scaling.csv" ;;
    gavel-*) f="$extra/$1/colocations.csv"; echo "--workloads $extra/$1/workloads.csv --colocations $f" ;;
    fixture3) f="$F/colocations3.csv"; echo "--workloads $F/workloads.csv --colocations $f --scaling $F/workload_scaling.csv" ;;
    fixture4) f="$F/colocations4.csv"; echo "--workloads $F/workloads.csv --colocations $f --scaling $F/workload_scaling.csv" ;;
    sim-sparse) f="$F/sparse_colocations.csv"; echo "--workloads $F/sparse_workloads.csv --colocations $f" ;;
    sim-sparse-s[0-9]*) s=$out/sim-s${1#sim-sparse-s}
        [ -f "$s/sparse_colocations.csv" ] || /usr/bin/python3 "$F/make_sparse.py" "${1#sim-sparse-s}" "$s"
        f="$s/sparse_colocations.csv"; echo "--workloads $s/sparse_workloads.csv --colocations $f" ;;
    *) echo "colocate_table.sh: unknown table '$1'" >&2; exit 2 ;;
    esac
    [ -f "$f" ] || echo "MISSING $f"
}
for t in $tables; do
    frac=0.2 base=$t
    case $t in *-f[0-9][0-9]) frac=0.${t##*-f} base=${t%-f[0-9][0-9]} ;; esac
    a=$(args "$base")
    case $a in *MISSING*) echo "colocate_table.sh: $t skipped: ${a##*MISSING }" >&2; continue ;; esac
    echo "colocate_table.sh: $t" >&2
    s=$(date +%s)
    # shellcheck disable=SC2086
    nice -n 10 "$ps" colocate eval -q --json --seeds "$seeds" --train-frac "$frac" ${preds:+--predictors "$preds"} $a \
        > "$out/$t.json"
    echo "$t $(( $(date +%s) - s )) s" >> "$out/times.txt"
done
/usr/bin/python3 scripts/colocate_table.py $(for t in $tables; do [ -f "$out/$t.json" ] && echo "$out/$t.json"; done)
