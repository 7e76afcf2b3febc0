#!/usr/bin/env python3
"""Converts KACE's 3-way and 4-way co-location measurements (the public
artifact github.com/nba556677go/KACE-artifact; it has no licence, so the
output is for local measurement only and is not committed) into
colocations.csv tables next to ../shared/data/kace-v100's workloads.

Read from a clone or a bare mirror of the artifact (with `git show`, so a
bare mirror needs no work tree):
  comb3: output/shared_throughput/0730_share3_batch2-8_share_steps_stage2.csv,
         the "(w1_100, w2_100, w3_100)" tuple (MPS without limits); None and
         values <= 0 become an empty tput.
  comb4: scripts/multiinstance/dataset/KACE/0906_total_labels_comb4_batch2-8_targetMPS100.csv,
         w1throughput..w4throughput (the rows KACE trains and tests on).
Rows naming a workload absent from the workloads CSV are skipped (and
counted); a co-location measured twice is kept once, the first.
Writes OUTDIR/kace-comb3/colocations.csv and OUTDIR/kace-comb4/colocations.csv."""
import argparse
import ast
import csv
import io
import os
import subprocess
import sys

COMB3 = "output/shared_throughput/0730_share3_batch2-8_share_steps_stage2.csv"
COMB4 = "scripts/multiinstance/dataset/KACE/0906_total_labels_comb4_batch2-8_targetMPS100.csv"
TUPLE3 = "(w1_100, w2_100, w3_100)"


def fail(msg):
    print(f"kace_comb_convert.py: {msg}", file=sys.stderr)
    sys.exit(1)


def show(repo, path):
    """The file at HEAD of repo (a work tree or a bare mirror)."""
    git = repo if os.path.isdir(os.path.join(repo, "objects")) else os.path.join(repo, ".git")
    r = subprocess.run(["git", "--git-dir", git, "show", "HEAD:" + path], capture_output=True, text=True)
    if r.returncode:
        fail(f"{repo}: cannot read {path}: {r.stderr.strip() or 'git show failed'}")
    return r.stdout


def rows_of(text, path, need):
    rd = csv.DictReader(io.StringIO(text))
    missing = [c for c in need if c not in (rd.fieldnames or [])]
    if missing:
        fail(f"{path}: no column {', '.join(missing)} (is this KACE's file?)")
    return list(rd)


def tput(v):
    return "" if v is None or not (v > 0) else repr(float(v))


def skip_comments(f):
    """The lines of f from its header on (comment lines before it left out)."""
    header = False
    for line in f:
        if header or not line.startswith("#"):
            header = True
            yield line


def write(out, name, rows, known):
    d = os.path.join(out, name)
    path = os.path.join(d, "colocations.csv")
    try:
        os.makedirs(d, exist_ok=True)
        n, skipped = write_rows(path + ".tmp", rows, known)
        os.replace(path + ".tmp", path)
    except OSError as e:
        if os.path.exists(path + ".tmp"):
            os.remove(path + ".tmp")
        fail(f"{d}: cannot write: {e.strerror}")
    print(f"{name}: {n} co-locations ({skipped} rows with an unknown workload skipped)", file=sys.stderr)


def write_rows(path, rows, known):
    """Writes the co-locations of rows whose workloads are all known."""
    n = skipped = 0
    seen = set()
    with open(path, "w") as f:
        f.write("colocation,gpu,slot,workload,share_pct,tput\n")
        for ws, ts in rows:
            if any(w not in known for w in ws):
                skipped += 1
                continue
            cid = f"kace-comb{len(ws)}/" + "+".join(ws) + "@" + "/".join(["100"] * len(ws))
            if cid in seen:
                continue
            seen.add(cid)
            for s, (w, t) in enumerate(zip(ws, ts), 1):
                f.write(f"{cid},V100-SXM2-32GB,{s},{w},100,{tput(t)}\n")
            n += 1
    return n, skipped


def comb3(repo):
    r3 = []
    for i, r in enumerate(rows_of(show(repo, COMB3), COMB3, ["workload1", "workload2", "workload3", TUPLE3]), 2):
        try:
            t = ast.literal_eval(r[TUPLE3])
        except (ValueError, SyntaxError):
            fail(f"{COMB3}:{i}: {TUPLE3} is not a tuple: {r[TUPLE3]!r}")
        if not isinstance(t, tuple) or len(t) != 3:
            fail(f"{COMB3}:{i}: expected 3 throughputs, got {r[TUPLE3]!r}")
        r3.append(((r["workload1"], r["workload2"], r["workload3"]), t))
    return r3


def comb4(repo):
    cols = [f"workload{i}" for i in range(1, 5)] + [f"w{i}throughput" for i in range(1, 5)]
    r4 = []
    for i, r in enumerate(rows_of(show(repo, COMB4), COMB4, cols), 2):
        try:
            ts = tuple(float(r[f"w{k}throughput"]) for k in range(1, 5))
        except ValueError:
            fail(f"{COMB4}:{i}: a throughput is not a number")
        r4.append((tuple(r[f"workload{k}"] for k in range(1, 5)), ts))
    return r4


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n"
        "  git clone --mirror https://github.com/nba556677go/KACE-artifact /tmp/kace.git\n"
        "  kace_comb_convert.py /tmp/kace.git ../shared/data/kace-v100/workloads.csv /tmp/kace-extra\n"
        "then: pairsight colocate eval --workloads ../shared/data/kace-v100/workloads.csv "
        "--colocations /tmp/kace-extra/kace-comb3/colocations.csv")
    ap.add_argument("repo", help="the KACE artifact: a clone or a bare mirror")
    ap.add_argument("workloads", help="KACE's workloads.csv (the workload ids to keep)")
    ap.add_argument("outdir", help="directory for kace-comb3/ and kace-comb4/ (created)")
    a = ap.parse_args()
    try:
        with open(a.workloads, encoding="utf-8-sig", newline="") as f:
            # FORMATS.md: lines starting with # before the header are comments
            rd = csv.DictReader(skip_comments(f))
            if "workload" not in (rd.fieldnames or []):
                fail(f"{a.workloads}: no column workload")
            known = {r["workload"] for r in rd}
    except OSError as e:
        fail(f"{a.workloads}: {e.strerror}")
    write(a.outdir, "kace-comb3", comb3(a.repo), known)
    write(a.outdir, "kace-comb4", comb4(a.repo), known)


main()
