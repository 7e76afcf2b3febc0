#!/usr/bin/python3
"""Print the per-data-set table of `pairsight colocate eval --json` outputs
(scripts/colocate_table.sh): policies x data sets, one column per k where a
table has several, auto under its rule and under the other one, each minus
the best predictor (the best of the kinds other than auto, per column),
then auto's mean blend weights and its pick rule's choices per table.

usage: scripts/colocate_table.py OUT/NAME.json ...   (NAME: the data set)
"""
import json
import math
import os
import sys

KINDS = ["kace_lr", "kace_rf", "kace_mlp", "xu_rf", "ratio", "mps", "lowrank"]
ORDER = ["oracle", "random", "memcap", "sm", "mem", "best_rule"] + KINDS


def columns(name, r):
    """(label, policies, other-rule auto) per column of one eval."""
    other = r.get("auto_other", {})
    pk = r.get("per_k", {})
    if len(pk) > 1:
        return [(f"{name} {k}", pk[k]["policies"], other.get("per_k", {}).get(k)) for k in sorted(pk, key=int)]
    return [(name, r["policies"], other.get("mean"))]


def fmt(v, sign=False):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:+.3f}" if sign else f"{v:.3f}"


def mape_table(paths):
    """Prediction error in the same runs: MAPE % per predictor (of each
    workload's throughput, or of the sum for sum kinds) and data set."""
    evals = []
    for p in paths:
        with open(p) as f:
            evals.append((os.path.splitext(os.path.basename(p))[0], json.load(f).get("predictors", {})))
    kinds = []
    for _, pr in evals:
        kinds += [k for k in pr if k not in kinds]
    print("| MAPE % (of) | " + " | ".join(n for n, _ in evals) + " |")
    print("|---" * (len(evals) + 1) + "|")
    for k in kinds:
        of = next((pr[k]["of"] for _, pr in evals if k in pr), "")
        cells = [pr.get(k, {}).get("mape") for _, pr in evals]
        print(f"| {k} ({of}) | " + " | ".join("-" if v is None else f"{v:.1f}" for v in cells) + " |")


def main(paths):
    cols, notes, rule = [], [], None
    for p in paths:
        name = os.path.splitext(os.path.basename(p))[0]
        with open(p) as f:
            r = json.load(f)
        rule = r.get("auto_rule", rule)
        cols += columns(name, r)
        w = ", ".join(f"{k} {v:.2f}" for k, v in sorted(r.get("auto_weights", {}).items(), key=lambda x: -x[1]))
        ch = ", ".join(f"{k} {v}" for k, v in sorted(r.get("auto_chosen", {}).items(), key=lambda x: -x[1]))
        notes.append(f"* {name} ({r['runs']} runs): blend weights {w or '-'}; pick chose {ch or '-'}")
    other = "pick" if rule != "pick" else "blend"
    pols = []
    for _, pv, _ in cols:
        pols += [q for q in pv if q not in pols and q != "auto"]
    pols.sort(key=lambda q: ORDER.index(q) if q in ORDER else len(ORDER))
    print("| policy | " + " | ".join(c[0] for c in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for q in pols:
        print(f"| {q} | " + " | ".join(fmt(pv.get(q)) for _, pv, _ in cols) + " |")
    best = [max((pv[k] for k in KINDS if pv.get(k) is not None), default=None) for _, pv, _ in cols]
    auto = [pv.get("auto") for _, pv, _ in cols]
    alt = [a for _, _, a in cols]
    print(f"| **auto ({rule})** | " + " | ".join(f"**{fmt(a)}**" for a in auto) + " |")
    print(f"| auto ({rule}) - best | " + " | ".join(fmt(a - b if a is not None and b else None, True)
                                                  for a, b in zip(auto, best)) + " |")
    print(f"| auto ({other}) | " + " | ".join(fmt(a) for a in alt) + " |")
    print(f"| auto ({other}) - best | " + " | ".join(fmt(a - b if a is not None and b else None, True)
                                                   for a, b in zip(alt, best)) + " |")
    print()
    print("\n".join(notes))
    print()
    mape_table(paths)
    worst = min((a - b for a, b in zip(auto, best) if a is not None and b), default=float("nan"))
    print(f"\nauto ({rule}) minus the best predictor: worst {worst:+.3f} over {len(cols)} columns")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
