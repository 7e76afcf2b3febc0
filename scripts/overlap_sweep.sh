#!/bin/sh
# The leave-one-pair-out sweep that chose pairsight's overlap features and
# settings (issue 28, docs/overlap.md): every variant is scored by leave-pair
# only, inside the 2-way dedicated experiments, pairsight alone (baselines do
# not depend on it), one XGBoost thread. Prints a markdown table; each
# variant's JSON lands in OUT/NAME.json and is reused when present.
# With --doc, rewrites the block between the overlap-sweep markers of
# docs/overlap.md instead of printing.
# Usage: scripts/overlap_sweep.sh [--doc] OVERLAP.csv OPLISTS_DIR [OUT] [PAIRSIGHT]
set -e
doc=
[ "${1:-}" = --doc ] && { doc=1; shift; }
[ $# -ge 2 ] || { echo "usage: $0 [--doc] OVERLAP.csv OPLISTS_DIR [OUT] [PAIRSIGHT]" >&2; exit 2; }
csv=$1 ops=$2 out=${3:-out/overlap-sweep} ps=${4:-build/pairsight}
mkdir -p "$out"
base="--features times,ratios,active,share,batch"
while read -r name opts; do
    echo "$opts" > "$out/$name.opts"
    [ -s "$out/$name.json" ] && continue
    # shellcheck disable=SC2086
    "$ps" overlap eval --overlap "$csv" --protocols leave-pair --pairsight-only --threads 1 --json \
        $opts > "$out/$name.json.tmp"
    mv "$out/$name.json.tmp" "$out/$name.json"
done <<EOF2
f_default $base
f_tra --features times,ratios,active
f_ras --features ratios,active,share
f_tras --features times,ratios,active,share
f_trasbg $base,grain
f_rasg --features ratios,active,share,grain
f_trag --features times,ratios,active,grain
o_trasbo --oplists $ops $base,ops
o_traso --oplists $ops --features times,ratios,active,share,ops
o_trao --oplists $ops --features times,ratios,active,ops
o_trasbog --oplists $ops $base,ops,grain
o_trasog --oplists $ops --features times,ratios,active,share,ops,grain
s_d4 --oplists $ops $base,ops --depth 4
s_d8 --oplists $ops $base,ops --depth 8
s_d8g --oplists $ops $base,ops,grain --depth 8
s_r600 --oplists $ops $base,ops --rounds 600
s_ridge01 --oplists $ops $base,ops --ridge 0.01
chosen --oplists $ops
EOF2
table=$(/usr/bin/python3 - "$out" "$ops" <<'PY'
import glob, json, os, sys
print("| variant | options (leave-pair, pairsight only) | pooled MAPE % | worst pair MAPE % | max_solo pooled |")
print("|---|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    name = os.path.basename(f)[:-5]
    r = json.load(open(f))["protocols"]["leave-pair"]
    o = os.path.join(sys.argv[1], name + ".opts")
    opts = open(o).read().strip().replace(sys.argv[2], "OPLISTS") if os.path.exists(o) else ""
    p = r["pairsight"]
    print("| %s | `%s` | %.2f | %.2f (%s) | %.2f |" % (name, opts, p["mape"], p["worst_mape"], p["worst"],
                                                     r["max_solo"]["mape"]))
PY
)
if [ -n "$doc" ]; then
    f=docs/overlap.md
    awk -v t="$table" '/<!-- overlap-sweep:begin -->/ { print; print t; skip = 1; next }
        /<!-- overlap-sweep:end -->/ { skip = 0 } !skip { print }' "$f" > "$f.tmp" && mv "$f.tmp" "$f"
    echo "overlap_sweep: $f rewritten" >&2
else
    printf '%s\n' "$table"
fi
