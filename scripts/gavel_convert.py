#!/usr/bin/env python3
"""Converts a Gavel throughput matrix (github.com/stanford-futuredata/gavel,
MIT licence) into pairsight's workload-level tables (FORMATS.md):
workloads.csv with exclusive_tput only (the matrix holds no kernel or
system metrics) and colocations.csv with every measured 2-way space-sharing
pair.

Gavel's files map a GPU type to its jobs; each job maps "null" to its
throughput alone and each co-runner to the pair's two throughputs, the
job's first. Two spellings of a job are read:
  scheduler/simulation_throughputs.json   "('ResNet-18 (batch size 16)', 1)"
                                           (name and scale factor; only
                                           scale factor 1 is converted)
  scheduler/oracle_throughputs.json        "ResNet-18 (batch size 16)"
Job names become ids like resnet-18_batch16-train (every Gavel job is a
training job; A3C and CycleGAN have no batch size). Throughputs are Gavel's
(steps per second). A job whose throughput alone is 0 is left out with its
pairs (it has no normalized throughput); a pair whose two throughputs are
both 0 (it did not fit) is left out; a single 0 becomes an empty tput. Co-location ids are
gavel-GPU/A+B@100/100."""
import argparse
import ast
import json
import os
import re
import sys


def fail(msg):
    print(f"gavel_convert.py: {msg}", file=sys.stderr)
    sys.exit(1)


def wid(name):
    m = re.match(r"^(.*) \(batch size (\d+)\)$", name)
    base, batch = (m.group(1), m.group(2)) if m else (name, None)
    base = base.lower().replace(" ", "-")
    return f"{base}_batch{batch}-train" if batch else f"{base}-train"


def job_name(key):
    """The job's name for a key of either spelling, or None for a job at a
    scale factor other than 1."""
    if key.startswith("("):
        try:
            name, scale = ast.literal_eval(key)
        except (ValueError, SyntaxError, TypeError):
            fail(f"job key {key!r} is neither a name nor a (name, scale factor) tuple")
        return name if scale == 1 else None
    return key


def number(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v < 0:
        fail(f"{what}: expected a throughput >= 0, got {v!r}")
    return float(v)


def convert_gpu(g, m, fw, fc):
    """Writes GPU g's workloads and pairs; returns (workloads, pairs)."""
    if not isinstance(m, dict):
        fail(f"{g}: expected an object of jobs, got {type(m).__name__}")
    jobs = sorted(k for k in m if job_name(k) is not None)
    if not jobs:
        fail(f"{g}: no job at scale factor 1")
    names = {k: wid(job_name(k)) for k in jobs}
    if len(set(names.values())) != len(jobs):
        fail(f"{g}: two jobs map to the same id")
    for k in jobs:
        if not isinstance(m[k], dict) or "null" not in m[k]:
            fail(f"{g}: job {k!r} has no \"null\" entry (its throughput alone)")
    alone = {k: number(m[k]["null"], f"{g}: {k} alone") for k in jobs}
    unfit = [k for k in jobs if alone[k] <= 0]
    if unfit:
        print(f"{g}: left out (throughput 0 alone, so no normalized throughput): {', '.join(unfit)}",
              file=sys.stderr)
        jobs = [k for k in jobs if alone[k] > 0]
    for k in jobs:
        fw.write(f"{g},{names[k]},{alone[k]!r}\n")
    pairs = 0
    for i, a in enumerate(jobs):
        for b in jobs[i:]:
            t = m[a].get(b)
            if t is None:
                continue
            if not isinstance(t, list) or len(t) != 2:
                fail(f"{g}: {a} with {b}: expected the pair's two throughputs, got {t!r}")
            t = [number(v, f"{g}: {a} with {b}") for v in t]
            if t[0] <= 0 and t[1] <= 0:
                continue
            cid = f"gavel-{g}/{names[a]}+{names[b]}@100/100"
            for s, (w, v) in enumerate(((names[a], t[0]), (names[b], t[1])), 1):
                fc.write(f"{cid},{g},{s},{w},100,{repr(v) if v > 0 else ''}\n")
            pairs += 1
    return len(jobs), pairs


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
        "  gavel_convert.py gavel/scheduler/simulation_throughputs.json /tmp/gavel-v100 v100\n"
        "  gavel_convert.py gavel/scheduler/oracle_throughputs.json /tmp/gavel     # every GPU in the file\n"
        "  gavel_convert.py THROUGHPUTS.json - --list      # the GPU types the file holds\n"
        "then: pairsight colocate eval --workloads /tmp/gavel-v100/workloads.csv "
        "--colocations /tmp/gavel-v100/colocations.csv")
    ap.add_argument("throughputs", help="Gavel's throughput JSON")
    ap.add_argument("outdir", help="directory for workloads.csv and colocations.csv (created)")
    ap.add_argument("gpus", nargs="*", help="GPU types to convert (default: every one in the file)")
    ap.add_argument("--list", action="store_true", help="print the file's GPU types and exit")
    a = ap.parse_args()
    try:
        with open(a.throughputs, encoding="utf-8-sig") as f:
            d = json.load(f)
    except OSError as e:
        fail(f"{a.throughputs}: {e.strerror}")
    except json.JSONDecodeError as e:
        fail(f"{a.throughputs}: not JSON ({e})")
    if not isinstance(d, dict) or not d:
        fail(f"{a.throughputs}: expected an object of GPU types")
    if a.list:
        print("\n".join(sorted(d)))
        return
    gpus = a.gpus or sorted(d)
    missing = [g for g in gpus if g not in d]
    if missing:
        fail(f"{a.throughputs} has no GPU {', '.join(missing)} (it has {', '.join(sorted(d))})")
    if a.outdir == "-":
        fail("outdir: the tables are two files, give a folder ('-' is for --list only)")
    wl, co = os.path.join(a.outdir, "workloads.csv"), os.path.join(a.outdir, "colocations.csv")
    try:  # written aside and renamed, so that a failure leaves no half table
        os.makedirs(a.outdir, exist_ok=True)
        with open(wl + ".tmp", "w") as fw, open(co + ".tmp", "w") as fc:
            fw.write("gpu,workload,exclusive_tput\n")
            fc.write("colocation,gpu,slot,workload,share_pct,tput\n")
            for g in gpus:
                n, p = convert_gpu(g, d[g], fw, fc)
                print(f"{g}: {n} workloads, {p} pairs", file=sys.stderr)
        os.replace(wl + ".tmp", wl)
        os.replace(co + ".tmp", co)
    except BaseException as e:
        for t in (wl + ".tmp", co + ".tmp"):
            if os.path.exists(t):
                os.remove(t)
        if isinstance(e, OSError):
            fail(f"{a.outdir}: cannot write: {e.strerror}")
        raise


main()
