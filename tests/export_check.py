"""Checks `pairsight model export` and `pairsight features` against XGBoost's
own Python predictor: for every row of FEATURES (pairsight features) and the
matching row of PREDICTIONS (pairsight predict on the same queries),
solo_ns * exp(margin of DIR/<side>.ubj on the row) must equal the predicted
latency within 1e-6 relative. Exit 77 when xgboost or numpy is missing.
Usage: python3 export_check.py DIR FEATURES.csv PREDICTIONS.csv"""
import csv
import json
import math
import sys

try:
    import numpy as np
    import xgboost as xgb
except ImportError as e:
    print("skip: %s" % e)
    sys.exit(77)

out_dir, features, predictions = sys.argv[1:4]
meta = json.load(open(out_dir + "/meta.json"))
cols = meta["layout"]["columns"]
assert len(cols) == meta["layout"]["n_features"], "meta.json: column count"
rows = list(csv.DictReader(open(features)))
pred = list(csv.DictReader(open(predictions)))
assert len(rows) == len(pred) and rows, "row counts differ: %d, %d" % (len(rows), len(pred))
two = meta["layout"]["variant"] == "no-corunner"
worst = 0.0
for side in ("hp", "lp"):
    names = [(side + ":" + c) if two else c for c in cols]
    x = np.array([[float(r[c]) for c in names] for r in rows], dtype=np.float32)
    booster = xgb.Booster(model_file="%s/%s.ubj" % (out_dir, side))
    margin = booster.predict(xgb.DMatrix(x, missing=np.nan), output_margin=True)
    for r, p, m in zip(rows, pred, margin):
        got = float(r[side + "_solo_ns"]) * math.exp(float(m))
        want = float(p[side + "_ns_pred"])
        worst = max(worst, abs(got - want) / want)
print("%d queries, worst relative difference %.3g" % (len(rows), worst))
sys.exit(0 if worst <= 1e-6 else 1)
