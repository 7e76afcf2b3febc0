"""The twin's standalone latencies of captured torchvision models against
Orion's V100 per-kernel profiles (../shared/data/orion-v100/ops.csv:
resnet50, resnet101, mobilenetv2 at batch 4, whole GPU), per model and per
operator kind (docs/own-model.md, "How good is the twin on your model").

    python3 tools/orion_twin_check.py --cli build/pairsight --orion ../shared/data/orion-v100/ops.csv \
        --oplists DIR   # DIR holds tv-resnet50.oplist, ... (python -m pairsight.capture --batch 4)

Orion's rows follow the captured operators one to one, except that PyTorch
1.12 on CUDA 10.2 launches the bias of addmm as a copy kernel before the
GEMM (cuBLAS without the cuBLASLt bias epilogue): that row is added to the
GEMM's. Prints a table (markdown) and exits 1 when the rows cannot be aligned.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

PAIRS = [("resnet50", "tv-resnet50"), ("resnet101", "tv-resnet101"), ("mobilenetv2", "tv-mobilenet_v2")]


def read_oplist(path):
    ops = []
    for line in open(path):
        if line.strip() and not line.startswith("#"):
            ops.append(line.split()[0])
    return ops


def orion_rows(path, model):
    with open(path) as f:
        return [(r["name"], float(r["duration_ns"])) for r in csv.DictReader(f) if r["model"] == model]


def twin_rows(cli, gpu, spec, names, out):
    subprocess.run([cli, "simulate", "--gpu", gpu, "--oplist", spec, "--models", ",".join(names),
                    "--experiments", "1", "--runs", "1", "--out", out, "-q"], check=True)
    rows = {}
    with open(os.path.join(out, "ops.csv")) as f:
        for r in csv.DictReader(f):
            if r["tpcs"] == "40":
                rows.setdefault(r["model"], []).append(float(r["duration_ns"]))
    return rows


def align(kinds, orion):
    """Orion's durations summed per captured operator, or raise ValueError."""
    out, j = [], 0
    for i, k in enumerate(kinds):
        if j >= len(orion):
            raise ValueError("Orion's rows end at captured op %d" % i)
        d = 0.0
        if k == "gemm" and "gemm" not in orion[j][0] and j + 1 < len(orion) and "gemm" in orion[j + 1][0]:
            d += orion[j][1]  # the bias copy before the GEMM
            j += 1
        d += orion[j][1]
        out.append(d)
        j += 1
    if j != len(orion):
        raise ValueError("%d Orion rows left over" % (len(orion) - j))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", required=True)
    p.add_argument("--orion", required=True)
    p.add_argument("--oplists", required=True)
    a = p.parse_args()
    spec = ",".join("%s=%s" % (n, os.path.join(a.oplists, n + ".oplist")) for _, n in PAIRS)
    with tempfile.TemporaryDirectory() as d:
        twin = twin_rows(a.cli, "v100", spec, [n for _, n in PAIRS], d)
    print("| model | ops | Orion ms | twin ms | twin/Orion | per-op median |ratio| error % |")
    print("|---|---|---|---|---|---|")
    by_kind = {}
    for orion_name, name in PAIRS:
        kinds = read_oplist(os.path.join(a.oplists, name + ".oplist"))
        meas = align(kinds, orion_rows(a.orion, orion_name))
        sim = twin[name]
        errs = sorted(abs(s / m - 1) for s, m in zip(sim, meas))
        print("| %s | %d | %.2f | %.2f | %.2f | %.0f |" % (orion_name, len(kinds), sum(meas) / 1e6, sum(sim) / 1e6,
                                                       sum(sim) / sum(meas), 100 * errs[len(errs) // 2]))
        for k, s, m in zip(kinds, sim, meas):
            t = by_kind.setdefault(k, [0, 0.0, 0.0])
            t[0] += 1
            t[1] += m
            t[2] += s
    print()
    print("| kind | ops | Orion ms | twin ms | twin/Orion |")
    print("|---|---|---|---|---|")
    for k, (n, m, s) in sorted(by_kind.items()):
        print("| %s | %d | %.2f | %.2f | %.2f |" % (k, n, m / 1e6, s / 1e6, s / m))
    return 0


if __name__ == "__main__":
    sys.exit(main())
