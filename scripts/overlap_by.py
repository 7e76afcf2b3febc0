#!/usr/bin/env python3
"""MAPE of `pairsight overlap predict` output by k, active processes and
combination (docs/overlap.md; the per-k and per-combination figures of issue 38).

    pairsight overlap predict --model M --overlap FILE.csv > PRED.csv
    scripts/overlap_by.py FILE.csv PRED.csv
"""
import collections
import csv
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: overlap_by.py OVERLAP.csv PREDICTIONS.csv")
    info = {}
    with open(sys.argv[1], newline="") as f:
        for r in csv.DictReader(f):
            e = info.setdefault(r["experiment"], {"k": int(r["k"]), "active": 0, "models": [],
                                                   "setting": r["setting"]})
            e["models"].append(r["model"])
            e["active"] += int(r["op_end"]) > int(r["op_start"])
    acc = collections.defaultdict(lambda: [0.0, 0])
    with open(sys.argv[2], newline="") as f:
        for r in csv.DictReader(f):
            if not r["predicted_us"]:
                continue
            e = info[r["experiment"]]
            err = abs(float(r["predicted_us"]) - float(r["median_us"])) / float(r["median_us"])
            keys = [("all", ""), ("k", "%s k=%d" % (e["setting"], e["k"])),
                    ("active", "%s k=%d active=%d" % (e["setting"], e["k"], e["active"])),
                    ("combination", "%s %s" % (e["setting"], "_".join(sorted(e["models"]))))]
            for key in keys:
                acc[key][0] += err
                acc[key][1] += 1
    print("| by | group | n | MAPE % |\n|---|---|---|---|")
    for (by, name), (s, n) in sorted(acc.items()):
        print("| %s | %s | %d | %.2f |" % (by, name, n, 100 * s / n))


if __name__ == "__main__":
    main()
