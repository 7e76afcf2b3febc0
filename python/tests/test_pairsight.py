"""Tests of the Python package against the C library and the CLI.

Environment: PAIRSIGHT_CLI, the pairsight binary of the same build (default
build/pairsight), and PAIRSIGHT_LIBRARY where the library is not found
otherwise. Run by tests/test_python.sh (ctest, scripts/test.sh)."""
import csv
import json
import math
import os
import subprocess

import pytest

import pairsight

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("PAIRSIGHT_CLI", os.path.join(ROOT, "build", "pairsight"))
COLOC = os.path.join(ROOT, "tests", "data", "colocate")


def cli(*args, **kw):
    return subprocess.run([CLI] + [str(a) for a in args], check=True, capture_output=True, text=True, **kw)


@pytest.fixture(scope="session")
def campaign(tmp_path_factory):
    """1,000 one-run experiments on the simulated A100 and a model trained
    on them by the CLI."""
    d = tmp_path_factory.mktemp("campaign")
    cli("simulate", "--gpu", "a100", "--experiments", 1000, "--runs", 1, "--threads", 1, "--seed", 11,
        "--out", d / "c", "-q")
    cli("train", "--ops", d / "c" / "ops.csv", "--coexec", d / "c" / "coexec.csv", "--out", d / "m.psm",
        "--threads", 1, "--depths", 6, "--etas", 0.3, "--rounds", 60, "-q")
    return d


@pytest.fixture(scope="session")
def loaded(campaign):
    return (pairsight.Model.load(campaign / "m.psm"), pairsight.Ops.load(campaign / "c" / "ops.csv"))


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_version_matches_cli():
    assert pairsight.version() == cli("--version").stdout.split()[1]


def test_help_is_useful():
    doc = pairsight.__doc__
    assert "Model.load" in doc and "PAIRSIGHT_LIBRARY" in doc
    assert pairsight.Model.predict.__doc__ and pairsight.Error.__doc__


def test_predict_equals_cli_bit_for_bit(campaign, loaded):
    model, ops = loaded
    q = campaign / "c" / "coexec.csv"
    out = campaign / "p.csv"
    cli("predict", "--model", campaign / "m.psm", "--ops", campaign / "c" / "ops.csv", "--queries", q,
        "--out", out, "-q")
    want = read_csv(out)
    assert len(want) == 1000
    hp, lp = model.predict(ops, q)
    assert len(hp) == 1000
    for i, r in enumerate(want):
        # %.17g round-trips a double: equality is bit for bit.
        assert hp[i] == float(r["hp_ns_pred"]), i
        assert lp[i] == float(r["lp_ns_pred"]), i
    # The same queries as dicts and as a structured array give the same.
    rows = read_csv(q)
    hp2, lp2 = model.predict(ops, rows)
    assert list(hp2) == list(hp) and list(lp2) == list(lp)
    np = pytest.importorskip("numpy")
    dt = [(k, "U32" if k.endswith("model") or k == "gpu" else "i4") for k in pairsight.QUERY_FIELDS]
    arr = np.array([tuple(r[k] for k, _ in dt) for r in rows], dtype=dt)
    hp3, lp3 = model.predict(ops, arr)
    assert isinstance(hp3, np.ndarray) and (hp3 == hp).all() and (lp3 == lp).all()


def test_predict_bounds_equal_cli(campaign, loaded):
    """coverage= gives the calibrated upper bounds of `predict --coverage`."""
    model, ops = loaded
    q = campaign / "c" / "coexec.csv"
    out = campaign / "pb.csv"
    cli("predict", "--model", campaign / "m.psm", "--ops", campaign / "c" / "ops.csv", "--queries", q,
        "--coverage", 0.95, "--out", out, "-q")
    want = read_csv(out)
    hp, lp, hu, lu = model.predict(ops, q, coverage=0.95)
    for i, r in enumerate(want):
        assert hu[i] == float(r["hp_ns_upper"]) and lu[i] == float(r["lp_ns_upper"]), i
    # An upper bound at 0.95 lies above the point prediction for nearly every query.
    assert sum(hu[i] >= hp[i] for i in range(len(hp))) > 0.9 * len(hp)
    with pytest.raises(pairsight.Error):
        model.predict(ops, q, coverage=1.5)


def test_predict_index_composition_and_solo(campaign, loaded):
    model, ops = loaded
    q = dict(hp_model="resnet50", hp_batch=8, hp_start=0, hp_len=40, lp_model="bert-base", lp_batch=8,
             lp_start=10, lp_len=30, hp_tpcs=27, lp_tpcs=27)
    out = campaign / "long.csv"
    with open(out, "w") as f:
        f.write(",".join(q) + "\n" + ",".join(str(v) for v in q.values()) + "\n")
    for compose in ("overlap", "index"):
        r = read_csv(cli("predict", "--model", campaign / "m.psm", "--ops", campaign / "c" / "ops.csv",
                         "--queries", out, "--out", campaign / "lp.csv", "--compose", compose, "-q") and
                     campaign / "lp.csv")[0]
        hp, lp, hs, ls = model.predict(ops, [q], compose=compose, solo=True)
        assert hp[0] == float(r["hp_ns_pred"]) and lp[0] == float(r["lp_ns_pred"])
        assert hp[0] / hs[0] == pytest.approx(float(r["hp_delta_pred"]), rel=1e-15)


def test_features_reproduce_predict_with_xgboost(campaign, loaded, tmp_path):
    xgb = pytest.importorskip("xgboost")
    np = pytest.importorskip("numpy")
    model, ops = loaded
    q = campaign / "c" / "coexec.csv"
    x_hp, x_lp, hs, ls = model.features(ops, q)
    assert x_hp.shape == (1000, model.info()["layout"]["n_features"]) and x_hp.dtype == np.float32
    model.export(tmp_path)
    hp, lp = model.predict(ops, q)
    for x, solo, want, side in ((x_hp, hs, hp, "hp"), (x_lp, ls, lp, "lp")):
        b = xgb.Booster(model_file=str(tmp_path / (side + ".ubj")))
        margin = b.predict(xgb.DMatrix(x, missing=np.nan), output_margin=True)
        got = solo * np.exp(margin.astype(np.float64))
        assert np.max(np.abs(got - want) / want) <= 1e-6


def test_info_and_feature_names(loaded):
    model, _ = loaded
    info = model.info()
    assert info["gpu"] == "A100-SXM4-40GB" and info["layout"]["window"] == 16
    assert model.feature_names[:2] == ["hp.op0.duration_ns", "hp.op0.dram_bytes"]
    assert model.feature_names[-4:] == ["p_tpcs", "q_tpcs", "hp_solo_ns", "lp_solo_ns"]
    assert info["training"]["n_samples"] == 1000


def test_train_adapt_save_load(campaign, tmp_path):
    ops = pairsight.Ops.load(campaign / "c" / "ops.csv")
    cx = pairsight.Coexec.load(campaign / "c" / "coexec.csv")
    assert len(cx) == 1000 and len(ops) > 0
    split = list(cx.split(1))
    # 0 train, 1 validation, 2 test, 3 calibration of the bounds
    assert set(split) <= {0, 1, 2, 3} and split.count(0) > 600 and split.count(3) > 0
    m = pairsight.Model.train(ops, cx, nthread=1, depths=[4], etas=[0.3], max_rounds=30)
    info = m.info()
    # The model trained on split 0 and calibrated its bounds on split 3.
    tr = info["training"]
    assert tr["depth"] == [4, 4] and tr["n_train"] == split.count(0) and tr["n_calib"] == split.count(3)
    a = m.adapt(ops, cx, adapt_rounds=5)
    assert a.info()["training"]["n_trees"][0] == info["training"]["n_trees"][0] + 5
    m.save(tmp_path / "py.psm")
    back = pairsight.Model.load(tmp_path / "py.psm")
    rows = read_csv(campaign / "c" / "coexec.csv")[:50]
    assert list(back.predict(ops, rows)[0]) == list(m.predict(ops, rows)[0])


def test_explain(loaded):
    model, ops = loaded
    e = model.explain(ops, dict(hp_model="resnet50", hp_batch=8, hp_start=0, hp_len=16,
                                lp_model="bert-base", lp_batch=8, lp_start=40, lp_len=16,
                                hp_tpcs=32, lp_tpcs=22))
    assert e["hp_ns"] > e["hp_solo_ns"] > 0 and e["items"]
    hp_sum = e["bias"]["hp"] + sum(i["contribution"] for i in e["items"] if i["side"] == "hp")
    assert math.exp(hp_sum) * e["hp_solo_ns"] == pytest.approx(e["hp_ns"], rel=1e-4)


def test_errors_carry_code_and_message(loaded, tmp_path):
    model, ops = loaded
    with pytest.raises(pairsight.Error) as e:
        pairsight.Ops.load(tmp_path / "none.csv")
    assert e.value.code == pairsight.PS_E_IO and "none.csv" in e.value.message
    bad = tmp_path / "bad.csv"
    bad.write_text("gpu,model\nx\n")
    with pytest.raises(pairsight.Error) as e:
        pairsight.Ops.load(bad)
    assert e.value.code == pairsight.PS_E_INPUT and "bad.csv" in e.value.message
    q = dict(hp_model="resnet50", hp_batch=8, hp_start=0, hp_len=16, lp_model="nosuch", lp_batch=8,
             lp_start=0, lp_len=4, hp_tpcs=32, lp_tpcs=22)
    with pytest.raises(pairsight.Error) as e:
        model.predict(ops, [q])
    assert e.value.code == pairsight.PS_E_INPUT and "nosuch" in e.value.message
    with pytest.raises(pairsight.Error) as e:
        model.predict(ops, [dict(q, lp_model="bert-base", lp_tpcs=40)])
    assert "more than the 54 TPCs" in e.value.message
    with pytest.raises(pairsight.Error) as e:
        model.features(ops, [dict(q, lp_model="bert-base", hp_len=20)])
    assert e.value.code == pairsight.PS_E_ARG
    with pytest.raises(pairsight.Error):
        model.predict(ops, [dict(q, hp_batch="eight")])
    with pytest.raises(TypeError):
        pairsight.Model.train(ops, None, bogus=1)
    with pytest.raises(pairsight.ArgumentError) as e:
        pairsight.Model.train(ops, pairsight.Coexec.load(os.path.join(ROOT, "tests", "data", "coexec_small.csv")),
                              bogus=1)
    assert "unknown key 'bogus'" in e.value.message and "adapt_depth" in e.value.message


def test_lists_without_numpy(loaded, monkeypatch):
    model, ops = loaded
    q = dict(hp_model="resnet50", hp_batch=8, hp_start=0, hp_len=16, lp_model="bert-base", lp_batch=8,
             lp_start=40, lp_len=16, hp_tpcs=32, lp_tpcs=22)
    want = model.predict(ops, [q])
    monkeypatch.setattr(pairsight._lib, "_np", None)
    hp, lp = model.predict(ops, [q, q])
    assert isinstance(hp, list) and hp == [want.hp_ns[0]] * 2
    x_hp, _, hs, _ = model.features(ops, [q])
    assert isinstance(x_hp, list) and len(x_hp[0]) == len(model.feature_names)


def test_colocate_train_predict_select(tmp_path):
    w = pairsight.Workloads.load(os.path.join(COLOC, "workloads.csv"))
    s = pairsight.Scaling.load(os.path.join(COLOC, "workload_scaling.csv"))
    c = pairsight.Colocations.load(os.path.join(COLOC, "colocations3.csv"))
    m = pairsight.ColocModel.train(w, c, s, kind="mps", boost_rounds=50)
    assert m.kind == "mps" and not m.predicts_sum
    pred = m.predict(w, c, s)
    assert len(pred) == len(c) and all(v > 0 for v in pred)
    m.save(tmp_path / "mps.psc")
    back = pairsight.ColocModel.load(tmp_path / "mps.psc")
    assert list(back.predict(w, c, s)) == list(pred)
    # select ranks as the CLI does.
    names = [r["workload"] for r in read_csv(os.path.join(COLOC, "workloads.csv"))]
    target, cands = names[0], [names[1], names[2:4]]
    got = back.select(w, target, cands, gpu="TESTGPU", shares=[40, 30, 30], scaling=s)
    out = cli("colocate", "select", "--model", tmp_path / "mps.psc", "--workloads",
              os.path.join(COLOC, "workloads.csv"), "--scaling", os.path.join(COLOC, "workload_scaling.csv"),
              "--target", target, "--candidates", "%s,%s" % (cands[0], "+".join(cands[1])),
              "--shares", "40/30/30", "--json").stdout
    want = json.loads(out)["ranking"]
    assert [g[0] if isinstance(g[0], str) else "+".join(g[0]) for g in got] == [r["candidate"] for r in want]
    for g, r in zip(got, want):  # one code (ps_coloc_select), the same figures
        assert g[1] == r["tput_sum"] and g[2] == r["tput"]


def test_no_struct_mirrors_and_the_query_layout_is_the_headers(tmp_path):
    """The package mirrors no C struct by hand: the only ctypes Structure is
    ps_query_t, built at import from the C library's own offsetof table;
    its fields are the header's, in order, and a program compiled against
    pairsight.h gives the same offsets and size."""
    import ctypes
    import re
    import shutil
    import pkgutil
    import importlib
    for m in pkgutil.iter_modules(pairsight.__path__):
        if m.name in ("capture", "profile_tpcs"):
            continue  # torch tools of their own, no C structs
        mod = importlib.import_module("pairsight." + m.name)
        for v in vars(mod).values():
            if isinstance(v, type) and issubclass(v, ctypes.Structure):
                assert v is pairsight._lib.Query, (m.name, v)
    header = open(os.path.join(ROOT, "include", "pairsight_core.h")).read()
    body = re.search(r"typedef struct \{([^}]*)\} ps_query_t;", header).group(1)
    names = re.findall(r"(\w+)\s*[,;]", re.sub(r"/\*.*?\*/", "", body, flags=re.S))
    assert tuple(names) == pairsight.QUERY_FIELDS
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to read the header's layout")
    q = pairsight._lib.Query
    lines = ["#include <pairsight.h>", "#include <stddef.h>", "#include <stdio.h>", "int main(void) {",
             'printf("size %zu\\n", sizeof(ps_query_t));']
    for f, _ in q._fields_:
        lines.append('printf("%s %%zu\\n", offsetof(ps_query_t, %s));' % (f, f))
    lines.append("return 0; }")
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run([cc, "-std=c11", "-I", os.path.join(ROOT, "include"), str(src), "-o", str(tmp_path / "layout")],
                   check=True)
    got = dict(l.split() for l in subprocess.run([str(tmp_path / "layout")], check=True, capture_output=True,
                                                 text=True).stdout.splitlines())
    assert int(got["size"]) == ctypes.sizeof(q)
    for f, _ in q._fields_:
        assert int(got[f]) == getattr(q, f).offset, f
