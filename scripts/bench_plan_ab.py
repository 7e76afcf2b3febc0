#!/usr/bin/env python3
"""Per-request planning time of two builds, alternating (docs/planner.md, "Speed per request").

Runs OLD's and NEW's bench_plan (bench/bench_plan.c) on the same model and request, one after the
other, RUNS times, with one OpenMP thread, and prints for each build and memo mode (kept across the
requests, emptied before each, none) the p50 of every run, their median, the median p90, the median
p50 over the HP request's own GPU time, and the median p50 over OLD's in the same mode. The CPU
time of a shared machine moves with its load, so compare builds only within one run of this
script. Each line ends with the hash of the plans: equal hashes, equal plans.

  scripts/bench_plan_ab.py OLD_BUILD/bench_plan NEW_BUILD/bench_plan MODEL OPS \\
      [--hp resnet50:8] [--lp bert-base:8] [--runs 3] [--requests 40]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

LINE = re.compile(r"per request \((?P<mode>[^)]*\)?[^)]*)\): .*CPU p50 (?P<p50>[0-9.]+) ms, p90 (?P<p90>[0-9.]+) ms; "
                  r"the HP request's own GPU time (?P<own>[0-9.]+) ms;.*plans (?P<hash>[0-9a-f]+)")


def short(mode):
    return "kept" if mode.startswith("memo kept") else "emptied" if mode.startswith("memo emptied") else "none"


def run(bench, args):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [bench, args.model, args.ops, args.hp, args.lp, "3", str(args.requests)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"bench_plan_ab: {' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()}")
    rows = {}
    for m in LINE.finditer(out.stdout):
        rows[short(m["mode"])] = (float(m["p50"]), float(m["p90"]), float(m["own"]), m["hash"])
    if not rows:
        sys.exit(f"bench_plan_ab: no per-request line in the output of {bench}")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old", help="the bench_plan binary of the build before")
    ap.add_argument("new", help="the bench_plan binary of the build after")
    ap.add_argument("model", help="a model file (pairsight train)")
    ap.add_argument("ops", help="the standalone profile (ops.csv) the model was trained on")
    ap.add_argument("--hp", default="resnet50:8", help="the HP request, MODEL:BATCH (default resnet50:8)")
    ap.add_argument("--lp", default="bert-base:8", help="the LP task, MODEL:BATCH (default bert-base:8)")
    ap.add_argument("--runs", type=int, default=3, help="alternations of the two builds (default 3)")
    ap.add_argument("--requests", type=int, default=40, help="requests per run, at spread LP positions (default 40)")
    args = ap.parse_args()
    if args.runs < 1 or args.requests < 1:
        sys.exit("bench_plan_ab: --runs and --requests must be at least 1")
    for b in ("old", "new"):
        path = os.path.abspath(getattr(args, b))
        if not os.access(path, os.X_OK):
            sys.exit(f"bench_plan_ab: {getattr(args, b)}: not an executable (build the bench_plan target)")
        setattr(args, b, path)
    res = {"old": [], "new": []}
    for _ in range(args.runs):
        for b in ("old", "new"):
            res[b].append(run(getattr(args, b), args))
    print(f"{args.hp} beside {args.lp}, {args.requests} requests, {args.runs} alternations, one OpenMP thread")
    base = {}
    for b in ("old", "new"):
        for mode in ("kept", "emptied", "none"):
            runs = [r[mode] for r in res[b] if mode in r]
            if not runs:
                continue
            p50 = statistics.median(r[0] for r in runs)
            p90 = statistics.median(r[1] for r in runs)
            own = runs[0][2]
            base.setdefault(mode, p50)
            hashes = sorted({r[3] for r in runs})
            print(f"{b:3} memo {mode:7}: p50 " + ", ".join(f"{r[0]:.3f}" for r in runs) +
                  f" ms; median {p50:.3f} ms, p90 {p90:.3f} ms; {p50 / own:.2f}x the request's {own:.3f} ms; "
                  f"{p50 / base[mode]:.2f} of old; plans {' '.join(hashes)}")


if __name__ == "__main__":
    main()
