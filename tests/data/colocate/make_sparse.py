#!/usr/bin/env python3
"""Writes the sparse synthetic co-location fixture (sparse_workloads.csv,
sparse_colocations.csv): 16 workloads that carry only exclusive_tput, as in a
cluster scheduler's throughput matrix, every 2-way pair (copies included),
60 3-way and 40 4-way sets. Hidden per-workload demands on three resources
and a sensitivity make the throughputs; none of them is in the tables. Test
data from a made-up law with deterministic noise, not measurements."""
import itertools, math, os, random, sys, zlib

# usage: make_sparse.py [SEED [DIR]]: another seed draws other workloads and
# sets (scripts/colocate_table.sh's sim-sparse-sN tables); default 17, here.
SEED = int(sys.argv[1]) if len(sys.argv) > 1 else 17
if len(sys.argv) > 2:
    os.makedirs(sys.argv[2], exist_ok=True)
    os.chdir(sys.argv[2])
rng = random.Random(SEED)
W = []
for i in range(16):
    model = ["res", "lm", "rec", "tfm"][i % 4]
    batch = [8, 16, 32, 64][i // 4]
    excl = math.exp(rng.uniform(1.0, 5.0))
    dem = [rng.uniform(0.05, 1.0) for _ in range(3)]
    sens = rng.uniform(0.3, 1.2)
    W.append((f"{model}_batch{batch}-train", excl, dem, sens))


def tput(ws, i, key):
    w = ws[i]
    load = sum(sum(a * b for a, b in zip(w[2], ws[j][2])) for j in range(len(ws)) if j != i)
    noise = 1 + 0.03 * (random.Random(zlib.crc32(repr(key).encode())).random() - 0.5) * 2
    return w[1] / (1 + 1.5 * w[3] * load) * noise


with open("sparse_workloads.csv", "w") as f:
    f.write("gpu,workload,exclusive_tput\n")
    for w in W:
        f.write(f"SIMGPU,{w[0]},{w[1]:.6g}\n")
sets = [list(p) for p in itertools.combinations_with_replacement(range(16), 2)]
sets += [sorted(rng.sample(range(16), 3)) for _ in range(60)]
sets += [sorted(rng.sample(range(16), 4)) for _ in range(40)]
with open("sparse_colocations.csv", "w") as f:
    f.write("colocation,gpu,slot,workload,share_pct,tput\n")
    seen = set()
    for s in sets:
        ws = [W[i] for i in s]
        cid = "sim/" + "+".join(w[0] for w in ws) + "@" + "/".join(["100"] * len(ws))
        if cid in seen:
            continue
        seen.add(cid)
        for i, w in enumerate(ws):
            f.write(f"{cid},SIMGPU,{i + 1},{w[0]},100,{tput(ws, i, (cid, i)):.6g}\n")
