#!/usr/bin/env python3
"""Crafted model files with valid checksums (issue 30 item 2).

Makes one model of each kind with the CLI, then N mutants per kind: 1 to 4
payload bytes set to random values, and every section's checksum
recomputed, so that the bytes reach the parsers behind the checksums (cJSON,
the XGBoost tree check, the parameter parser) and, when accepted, the
predictor. Each mutant is loaded and used once (`predict`, or `colocate
predict`) under a timeout, and classed: refused (exit 1 with a message),
accepted (exit 0), crash (any other exit, a signal included) or hang (the
timeout). Prints a table; exit status 1 when any crash or hang was seen.

usage: crafted_sweep.py PAIRSIGHT [--n 500] [--kinds psm,kace_rf,...]
       [--seed 1] [--timeout 10] [--keep DIR]
"""
import argparse
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

COLOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "colocate")


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def make_models(cli, d, kinds):
    """The seed models, one per kind, in d."""
    if "psm" in kinds:
        run([cli, "simulate", "--gpu", "a100", "--experiments", "30", "--runs", "1", "--threads", "1",
             "--seed", "3", "--out", f"{d}/c", "-q"], check=True)
        run([cli, "train", "--ops", f"{d}/c/ops.csv", "--coexec", f"{d}/c/coexec.csv", "--out", f"{d}/psm",
             "--threads", "1", "--depths", "4", "--etas", "0.3", "--rounds", "6", "-q"], check=True)
        with open(f"{d}/c/coexec.csv") as f:
            rows = [line.rstrip("\n").split(",") for line in f][:9]
        with open(f"{d}/q.csv", "w") as f:
            for r in rows:
                f.write(",".join(r[1:12]) + "\n")
    for k in kinds:
        if k != "psm":
            run([cli, "colocate", "train", "--workloads", f"{COLOC}/workloads.csv", "--scaling",
                 f"{COLOC}/workload_scaling.csv", "--colocations", f"{COLOC}/colocations3.csv", "--kind", k,
                 "--trees", "5", "--epochs", "2", "--rounds", "8", "--out", f"{d}/{k}", "-q"], check=True)


def psm_sections(b):
    """(tag, payload offset, length) of each section of a .psm."""
    out, at = [], 16
    for _ in range(3):
        tag = b[at:at + 4]
        n = struct.unpack("<Q", b[at + 4:at + 12])[0]
        out.append((tag, at + 16, n))
        at += 16 + n
    return out


def psm_mutant(b, rng):
    b = bytearray(b)
    secs = psm_sections(b)
    tag, off, n = secs[0] if rng.random() < 0.15 else secs[rng.choice((1, 2))]
    for _ in range(rng.randint(1, 4)):
        b[off + rng.randrange(n)] = rng.randrange(256)
    for tag, off, n in secs:
        crc = zlib.crc32(bytes(b[off - 16:off - 12]) + bytes(b[off - 12:off - 4]) + bytes(b[off:off + n]))
        b[off - 4:off] = struct.pack("<I", crc)
    return bytes(b)


def coloc_sections(b):
    """(name, header start, payload offset, length) of each section."""
    out, at = [], b.index(b"\n") + 1
    while b.startswith(b"section ", at):
        nl = b.index(b"\n", at)
        _, name, n, _ = b[at:nl].split(b" ")
        out.append((name, at, nl + 1, int(n)))
        at = nl + 1 + int(n)
    return out


def coloc_rebuild(b, edit):
    """b with section i's payload replaced by edit(i, name, payload) and every
    section line (length, checksum) written anew."""
    secs = coloc_sections(b)
    out, at = bytearray(b[:secs[0][1]]), secs[0][1]
    for i, (name, _, off, n) in enumerate(secs):
        data = edit(i, name, b[off:off + n])
        crc = zlib.crc32(data, zlib.crc32(b"%s %d" % (name, len(data))))
        out += b"section %s %d %08x\n" % (name, len(data), crc) + data
        at = off + n
    return bytes(out + b[at:])


def coloc_mutant(b, rng):
    secs = coloc_sections(b)
    body = [i for i, s in enumerate(secs) if s[3] > 0]
    pick = body[-1] if len(body) > 1 and rng.random() < 0.7 else body[0]

    def flip(i, name, data):
        if i != pick:
            return data
        p = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            p[rng.randrange(len(p))] = rng.randrange(256)
        return bytes(p)
    return coloc_rebuild(b, flip)


def set_root_left(data):
    """A UBJSON booster whose first tree's root has itself as left child
    (a cycle): left_children is a typed int32 array ([$l#<count>)."""
    at = data.index(b"left_children") + len(b"left_children")
    assert data[at:at + 3] == b"[$l" and data[at + 3:at + 4] == b"#", data[at:at + 8]
    width = {b"i": 1, b"U": 1, b"I": 2, b"l": 4, b"L": 8}[data[at + 4:at + 5]]
    first = at + 5 + width
    return data[:first] + struct.pack(">i", 0) + data[first + 4:]


def crafted(kind, b):
    """The hand-made file of kind: a cycle in a tree (the boosters), or a
    half-read 'ratio N X' line (ratio)."""
    if kind == "psm":
        secs = psm_sections(b)
        tag, off, n = secs[1]
        data = set_root_left(b[off:off + n])
        head = b[off - 16:off - 4]
        return b[:off - 4] + struct.pack("<I", zlib.crc32(head + data)) + data + b[off + n:]
    if kind == "ratio":
        def half(i, name, data):
            if name != b"params":
                return data
            at = data.index(b"\nratio ") + 1
            end = data.index(b"\n", at)
            return data[:at] + b" ".join(data[at:end].split(b" ")[:2]) + b" x" + data[end:]
        return coloc_rebuild(b, half)
    return coloc_rebuild(b, lambda i, name, data: set_root_left(data) if name == b"booster" else data)


def use(cli, kind, path, d, timeout):
    if kind == "psm":
        cmd = [cli, "predict", "--model", path, "--ops", f"{d}/c/ops.csv", "--queries", f"{d}/q.csv"]
    else:
        cmd = [cli, "colocate", "predict", "--model", path, "--workloads", f"{COLOC}/workloads.csv", "--scaling",
               f"{COLOC}/workload_scaling.csv", "--colocations", f"{COLOC}/colocations3.csv", "-q"]
    try:
        r = run(cmd, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang", ""
    err = r.stderr.decode(errors="replace").strip()
    if r.returncode == 0:
        return "accepted", err
    if r.returncode == 1 and err.startswith("pairsight:"):
        return "refused", err
    return "crash", f"exit {r.returncode}: {err[-300:]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cli")
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--kinds", default="psm,kace_rf,xu_rf,mps,ratio")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--keep", help="folder to copy each crashing or hanging file into")
    ap.add_argument("--crafted", action="store_true",
                    help="before the sweep, each kind's hand-made file (a cycle in a tree; a half-read ratio "
                         "line) must be refused with a message")
    a = ap.parse_args()
    kinds = a.kinds.split(",")
    d = tempfile.mkdtemp(prefix="ps_crafted.")
    bad = 0
    try:
        make_models(a.cli, d, kinds)
        for k in kinds if a.crafted else []:
            with open(f"{d}/{k}", "rb") as f:
                b = crafted(k, f.read())
            with open(f"{d}/crafted", "wb") as f:
                f.write(b)
            what, msg = use(a.cli, k, f"{d}/crafted", d, a.timeout)
            print(f"crafted {k}: {what}: {msg}")
            bad += what != "refused"
        print(f"{'kind':8} {'files':>6} {'crashes':>8} {'hangs':>6} {'refused':>8} {'accepted':>9} {'seconds':>8}")
        for k in kinds:
            rng = random.Random(f"{a.seed}:{k}")
            with open(f"{d}/{k}", "rb") as f:
                seed = f.read()
            count = {"crash": 0, "hang": 0, "refused": 0, "accepted": 0}
            t0 = time.time()
            for i in range(a.n):
                b = psm_mutant(seed, rng) if k == "psm" else coloc_mutant(seed, rng)
                path = f"{d}/mutant"
                with open(path, "wb") as f:
                    f.write(b)
                what, msg = use(a.cli, k, path, d, a.timeout)
                count[what] += 1
                if what in ("crash", "hang"):
                    bad += 1
                    print(f"  {k} mutant {i}: {what} {msg}", file=sys.stderr)
                    if a.keep:
                        os.makedirs(a.keep, exist_ok=True)
                        shutil.copy(path, os.path.join(a.keep, f"{k}-{i}"))
            print(f"{k:8} {a.n:6} {count['crash']:8} {count['hang']:6} {count['refused']:8} {count['accepted']:9} "
                  f"{time.time() - t0:8.1f}")
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
