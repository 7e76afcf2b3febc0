#!/usr/bin/env python3
"""Measured quality of `colocate shares` on KACE's V100 split pairs (issue 39).

For every pair with at least two measured share splits in
colocations_splits.csv, leave the pair out (every co-location of its two
workloads, at every share, in both tables), train the mps model on the rest
(colocations.csv's 100/100 pairs and the other pairs' splits), let
`colocate shares --candidates <the pair's measured splits>` choose, and
score the choice by its measured total normalised throughput
(sum of tput / exclusive_tput) over the best measured split's. Beside it:
the uniform 50/50 split (where measured), 100/100 (colocations.csv, where
measured), one random measured split per pair (random.Random(0), pairs in
file order) and the mean over the measured splits (a random split's
expectation).

Usage: scripts/shares_eval.py PAIRSIGHT DATA_DIR OUT.json [--doc docs/colocate.md]
       scripts/shares_eval.py --check OUT.json docs/colocate.md   (the doc's table is the JSON's)
Exits 77 with a reason when DATA_DIR is absent.
"""
import csv
import json
import os
import random
import subprocess
import sys
import tempfile

BEGIN = "<!-- shares-table: scripts/shares_table.sh writes this block -->"
END = "<!-- shares-table end -->"


def read_colocs(path):
    """{id: [(slot, workload, share, tput)]} in file order, and the header."""
    out = {}
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        header = r.fieldnames
        for row in r:
            out.setdefault(row["colocation"], []).append(row)
    return out, header


def norm_total(rows, excl):
    return sum(float(r["tput"]) / excl[r["workload"]] for r in rows)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    if sys.argv[1] == "--check":
        text = open(sys.argv[3]).read()
        i, j = text.find(BEGIN), text.find(END)
        want = table(json.load(open(sys.argv[2])))
        if i < 0 or j < i or text[i + len(BEGIN) + 1:j] != want:
            sys.exit("%s: the shares table differs from %s (rerun scripts/shares_table.sh)" % (sys.argv[3],
                                                                                          sys.argv[2]))
        print("shares table: matches %s" % sys.argv[2])
        return
    cli, data, out_json = sys.argv[1:4]
    doc = sys.argv[sys.argv.index("--doc") + 1] if "--doc" in sys.argv else None
    if not os.path.isfile(os.path.join(data, "colocations_splits.csv")):
        print("skip: %s/colocations_splits.csv absent (../shared/data not here)" % data)
        sys.exit(77)
    excl = {}
    with open(os.path.join(data, "workloads.csv"), newline="") as f:
        for row in csv.DictReader(f):
            excl[row["workload"]] = float(row["exclusive_tput"])
    base, header = read_colocs(os.path.join(data, "colocations.csv"))
    splits, _ = read_colocs(os.path.join(data, "colocations_splits.csv"))
    # (a, b) in the slot order first met -> {(share a, share b): [norm totals]}; a pair measured in both
    # orders is one pair, a split measured twice counts its mean.
    pairs = {}
    for cid, rows in splits.items():
        rows = sorted(rows, key=lambda r: int(r["slot"]))
        if len(rows) != 2 or any(r["tput"] == "" for r in rows):
            continue
        a, b = rows[0]["workload"], rows[1]["workload"]
        sh = (int(rows[0]["share_pct"]), int(rows[1]["share_pct"]))
        if (b, a) in pairs and a != b:
            a, b, sh = b, a, sh[::-1]
        pairs.setdefault((a, b), {}).setdefault(sh, []).append(norm_total(rows, excl))
    pairs = {k: [(s, sum(v) / len(v)) for s, v in sorted(m.items())] for k, m in pairs.items()}
    full = {}
    for cid, rows in base.items():
        if len(rows) == 2 and all(r["tput"] != "" for r in rows):
            full[frozenset(r["workload"] for r in rows)] = norm_total(rows, excl)
    rng = random.Random(0)
    result = []
    with tempfile.TemporaryDirectory() as tmp:
        for (a, b), measured in pairs.items():
            if len(measured) < 2:
                continue
            pick_random = rng.choice(measured)
            held = {a, b}
            train = os.path.join(tmp, "train.csv")
            with open(train, "w", newline="") as f:
                w = csv.DictWriter(f, header)
                w.writeheader()
                for tab in (base, splits):
                    for rows in tab.values():
                        if {r["workload"] for r in rows} != held:
                            w.writerows({k: r[k] for k in header} for r in rows)
            model = os.path.join(tmp, "m.psc")
            tables = ["--workloads", os.path.join(data, "workloads.csv"), "--scaling",
                      os.path.join(data, "workload_scaling.csv")]
            subprocess.run([cli, "colocate", "train", *tables, "--colocations", train, "--kind", "mps", "-q",
                            "--out", model], check=True)
            cands = ",".join("%d/%d" % s for s, _ in measured)
            rep = json.loads(subprocess.run([cli, "colocate", "shares", "--model", model, *tables, "--set",
                                             "%s,%s" % (a, b), "--candidates", cands, "--json"],
                                            check=True, capture_output=True, text=True).stdout)
            chosen = (rep["shares"][a], rep["shares"][b if b != a else b + "#2"])
            byshare = dict(measured)
            best_s, best = max(measured, key=lambda m: m[1])
            result.append({
                "pair": [a, b], "splits": len(measured),
                "best_split": "%d/%d" % best_s, "chosen_split": "%d/%d" % chosen,
                "chosen": byshare[chosen] / best,
                "uniform": byshare[(50, 50)] / best if (50, 50) in byshare else None,
                "full": full[frozenset(held)] / best if frozenset(held) in full else None,
                "random": pick_random[1] / best,
                "mean": sum(v for _, v in measured) / len(measured) / best,
                "extreme": best_s[0] == min(s[0] for s, _ in measured) or
                best_s[0] == max(s[0] for s, _ in measured),
            })
            print("%-60s best %s chosen %s: %.4f" % (a + "+" + b, result[-1]["best_split"],
                                                      result[-1]["chosen_split"], result[-1]["chosen"]),
                  file=sys.stderr)
    summary = {}
    for k in ("chosen", "uniform", "full", "random", "mean"):
        v = [r[k] for r in result if r[k] is not None]
        summary[k] = {"mean": sum(v) / len(v), "min": min(v), "pairs": len(v)}
    out = {"schema": "pairsight.shares_eval.v1", "data": os.path.basename(os.path.normpath(data)),
           "model": "mps", "pairs": result, "summary": summary}
    with open(out_json + ".tmp", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    os.replace(out_json + ".tmp", out_json)
    if doc:
        write_doc(doc, out)


def fmt(v):
    return "-" if v is None else "%.3f" % v


def table(out):
    s = out["summary"]
    lines = [
        "| | chosen (mps, left out) | uniform 50/50 | 100/100 | random split (seed 0) | mean over splits |",
        "|---|---|---|---|---|---|",
        "| mean | %s | %s | %s | %s | %s |" % tuple(fmt(s[k]["mean"]) for k in ("chosen", "uniform", "full", "random",
                                                                                 "mean")),
        "| worst pair | %s | %s | %s | %s | %s |" % tuple(fmt(s[k]["min"]) for k in ("chosen", "uniform", "full",
                                                                                       "random", "mean")),
        "| pairs | %d | %d | %d | %d | %d |" % tuple(s[k]["pairs"] for k in ("chosen", "uniform", "full", "random",
                                                                             "mean")),
        "",
        "| pair | splits | best measured | chosen | chosen / best | 50/50 | 100/100 | best at an extreme |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in out["pairs"]:
        lines.append("| %s + %s | %d | %s | %s | %s | %s | %s | %s |" % (
            r["pair"][0], r["pair"][1], r["splits"], r["best_split"], r["chosen_split"], fmt(r["chosen"]),
            fmt(r["uniform"]), fmt(r["full"]), "yes" if r["extreme"] else ""))
    return "\n".join(lines) + "\n"


def write_doc(path, out):
    text = open(path).read()
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        sys.exit("%s: no block between '%s' and '%s'" % (path, BEGIN, END))
    new = text[:i + len(BEGIN)] + "\n" + table(out) + text[j:]
    with open(path + ".tmp", "w") as f:
        f.write(new)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
