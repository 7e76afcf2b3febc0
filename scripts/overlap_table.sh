#!/bin/sh
# Abacus's real A100 co-runs (issue 28, docs/overlap.md): import the artefact
# from a clone or mirror, score every overlap predictor under every protocol,
# and print the markdown tables of docs/overlap.md beside Abacus's published
# figures. With --doc, rewrites the block between the overlap-tables markers
# of docs/overlap.md instead of printing.
# The operator lists (--oplists, FLOPs, bytes and kernels per range): --oplists DIR,
# else captured into OUT/oplists by tools/abacus_oplists.py where /usr/bin/python3
# has torch and torchvision, else none (the tables say which).
# Usage: scripts/overlap_table.sh [--repo DIR] [--rev COMMIT] [--out DIR] [--pairsight BIN] [--oplists DIR] [--doc]
#        scripts/overlap_table.sh --from FILE.json... [--doc]   (tables of eval JSONs already run,
#        one per protocol or all in one: `pairsight overlap eval --json`)
# The repository: --repo, else $PS_ABACUS_REPO (no default).
set -e
repo=${PS_ABACUS_REPO:-}
rev=4c33e2e out=out/overlap ps=build/pairsight doc= from= ops=
while [ $# -gt 0 ]; do
    case $1 in
    --repo) repo=$2; shift 2 ;;
    --rev) rev=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --pairsight) ps=$2; shift 2 ;;
    --oplists) ops=$2; shift 2 ;;
    --doc) doc=1; shift ;;
    --from) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do from="$from $1"; shift; done ;;
    *) echo "usage: $0 [--repo DIR] [--rev COMMIT] [--out DIR] [--pairsight BIN] [--oplists DIR] [--doc]" >&2; exit 2 ;;
    esac
done
if [ -z "$from" ]; then
    [ -n "$repo" ] || { echo "overlap_table: no Abacus repository: pass --repo DIR or set PS_ABACUS_REPO" >&2; exit 2; }
    [ -d "$repo" ] || { echo "overlap_table: no Abacus repository at $repo" >&2; exit 1; }
    mkdir -p "$out"
    "$ps" import abacus "$repo" --rev "$rev" --out "$out/overlap.csv"
    if [ -z "$ops" ] && /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
        PAIRSIGHT_LIBRARY=/nonexistent /usr/bin/python3 tools/abacus_oplists.py --out "$out/oplists" && ops=$out/oplists
    fi
    # Written whole or not at all: a stopped eval leaves no empty eval.json.
    # One XGBoost thread, as the published runs (docs/overlap.md, "Speed":
    # the same figures for 1/22 of the CPU on the loaded 2-core machine).
    trap 'rm -f "$out/eval.json.part"; exit 130' INT TERM
    "$ps" overlap eval --overlap "$out/overlap.csv" ${ops:+--oplists "$ops"} --threads 1 --json -v > "$out/eval.json.part" ||
        { rm -f "$out/eval.json.part"; exit 1; }
    mv -f "$out/eval.json.part" "$out/eval.json"
    trap - INT TERM
    from=$out/eval.json
fi
table=$(/usr/bin/python3 - "$rev" $from <<'PY'
import json, sys
d, ops = {}, set()
for f in sys.argv[2:]:
    j = json.load(open(f))
    d.update(j["protocols"])
    ops.add(j.get("oplists", False))
goal = {"random": "<= 2.9", "leave-pair": "<= 3.5", "k-way": "<= 4.5", "leave-model": "<= 4.0", "mig": "<= 5.5"}
published = {"random": "5.95 (MLP), 30.6 (LR), 29.2 (SVM)"}
methods = ["pairsight", "abacus_mlp", "abacus_xgb", "max_solo", "sum_solo"]
def cell(r):
    return "n/a" if r["mape"] is None else "%.2f" % r["mape"]
order = ["random", "leave-pair", "k-way", "leave-model", "mig"]
d = dict(sorted(d.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))
how = {frozenset([True]): "with", frozenset([False]): "without"}.get(frozenset(ops), "partly with")
print("MAPE (%%) of the median time; Abacus artefact at %s; pairsight %s operator lists (`--oplists`); "
      "`scripts/overlap_table.sh --doc`.\n" % (sys.argv[1], how))
print("| protocol | n | " + " | ".join(methods) + " | floor | Abacus published | goal (issue 38) |")
print("|---|---|" + "---|" * len(methods) + "---|---|---|")
for p, r in d.items():
    fl = "%.2f" % r["floor"]["mape"] if "floor" in r else ""
    print("| %s | %d | %s | %s | %s | %s |" % (p, r["pairsight"]["n"], " | ".join(cell(r[m]) for m in methods),
                                             fl, published.get(p, ""), goal.get(p, "")))
worst = [(p, r) for p, r in d.items() if "worst" in r["pairsight"]]
if worst:
    print("\nWorst held-out group (MAPE %):\n")
    print("| protocol | " + " | ".join(methods) + " |")
    print("|---|" + "---|" * len(methods))
    for p, r in worst:
        print("| %s | %s |" % (p, " | ".join("%.2f (%s)" % (r[m]["worst_mape"], r[m]["worst"]) if "worst" in r[m]
                                             else "n/a" for m in methods)))
PY
)
if [ -n "$doc" ]; then
    f=docs/overlap.md
    awk -v t="$table" '/<!-- overlap-tables:begin -->/ { print; print t; skip = 1; next }
        /<!-- overlap-tables:end -->/ { skip = 0 } !skip { print }' "$f" > "$f.tmp" && mv "$f.tmp" "$f"
    echo "overlap_table: $f rewritten" >&2
else
    printf '%s\n' "$table"
fi
