#!/usr/bin/env python3
"""The calibration targets that come from `pairsight eval` JSON (targets 1
and 6 of docs/simulator.md, "Calibration"): the no-co-runner ablation and
the unseen-Llama rows of Table II. Usage: twin_eval_summary.py EVAL_JSON"""
import json
import sys

j = json.load(open(sys.argv[1]))
ab = j["ablation"]
full, noc = ab["full"]["hp_mape"], ab["no_corunner"]["hp_mape"]
print("Table I pairsight HP / LP: %.2f / %.2f (n = %d)" % (j["methods"]["pairsight"]["hp_mape"],
                                                          j["methods"]["pairsight"]["lp_mape"], j["n_test"]))
for m in ("intensity_rule", "intensity_rule_fit", "fixed_cost", "abacus_mlp"):
    if m in j["methods"]:
        print("  %-20s HP / LP: %.2f / %.2f" % (m, j["methods"][m]["hp_mape"], j["methods"][m]["lp_mape"]))
print("ablation HP: full %.2f, no co-runner %.2f: increase %+.2f points (target >= +2.0)" % (full, noc, noc - full))
for k in ("summed", "durations", "utilization"):
    if k in ab:
        print("  %-12s HP / LP %.2f / %.2f" % (k, ab[k]["hp_mape"], ab[k]["lp_mape"]))
g = j["generalization"]["llama"]
seen = j["methods"]["pairsight"]["hp_mape"]
un, k100 = g["pairsight"]["hp_mape"], g["pairsight_k100"]["hp_mape"]
print("Table II Llama HP: unseen %.2f (%.2fx seen %.2f; target >= 1.5x), k=10 %.2f, k=50 %.2f, k=100 %.2f "
      "(%+.0f%%; target <= -25%%)" % (un, un / seen, seen, g["pairsight_k10"]["hp_mape"], g["pairsight_k50"]["hp_mape"],
                                      k100, 100 * (k100 / un - 1)))
for grp in ("batch16", "batch64"):
    if grp in j["generalization"]:
        r = j["generalization"][grp]
        if r["pairsight"]["hp_mape"] is None or r["pairsight_k100"]["hp_mape"] is None:
            continue  # a campaign without that batch (e.g. a reduced one)
        print("  %s: unseen %.2f, k=100 %.2f" % (grp, r["pairsight"]["hp_mape"], r["pairsight_k100"]["hp_mape"]))
