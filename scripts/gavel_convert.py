#!/usr/bin/env python3
"""Converts Gavel's throughput matrix (github.com/stanford-futuredata/gavel,
scheduler/simulation_throughputs.json, MIT licence) into pairsight's
workload-level tables (FORMATS.md): workloads.csv with exclusive_tput only
(the matrix holds no kernel or system metrics), and colocations.csv with
every measured 2-way space-sharing pair at scale factor 1.

usage: gavel_convert.py THROUGHPUTS.json OUTDIR [gpu ...]   (default k80 p100 v100)

Job names become ids like resnet-18_batch16-train (every Gavel job is a
training job; A3C and CycleGAN have no batch size). Throughputs are Gavel's
(steps per second). A pair whose two throughputs are both 0 (did not fit)
is left out; a single 0 becomes an empty tput."""
import ast, json, os, re, sys


def wid(name):
    m = re.match(r"^(.*) \(batch size (\d+)\)$", name)
    base, batch = (m.group(1), m.group(2)) if m else (name, None)
    base = base.lower().replace(" ", "-")
    return f"{base}_batch{batch}-train" if batch else f"{base}-train"


def main():
    src, out = sys.argv[1], sys.argv[2]
    gpus = sys.argv[3:] or ["k80", "p100", "v100"]
    d = json.load(open(src))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "workloads.csv"), "w") as fw, \
         open(os.path.join(out, "colocations.csv"), "w") as fc:
        fw.write("gpu,workload,exclusive_tput\n")
        fc.write("colocation,gpu,slot,workload,share_pct,tput\n")
        for g in gpus:
            m = d[g]
            jobs = sorted(k for k in m if ast.literal_eval(k)[1] == 1)
            names = {k: wid(ast.literal_eval(k)[0]) for k in jobs}
            for k in jobs:
                fw.write(f"{g},{names[k]},{m[k]['null']!r}\n")
            npair = 0
            for i, a in enumerate(jobs):
                for b in jobs[i:]:
                    t = m[a].get(b)
                    if t is None or (t[0] <= 0 and t[1] <= 0):
                        continue
                    cid = f"gavel-{g}/{names[a]}+{names[b]}@100/100"
                    for s, (w, v) in enumerate(((names[a], t[0]), (names[b], t[1])), 1):
                        fc.write(f"{cid},{g},{s},{w},100,{repr(v) if v > 0 else ''}\n")
                    npair += 1
            print(f"{g}: {len(jobs)} workloads, {npair} pairs", file=sys.stderr)


main()
