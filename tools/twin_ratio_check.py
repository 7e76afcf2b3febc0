"""Error of the one-trace estimate (import ... --oplist L --tpcs-from twin)
per TPC count, on a held-out simulated campaign whose kernels are described
otherwise: the simulator's built-in resnet50, resnet101 and mobilenetv2
(kernels re-timed from Orion's measured V100 profiles, with their own
FLOPs, bytes and grids, and the profile noise of the campaign) stand for
the measurement at every count; the estimate takes their rows at the traced
count only and scales them by the twin's ratios of the captured lists
(kernels from shapes, src/simulate/twin_oplist.c). docs/profile.md quotes
the output.

    python3 tools/twin_ratio_check.py --cli build/pairsight --oplists DIR [--gpu a100] [--dtype fp32]

DIR holds b8-resnet50-fp32.oplist, b8-resnet101-fp32.oplist,
b8-mobilenet_v2-fp32.oplist (python -m pairsight.capture --batch 8 --dtype fp32).
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

MODELS = [("resnet50", "resnet50"), ("resnet101", "resnet101"), ("mobilenetv2", "mobilenet_v2")]


def per_op(path):
    d = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            d[(int(r["op"]), int(r["tpcs"]))] = float(r["duration_ns"])
    return d


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", required=True)
    p.add_argument("--oplists", required=True)
    p.add_argument("--gpu", default="a100")
    p.add_argument("--dtype", default="fp32")
    p.add_argument("--seed", default="7")
    a = p.parse_args()
    cli = a.cli
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([cli, "simulate", "--gpu", a.gpu, "--models", ",".join(m for m, _ in MODELS), "--splits",
                        "all", "--experiments", "1", "--runs", "1", "--seed", a.seed, "--out", d, "-q"], check=True)
        truth_csv = os.path.join(d, "ops.csv")
        with open(truth_csv) as f:
            full = max(int(r["tpcs"]) for r in csv.DictReader(f))
        counts = sorted(set([1, 2, 4] + [round(k * full / 10) for k in range(1, 10)] + [full]))
        rows = {}
        for model, tv in MODELS:
            lst = os.path.join(a.oplists, "b8-%s-%s.oplist" % (tv, a.dtype))
            est = os.path.join(d, "est.csv")
            subprocess.run([cli, "import", "ops", truth_csv, "--model", model, "--batch", "8", "--tpcs", str(full),
                            "--oplist", lst, "--tpcs-from", "twin", "--out", est, "-q"], check=True)
            e = per_op(est)
            for t in counts:
                tr = os.path.join(d, "t.csv")  # the truth at t, aligned with the same operators
                subprocess.run([cli, "import", "ops", truth_csv, "--model", model, "--batch", "8", "--tpcs", str(t),
                                "--oplist", lst, "--tpcs-from", "twin", "--at", str(t), "--out", tr, "-q"], check=True)
                m = per_op(tr)
                errs = sorted(abs(e[k] / v - 1) for k, v in m.items())
                tot_e = sum(e[k] for k in m)
                tot_m = sum(m.values())
                rows.setdefault(t, []).append((model, abs(tot_e / tot_m - 1), errs[len(errs) // 2],
                                               errs[int(0.9 * (len(errs) - 1))]))
    print("| TPCs | " + " | ".join("%s model err %% / op median %% / op p90 %%" % m for m, _ in MODELS) + " |")
    print("|---|" + "---|" * len(MODELS))
    for t in sorted(rows):
        print("| %d | " % t + " | ".join("%.1f / %.1f / %.1f" % (100 * x[1], 100 * x[2], 100 * x[3])
                                         for x in rows[t]) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
