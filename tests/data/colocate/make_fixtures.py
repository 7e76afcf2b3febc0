#!/usr/bin/env python3
"""Writes the synthetic co-location fixtures of tests/test_colocate*: six
workloads of three models (gamma without kernel metrics), their solo scaling
curves, and every 3-way and 4-way co-location of distinct workloads. The
throughputs follow a made-up contention law with deterministic noise; they
are test data, not measurements."""
import itertools, math

W = [  # name, excl, threads, regs, smem, sm_t, dram_t, mem_t, sm_busy, mem_busy, memcap, demand, sens
    ("alpha_batch2-inf", 120.0, 2e5, 1.4e7, 1.3e4, 73, 15, 64, 60, 20, 1.2, 0.35, 0.6),
    ("alpha_batch8-inf", 300.0, 3.2e5, 1.6e7, 7.4e3, 69, 16, 69, 90, 38, 1.4, 0.60, 0.5),
    ("beta_batch4-train", 40.0, 6.8e5, 2.2e7, 1.1e4, 64, 37, 63, 86, 44, 3.7, 0.70, 0.9),
    ("beta_batch16-train", 31.0, 4.3e6, 9.2e7, 2.5e4, 50, 52, 83, 97, 46, 12.4, 0.90, 0.8),
    ("gamma_batch1-inf", 60.0, None, None, None, None, None, None, 12, 2, 1.3, 0.15, 0.3),
    ("gamma_batch4-inf", 150.0, None, None, None, None, None, None, 25, 5, 2.5, 0.30, 0.4),
]
SHARES = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]


def solo(w, share):
    # saturating: a workload with little demand reaches its peak early
    d = w[11]
    return w[1] * min(1.0, (share / 100.0) / max(0.25, d)) ** 0.8


def noise(*key):
    h = 0
    for ch in repr(key):
        h = (h * 131 + ord(ch)) % 1000003
    return 1.0 + 0.04 * ((h % 1000) / 1000.0 - 0.5)


def tput(ws, shares, i):
    w = ws[i]
    load = sum(ws[j][11] * shares[j] / 100.0 for j in range(len(ws)) if j != i)
    return solo(w, shares[i]) / (1.0 + w[12] * load) * noise(tuple(x[0] for x in ws), tuple(shares), i)


def fmt(v):
    return "" if v is None else repr(v)


with open("workloads.csv", "w") as f:
    f.write("gpu,workload,exclusive_tput,threads,registers,static_smem,sm_tput_pct,dram_tput_pct,"
            "mem_tput_pct,sm_busy_pct,mem_busy_pct,memcap_gb\n")
    for w in W:
        f.write(",".join(["TESTGPU", w[0]] + [fmt(x) for x in w[1:11]]) + "\n")
with open("workload_scaling.csv", "w") as f:
    f.write("gpu,workload,share_pct,tput\n")
    for w in W:
        for s in SHARES:
            f.write("TESTGPU,%s,%d,%r\n" % (w[0], s, round(solo(w, s), 6)))
for k, name in ((3, "colocations3.csv"), (4, "colocations4.csv")):
    with open(name, "w") as f:
        f.write("colocation,gpu,slot,workload,share_pct,tput\n")
        for combo in itertools.combinations(range(len(W)), k):
            for shares in ([100] * k, [100 // k + (100 % k if i == 0 else 0) for i in range(k)]):
                ws = [W[c] for c in combo]
                cid = "t%d/%s@%s" % (k, "+".join(w[0] for w in ws), "/".join(map(str, shares)))
                for i, w in enumerate(ws):
                    t = round(tput(ws, shares, i), 6)
                    # one unmeasured cell per file: never scored, never zero
                    cell = "" if (combo == tuple(range(k)) and i == k - 1 and shares[0] == 100) else repr(t)
                    f.write("%s,TESTGPU,%d,%s,%d,%s\n" % (cid, i + 1, w[0], shares[i], cell))
