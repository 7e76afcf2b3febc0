#!/usr/bin/env python3
"""Converts KACE's 3-way and 4-way co-location measurements (public artifact
github.com/nba556677go/KACE-artifact, read with `git show` from a bare
mirror; the repository has no licence, so the output is for local
measurement only and is not committed) into colocations.csv tables next to
../shared/data/kace-v100's workloads.

usage: kace_comb_convert.py MIRROR_GIT_DIR KACE_WORKLOADS_CSV OUTDIR

comb3: output/shared_throughput/0730_share3_batch2-8_share_steps_stage2.csv,
       the "(w1_100, w2_100, w3_100)" tuple (MPS no limit); None -> empty.
comb4: scripts/multiinstance/dataset/KACE/0906_total_labels_comb4_batch2-8_targetMPS100.csv,
       w1throughput..w4throughput (the rows KACE trains and tests on).
Rows naming a workload absent from workloads.csv are skipped."""
import ast, csv, io, os, subprocess, sys


def show(git, path):
    return subprocess.run(["git", "--git-dir", git, "show", "HEAD:" + path], check=True,
                          capture_output=True, text=True).stdout


def write(out, name, rows, known):
    os.makedirs(out, exist_ok=True)
    n = 0
    with open(os.path.join(out, name), "w") as f:
        f.write("colocation,gpu,slot,workload,share_pct,tput\n")
        seen = set()
        for ws, ts in rows:
            if any(w not in known for w in ws):
                continue
            cid = f"kace-comb{len(ws)}/" + "+".join(ws) + "@" + "/".join(["100"] * len(ws))
            if cid in seen:
                continue
            seen.add(cid)
            for s, (w, t) in enumerate(zip(ws, ts), 1):
                v = "" if t is None or not (t > 0) else repr(float(t))
                f.write(f"{cid},V100-SXM2-32GB,{s},{w},100,{v}\n")
            n += 1
    print(f"{name}: {n} co-locations", file=sys.stderr)


def main():
    git, wl, out = sys.argv[1:4]
    known = {r["workload"] for r in csv.DictReader(open(wl))}
    r3 = []
    for r in csv.DictReader(io.StringIO(show(git, "output/shared_throughput/0730_share3_batch2-8_share_steps_stage2.csv"))):
        t = ast.literal_eval(r["(w1_100, w2_100, w3_100)"].replace("None", "None"))
        r3.append(((r["workload1"], r["workload2"], r["workload3"]), t))
    write(os.path.join(out, "kace-comb3"), "colocations.csv", r3, known)
    r4 = []
    for r in csv.DictReader(io.StringIO(show(git, "scripts/multiinstance/dataset/KACE/0906_total_labels_comb4_batch2-8_targetMPS100.csv"))):
        ws = tuple(r[f"workload{i}"] for i in range(1, 5))
        r4.append((ws, tuple(float(r[f"w{i}throughput"]) for i in range(1, 5))))
    write(os.path.join(out, "kace-comb4"), "colocations.csv", r4, known)


main()
