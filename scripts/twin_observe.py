#!/usr/bin/env python3
"""The twin's observations against the PairSight paper's (docs/simulator.md,
"Calibration"): Fig. 2's correlations, the DRAM-rate groups and the
intensity-rule residual, from simulated campaigns.

Usage: twin_observe.py ops.csv coexec.csv (single-operator campaign)
                       ops.csv coexec.csv (segment campaign)  [--json FILE]

The first campaign (segments of one operator, a few SM splits) gives
  * Fig. 2: the Pearson correlation of the target's delta with each counter
    of the target and of the co-runner (raw values, both sides as target);
  * the share of groups (same target operator and SM split, at least three
    co-runners) in which delta rises with the co-runner's DRAM rate
    (bytes / standalone duration), by the sign of the Spearman correlation.
The second (segments of 1-16 operators) gives the intensity rule's residual:
per-class factors fitted by least squares on the first half of the
experiments (latency = sum over classes of factor x standalone time), the
standard deviation of log(measured / rule) on the second half, HP side.
"""
import csv
import json
import math
import sys
from collections import defaultdict

import numpy as np

COUNTERS = ["duration_ns", "dram_bytes", "l2_bytes", "stall_long_scoreboard", "stall_lg_throttle",
            "stall_mio_throttle", "sm_pct", "mem_pct"]


def load_ops(path):
    ops = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["model"], int(r["batch"]), int(r["op"]), int(r["tpcs"]))
            v = {c: float(r[c]) for c in COUNTERS}
            v["intensity"] = r["intensity"]
            ops[key] = v
    return ops


def load_coexec(path):
    """Mean latency of each side over the runs of an experiment."""
    acc = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            e = acc.get(r["experiment"])
            if e is None:
                e = acc[r["experiment"]] = {
                    "hp": (r["hp_model"], int(r["hp_batch"]), int(r["hp_start"]), int(r["hp_len"]),
                           int(r["hp_tpcs"])),
                    "lp": (r["lp_model"], int(r["lp_batch"]), int(r["lp_start"]), int(r["lp_len"]),
                           int(r["lp_tpcs"])),
                    "hp_ns": [], "lp_ns": []}
            e["hp_ns"].append(float(r["hp_ns"]))
            e["lp_ns"].append(float(r["lp_ns"]))
    out = []
    for name in sorted(acc):
        e = acc[name]
        out.append((name, e["hp"], e["lp"], float(np.mean(e["hp_ns"])), float(np.mean(e["lp_ns"]))))
    return out


def seg_ops(ops, side):
    model, batch, start, n, tpcs = side
    return [ops[(model, batch, start + i, tpcs)] for i in range(n)]


def seg_sum(ops, side, col):
    return sum(o[col] for o in seg_ops(ops, side))


def spearman_sign(x, y):
    rx = np.argsort(np.argsort(x)).astype(float)
    ry = np.argsort(np.argsort(y)).astype(float)
    if rx.std() == 0 or ry.std() == 0:
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])


def single_op(ops, ex):
    """Fig. 2 and the DRAM-rate groups."""
    tgt = {c: [] for c in COUNTERS}
    cor = {c: [] for c in COUNTERS}
    delta = []
    groups = defaultdict(list)
    for _, hp, lp, hp_ns, lp_ns in ex:
        for t, c, ns in ((hp, lp, hp_ns), (lp, hp, lp_ns)):
            to = seg_ops(ops, t)[0]
            co = seg_ops(ops, c)[0]
            d = ns / to["duration_ns"]
            delta.append(d)
            for k in COUNTERS:
                tgt[k].append(to[k])
                cor[k].append(co[k])
            if t is hp:
                groups[hp].append((co["dram_bytes"] / co["duration_ns"], d))
    delta = np.array(delta)
    r_t = {k: float(np.corrcoef(np.array(tgt[k]), delta)[0, 1]) for k in COUNTERS}
    r_c = {k: float(np.corrcoef(np.array(cor[k]), delta)[0, 1]) for k in COUNTERS}
    n_g = rising = 0
    for g in groups.values():
        if len(g) < 3:
            continue
        x = np.array([a for a, _ in g])
        y = np.array([b for _, b in g])
        if x.std() == 0:
            continue
        n_g += 1
        rising += spearman_sign(x, y) > 0
    return {
        "pairs": len(delta),
        "r_target": r_t,
        "r_corunner": r_c,
        "max_abs_r_target_duration_l2": max(abs(r_t["duration_ns"]), abs(r_t["l2_bytes"])),
        "max_abs_r_corunner": max(abs(v) for v in r_c.values()),
        "groups": n_g,
        "groups_rising_with_corunner_dram_rate": rising / n_g if n_g else float("nan"),
        "delta_mean": float(delta.mean()),
        "log_delta_sd": float(np.log(delta).std()),
    }


CLASSES = ["compute", "memory", "unknown"]


def rule_residual(ops, ex):
    """The intensity rule's residual log-sd, HP side, fit on the first half."""
    x, y = [], []
    for _, hp, _, hp_ns, _ in ex:
        s = [0.0, 0.0, 0.0]
        for o in seg_ops(ops, hp):
            s[CLASSES.index(o["intensity"])] += o["duration_ns"]
        x.append(s)
        y.append(hp_ns)
    x = np.array(x)
    y = np.array(y)
    half = len(y) // 2
    # Relative least squares (each row weighted by 1 / measured), as a MAPE-like fit.
    w = 1.0 / y[:half]
    f, *_ = np.linalg.lstsq(x[:half] * w[:, None], y[:half] * w, rcond=None)
    pred = x[half:] @ f
    ok = pred > 0
    res = np.log(y[half:][ok] / pred[ok])
    solo = x.sum(axis=1)
    ld = np.log(y / solo)
    return {
        "experiments": len(y),
        "factors": dict(zip(CLASSES, map(float, f))),
        "residual_log_sd": float(res.std()),
        "rule_mape_pct": float(100 * np.mean(np.abs(np.exp(-res) - 1))),
        "log_delta_sd": float(ld.std()),
    }


def main(argv):
    js = None
    if "--json" in argv:
        i = argv.index("--json")
        js = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) != 4:
        sys.exit(__doc__)
    ops1 = load_ops(argv[0])
    out = {"single_op": single_op(ops1, load_coexec(argv[1]))}
    ops2 = load_ops(argv[2]) if argv[2] != argv[0] else ops1
    out["segments"] = rule_residual(ops2, load_coexec(argv[3]))
    s, g = out["single_op"], out["segments"]
    print("Fig. 2 (%d operator pairs): raw r with delta" % s["pairs"])
    print("  %-22s %8s %8s" % ("counter", "target", "corunner"))
    for k in COUNTERS:
        print("  %-22s %8.3f %8.3f" % (k, s["r_target"][k], s["r_corunner"][k]))
    print("  max |r| target duration / L2 bytes: %.3f (target >= 0.5)" % s["max_abs_r_target_duration_l2"])
    print("  max |r| co-runner counter: %.3f (target < 0.3)" % s["max_abs_r_corunner"])
    print("DRAM-rate groups: delta rises with co-runner DRAM rate in %.3f of %d groups (target 0.55-0.80)"
          % (s["groups_rising_with_corunner_dram_rate"], s["groups"]))
    print("single-op delta: mean %.3f, log-sd %.3f" % (s["delta_mean"], s["log_delta_sd"]))
    print("intensity rule (%d experiments, factors %s): residual log-sd %.3f (target >= 0.15), MAPE %.2f%%, "
          "log-delta sd %.3f" % (g["experiments"], {k: round(v, 3) for k, v in g["factors"].items()},
                                 g["residual_log_sd"], g["rule_mape_pct"], g["log_delta_sd"]))
    if js:
        with open(js, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
