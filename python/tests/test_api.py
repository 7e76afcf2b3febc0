"""The package as issues 25, 29 and 30 asked for it: the result object,
queries from numpy and pandas, in-memory tables and select, pickling,
plan/replay/place against the CLI, defaults that are C's, and misuse at the
boundary (wrong types, integers out of C's range, NUL in strings, close()
while other threads predict). Run by tests/test_python.sh."""
import builtins
import json
import os
import pickle
import subprocess
import sys
import threading
import time

import pytest

import pairsight

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("PAIRSIGHT_CLI", os.path.join(ROOT, "build", "pairsight"))
COLOC = os.path.join(ROOT, "tests", "data", "colocate")
Q = dict(hp_model="resnet50", hp_batch=8, hp_start=0, hp_len=16, lp_model="bert-base", lp_batch=8, lp_start=40,
         lp_len=16, hp_tpcs=32, lp_tpcs=22)


def cli(*args):
    return subprocess.run([CLI] + [str(a) for a in args], check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def camp(tmp_path_factory):
    d = tmp_path_factory.mktemp("api")
    cli("simulate", "--gpu", "a100", "--experiments", 300, "--runs", 1, "--threads", 1, "--seed", 11, "--out",
        d / "c", "-q")
    cli("train", "--ops", d / "c" / "ops.csv", "--coexec", d / "c" / "coexec.csv", "--out", d / "m.psm",
        "--threads", 1, "--depths", 6, "--etas", 0.3, "--rounds", 60, "-q")
    return d


@pytest.fixture(scope="module")
def mo(camp):
    return pairsight.Model.load(camp / "m.psm"), pairsight.Ops.load(camp / "c" / "ops.csv")


@pytest.fixture(scope="module")
def co():
    w = pairsight.Workloads.load(os.path.join(COLOC, "workloads.csv"))
    s = pairsight.Scaling.load(os.path.join(COLOC, "workload_scaling.csv"))
    c = pairsight.Colocations.load(os.path.join(COLOC, "colocations3.csv"))
    return w, s, c


def test_version_check_at_import(monkeypatch):
    assert pairsight.__version__ == pairsight.version()
    monkeypatch.setattr(pairsight._lib, "__version__", "9.9.0")
    with pytest.raises(ImportError, match="version 0.1.0, this package is 9.9.0"):
        pairsight._lib._check_version()


def test_capture_imports_without_the_library():
    """python -m pairsight.capture needs no C library: without one the
    package imports, and a C-API name raises the loader's ImportError."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(pairsight.__file__)))
    env = dict(os.environ, PAIRSIGHT_LIBRARY="/nonexistent/libpairsight.so.0", PYTHONPATH=pkg)
    code = ("import pairsight.capture, pairsight\n"
            "try:\n    pairsight.Model\nexcept ImportError as e:\n    print('refused', 'cannot load' in str(e))\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "refused True"


def test_enum_names_come_from_c():
    assert pairsight.COLOC_KINDS[:2] == ("kace_lr", "kace_rf") and "auto" in pairsight.COLOC_KINDS
    assert pairsight.COMPOSE_NAMES == ("index", "overlap")
    assert "pairsight_bound" in pairsight.REPLAY_POLICIES


def test_adapt_depth_default_is_cs(mo, camp):
    """Python's adapt_depth default is the C library's (0: chosen per side)."""
    assert pairsight.default_params("train")["adapt_depth"] == 0
    assert "adapt_depth=0" in pairsight.Model.adapt.__doc__
    model, ops = mo
    cx = pairsight.Coexec.load(camp / "c" / "coexec.csv")
    a = model.adapt(ops, cx, adapt_rounds=3, nthread=1)
    b = model.adapt(ops, cx, adapt_rounds=3, nthread=1, adapt_depth=0)
    assert list(a.predict(ops, [Q]).hp_ns) == list(b.predict(ops, [Q]).hp_ns)
    # Depth chosen per side from 1, 2, 3 (the old Python default forced 1).
    assert a.info()["training"]["adapt_depth"] == b.info()["training"]["adapt_depth"]


def test_prediction_object(mo):
    model, ops = mo
    p = model.predict(ops, [Q, Q], solo=True, coverage=0.9)
    assert p.columns == ["hp_ns", "lp_ns", "hp_solo_ns", "lp_solo_ns", "hp_ns_upper", "lp_ns_upper"]
    assert p.n == 2 and p["hp_ns"][0] == p.hp_ns[1] and p.hp_ns_upper[0] >= p.hp_ns[0] * 0.9
    d = p.to_dict()
    assert set(d) == set(p.columns) and len(d["lp_ns"]) == 2
    hp, lp = model.predict(ops, [Q])  # the older tuple-style unpacking still works
    assert hp[0] == p.hp_ns[0]
    with pytest.raises(AttributeError, match="no column"):
        p.bogus


def test_structured_arrays_and_dataframes(mo):
    np = pytest.importorskip("numpy")
    model, ops = mo
    want = model.predict(ops, [Q, dict(Q, hp_tpcs=27, lp_tpcs=27)])
    dt = [(k, "U32" if isinstance(v, str) else "i8") for k, v in Q.items()]
    arr = np.array([tuple(Q.values()), tuple(dict(Q, hp_tpcs=27, lp_tpcs=27).values())], dtype=dt)
    got = model.predict(ops, arr)
    assert (got.hp_ns == want.hp_ns).all() and (got.lp_ns == want.lp_ns).all()
    # Anything shaped as a DataFrame (to_dict("records"), columns, index) is
    # read as one, so this runs where pandas is absent too.
    class Frame:
        def __init__(self, rows, index):
            self.rows, self.index, self.columns = rows, index, list(rows[0])

        def to_dict(self, orient):
            assert orient == "records"
            return self.rows

    p = model.predict(ops, Frame([Q, dict(Q, hp_tpcs=27, lp_tpcs=27)], ["a", "b"]))
    assert (p.hp_ns == want.hp_ns).all() and list(p._index) == ["a", "b"]
    with pytest.raises(pairsight.Error, match="^row 'b'"):
        model.predict(ops, Frame([Q, dict(Q, lp_model="nosuch")], ["a", "b"]))


def test_pandas_dataframes(mo):
    pd = pytest.importorskip("pandas")
    model, ops = mo
    want = model.predict(ops, [Q, dict(Q, hp_tpcs=27, lp_tpcs=27)])
    df = pd.DataFrame([Q, dict(Q, hp_tpcs=27, lp_tpcs=27)], index=["a", "b"])
    p = model.predict(ops, df)
    assert (p.hp_ns == want.hp_ns).all()
    out = p.to_pandas()
    assert list(out.index) == ["a", "b"] and list(out.columns) == ["hp_ns", "lp_ns"]
    with pytest.raises(pairsight.Error, match="row 'b'"):
        model.predict(ops, pd.DataFrame([Q, dict(Q, lp_model="nosuch")], index=["a", "b"]))


def test_errors_name_the_callers_rows(mo, tmp_path):
    model, ops = mo
    with pytest.raises(pairsight.Error) as e:
        model.predict(ops, [Q, Q, dict(Q, lp_model="nosuch")])
    assert e.value.message.startswith("query 2") and "nosuch" in e.value.message
    f = tmp_path / "q.csv"
    f.write_text(",".join(Q) + "\n" + ",".join(map(str, Q.values())) + "\n" +
                 ",".join(map(str, dict(Q, hp_model="nosuch").values())) + "\n")
    with pytest.raises(pairsight.Error) as e:
        model.predict(ops, f)
    assert e.value.message.startswith("%s:3" % f)
    rows = [dict(colocation="x", gpu="TESTGPU", slot=1, workload="alpha_batch2-inf", share_pct=100, tput=1.0),
            dict(colocation="x", gpu="TESTGPU", slot=2, workload="alpha_batch8-inf", share_pct=100, tput="fast")]
    with pytest.raises(pairsight.Error) as e:
        pairsight.Colocations.from_rows(rows, source="my co-locations")
    assert e.value.message.startswith("my co-locations, row 1, column tput:"), e.value.message


def test_tables_from_rows_in_memory(co, monkeypatch):
    w, s, c = co
    rows = [dict(colocation="x", gpu="TESTGPU", slot=1, workload="alpha_batch2-inf", share_pct=100),
            dict(colocation="x", gpu="TESTGPU", slot=2, workload="beta_batch4-train", share_pct=100)]

    def no_files(*a, **k):
        raise AssertionError("a file was opened: %r" % (a,))

    monkeypatch.setattr(builtins, "open", no_files)
    t = pairsight.Colocations.from_rows(rows)
    assert len(t) == 2


def test_select_in_memory_infers_gpu_and_names_candidates(co, tmp_path, monkeypatch):
    w, s, c = co
    m = pairsight.ColocModel.train(w, c, s, kind="mps", boost_rounds=30)
    names = [k for g, k in w.keys()]
    target, cands = names[0], [names[1], names[2:4]]
    with_gpu = m.select(w, target, cands, gpu="TESTGPU", shares=[40, 30, 30], scaling=s)
    import tempfile
    monkeypatch.setattr(tempfile, "TemporaryDirectory", None)  # the old select's scratch folder
    monkeypatch.setattr(builtins, "open", None)
    inferred = m.select(w, target, cands, shares=[40, 30, 30], scaling=s)
    monkeypatch.undo()
    assert [x[1] for x in inferred] == [x[1] for x in with_gpu]
    # the library's select (ps_coloc_select): candidates as given, "c+d" as [c, d]
    assert inferred[0][0] is cands[0] or inferred[0][0] is cands[1]
    joined = m.select(w, target, [cands[0], "+".join(cands[1])], shares=[40, 30, 30], scaling=s)
    assert sorted(x[1:] for x in joined) == sorted(x[1:] for x in inferred)
    assert m.select(w, target, [], scaling=s) == []
    with pytest.raises(pairsight.Error) as e:
        m.select(w, target, [names[1], [names[2], "nosuch"]])
    assert e.value.code == pairsight.PS_E_INPUT and "row" not in e.value.message
    assert e.value.message.startswith("select: candidate 'nosuch' (gpu TESTGPU) is not in workloads.csv")
    with pytest.raises(pairsight.Error, match="select: target 'nosuch' is not in workloads.csv"):
        m.select(w, "nosuch", cands)
    with pytest.raises(pairsight.ArgumentError, match="select: candidates: '%s' is listed twice" % names[1]):
        m.select(w, target, [names[1], [names[1]]])
    with pytest.raises(pairsight.ArgumentError, match="select: shares: 4 shares for at most 3 workloads"):
        m.select(w, target, cands, shares=[40, 30, 20, 10])


def test_pickle_models(mo, co):
    model, ops = mo
    back = pickle.loads(pickle.dumps(model))
    assert list(back.predict(ops, [Q]).hp_ns) == list(model.predict(ops, [Q]).hp_ns)
    w, s, c = co
    cm = pairsight.ColocModel.train(w, c, s, kind="kace_rf", trees=5)
    cb = pickle.loads(pickle.dumps(cm))
    assert list(cb.predict(w, c, s)) == list(cm.predict(w, c, s)) and cb.kind == "kace_rf"
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(ops)
    with pytest.raises(pairsight.Error, match="model in memory"):
        pairsight.Model.from_bytes(model.to_bytes()[:-3])


def test_plan_replay_equal_cli(mo, camp):
    model, ops = mo
    want = json.loads(cli("plan", "--model", camp / "m.psm", "--ops", camp / "c" / "ops.csv", "--hp", "resnet50:8",
                          "--lp", "bert-base:8", "--slo-ns", 2e7, "--coverage", 0, "-q"))
    got = model.plan(ops, "resnet50", 8, "bert-base", 8, budget_ns=2e7, coverage=0)
    assert got["planned_ns"] == want["planned_ns"] and got["lp_work_ns"] == want["lp_work_ns"]
    # Model.plan is the plan operation's request (one format: the CLI's, the service's, run's)
    for d in (got, want):
        d.pop("plan_seconds")
    assert got == want
    kw = dict(coverage=0.9, window=8, lp_lengths=2, lp_start=5)
    got = model.plan(ops, "resnet50", 8, "bert-base", 8, 2e7, **kw)
    want = pairsight.run("plan", model=model, ops=ops, hp="resnet50:8", lp="bert-base:8", slo_ns=2e7, **kw)
    assert got.pop("plan_seconds") >= 0 and want.pop("plan_seconds") >= 0
    assert got == want and got["hp_model"] == "resnet50"
    with pytest.raises(pairsight.ArgumentError, match="plan: unknown member 'bogus'"):
        model.plan(ops, "resnet50", 8, "bert-base", 8, 2e7, bogus=1)
    with pytest.raises(pairsight.ArgumentError, match="window: .*0..64"):
        model.plan(ops, "resnet50", 8, "bert-base", 8, 2e7, window=65)
    want = json.loads(cli("replay", "--model", camp / "m.psm", "--ops", camp / "c" / "ops.csv", "--hp", "resnet50:8",
                          "--lp", "bert-base:8", "--requests", 20, "--warmup", 20, "--policies",
                          "dedicated,orion,pairsight", "--json", "-q"))
    got = model.replay(ops, "resnet50", 8, "bert-base", 8, requests=20, warmup=20,
                       policies="dedicated,orion,pairsight")
    assert set(got["policies"]) == {"dedicated", "orion", "pairsight"}
    for k in got["policies"]:
        for f in ("slo_attainment", "hp_p99_ns", "lp_throughput"):
            assert got["policies"][k][f] == pytest.approx(want["policies"][k][f], rel=1e-12), (k, f)
    with pytest.raises(pairsight.ArgumentError, match="unknown key 'bogus'"):
        model.replay(ops, "resnet50", 8, "bert-base", 8, bogus=1)


def test_operations_by_name(mo, camp, co, tmp_path):
    """pairsight.run: keyword arguments through the operation's one table,
    the same plan as `pairsight plan` (whose options come from that table)."""
    model, ops = mo
    assert {"plan", "colocate_shares"} <= set(pairsight.operations())
    decl = pairsight.op_params("plan")
    rows = {p["name"]: p for p in decl["params"]}
    assert decl["result"] == "pairsight.plan.v1" and decl["members"] == ["hp", "lp", "gpu"]
    assert rows["slo_factor"]["min"] == 1 and rows["slo_factor"]["max"] == 100 and rows["slo_factor"]["default"] is None
    assert rows["coverage"]["default"] == pairsight.default_params("plan")["coverage"]
    usage = cli("plan", "--help")
    for name, p in rows.items():  # the CLI's options and help are the table's
        assert "--" + name.replace("_", "-") in usage and p["help"].split(" (")[0][:40] in " ".join(usage.split())
    want = json.loads(cli("plan", "--model", camp / "m.psm", "--ops", camp / "c" / "ops.csv", "--hp", "resnet50:8",
                          "--lp", "bert-base:8,resnet50:8", "--slo-factor", 1.3, "--lp-start", 5, "-q"))
    got = pairsight.run("plan", model=model, ops=ops, hp="resnet50:8", lp=["bert-base:8", "resnet50:8"],
                        slo_factor=1.3, lp_start=5)
    for d in (got, want):
        d.pop("plan_seconds")
    assert got == want
    with pytest.raises(pairsight.ArgumentError, match="slo_factor: expected a number in 1..100"):
        pairsight.run("plan", model=model, ops=ops, hp="resnet50:8", lp="bert-base:8", slo_factor=0.5)
    with pytest.raises(pairsight.ArgumentError, match="unknown member 'bogus' .known: slo_ns, slo_factor"):
        pairsight.run("plan", model=model, ops=ops, hp="resnet50:8", lp="bert-base:8", slo_factor=1.2, bogus=1)
    with pytest.raises(pairsight.ArgumentError, match="lp_start: bad value '1.5': expected an integer"):
        pairsight.run("plan", model=model, ops=ops, hp="resnet50:8", lp="bert-base:8", slo_factor=1.2, lp_start=1.5)
    with pytest.raises(pairsight.ArgumentError, match="unknown operation 'nope' .known: plan"):
        pairsight.op_params("nope")
    # replay: the same result as Model.replay (config.c's path) and its CLI options from the same table
    want = model.replay(ops, "resnet50", 8, "bert-base", 8, requests=20, warmup=20, policies="dedicated,orion")
    got = pairsight.run("replay", model=model, ops=ops, hp="resnet50:8", lp="bert-base:8", requests=20, warmup=20,
                        policies="dedicated,orion")
    assert got == want
    with pytest.raises(pairsight.ArgumentError, match="load: expected a number in 0..1 .an open bound excluded"):
        pairsight.run("replay", ops=ops, hp="resnet50:8", lp="bert-base:8", load=1)
    # predict: the same figures as Model.predict, queries read through the query's field table
    got = pairsight.run("predict", model=model, ops=ops, queries=[Q, dict(Q, lp_start=0)], coverage=0.9)
    want = model.predict(ops, [Q, dict(Q, lp_start=0)], coverage=0.9)
    for col, key in (("hp_ns_pred", "hp_ns"), ("lp_ns_pred", "lp_ns"), ("hp_ns_upper", "hp_ns_upper")):
        assert list(got["predictions"][col]) == list(want[key]), col
    assert got["n"] == 2 and got["compose"] == "overlap" and got["coverage"] == 0.9
    with pytest.raises(pairsight.ArgumentError, match=r"queries\[0\]: missing hp_batch"):
        pairsight.run("predict", model=model, ops=ops, queries=[{"hp_model": "resnet50"}])
    w, s, c = co
    m = pairsight.ColocModel.train(w, c, s, kind="ratio")
    got = pairsight.run("colocate_shares", coloc=m, workloads=w, scaling=s,
                        set=["alpha_batch2-inf", "beta_batch4-train"], floor={"alpha_batch2-inf": 0.1})
    assert got == m.shares(w, scaling=s, set=["alpha_batch2-inf", "beta_batch4-train"],
                           floor={"alpha_batch2-inf": 0.1})
    # colocate_predict: a set's figures as ColocModel.select ranks it (ps_coloc_predict_set)
    got = pairsight.run("colocate_predict", coloc=m, workloads=w, scaling=s,
                        set="alpha_batch2-inf,beta_batch4-train", shares=[40, 60])
    (_, tsum, tputs), = m.select(w, "alpha_batch2-inf", [["beta_batch4-train"]], shares=[40, 60], scaling=s)
    assert got["tput_pred"] == tputs and got["tput_sum_pred"] == tsum and got["shares"] == [40, 60]
    assert got["set"] == ["alpha_batch2-inf", "beta_batch4-train"] and got["gpu"] in m.gpus
    assert pairsight.run("colocate_predict", coloc=m, workloads=w, scaling=s, gpu=got["gpu"], shares=[40, 60],
                         set=["alpha_batch2-inf", "beta_batch4-train"]) == got
    with pytest.raises(pairsight.ArgumentError, match="shares: expected a list of 2 integers in 1..100"):
        pairsight.run("colocate_predict", coloc=m, workloads=w, set="alpha_batch2-inf,beta_batch4-train", shares=[50])
    with pytest.raises(pairsight.Error, match="nope"):
        pairsight.run("colocate_predict", coloc=m, workloads=w, set=["alpha_batch2-inf", "nope"], gpu=got["gpu"])
    with pytest.raises(pairsight.ArgumentError, match="needs a co-location model .coloc. and its workloads table"):
        pairsight.run("colocate_predict", workloads=w, set="alpha_batch2-inf")
    # colocate_score: POST /v1/colocate/score's reply (ps_coloc_score_json), a candidate as colocate_predict predicts it
    got = pairsight.run("colocate_score", coloc=m, workloads=w, scaling=s, target="alpha_batch2-inf",
                        candidates=["beta_batch4-train", "alpha_batch2-inf+beta_batch4-train"], shares=[40, 60])
    c0 = got["candidates"][0]
    assert c0["tput"] == tputs and c0["tput_sum"] == tsum and c0["shares"] == [40, 60] and got["gpu"] in m.gpus
    assert got["schema"] == "pairsight.colocate_score.v1" and sorted(got["ranking"]) == [0, 1]
    assert got["candidates"][1]["shares"] == [40, 60, 60] and got["fingerprint"] is None
    with pytest.raises(pairsight.Error, match=r"candidates\[1\]: .*nope"):
        pairsight.run("colocate_score", coloc=m, workloads=w, target="alpha_batch2-inf",
                      candidates=["beta_batch4-train", "nope"])
    with pytest.raises(pairsight.ArgumentError, match="target: expected a workload name"):
        pairsight.run("colocate_score", coloc=m, workloads=w, candidates=["beta_batch4-train"])
    with pytest.raises(pairsight.ArgumentError, match="colocate_score: needs a co-location model .coloc."):
        pairsight.run("colocate_score", workloads=w, target="alpha_batch2-inf", candidates=["beta_batch4-train"])
    # overlap_predict: `pairsight overlap predict`'s rows (its CSV writes predicted_us with %.1f)
    ov, csv = tmp_path / "ov.model", os.path.join(ROOT, "tests", "data", "overlap_small.csv")
    cli("overlap", "train", "--overlap", csv, "--out", ov, "--rounds", 20, "-q")
    want = [r.split(",") for r in cli("overlap", "predict", "--model", ov, "--overlap", csv, "-q").split()[1:]]
    got = pairsight.run("overlap_predict", ov_model=str(ov), overlap=csv)
    assert got["n"] == len(want) > 0 and got["predicted"] == sum(1 for r in want if r[1])
    assert [[e["experiment"], "" if e["predicted_us"] is None else "%.1f" % e["predicted_us"],
             "%.17g" % e["median_us"]] for e in got["experiments"]] == want
    with pytest.raises(pairsight.ArgumentError, match="overlap_predict: overlap: expected a path"):
        pairsight.run("overlap_predict", ov_model=str(ov))
    with pytest.raises(pairsight.Error, match="nope.csv"):
        pairsight.run("overlap_predict", ov_model=str(ov), overlap=str(tmp_path / "nope.csv"))


def test_collect_operation(tmp_path):
    """pairsight.run("collect"): collect's workflow in the library on the
    fake backend (a simulated GPU), one shard per device merged, writes the
    very files `pairsight collect` writes; a failed shard is named; bad
    input is refused by name."""
    co = ["--backend", "fake", "--hp", "resnet50:2", "--lp", "bert-base:2", "--tpcs", "8,20,46", "--runs", 3,
          "--experiments", 12, "--seed", 5]
    kw = dict(backend="fake", hp="resnet50:2", lp="bert-base:2", tpcs="8,20,46", runs=3, experiments=12, seed=5)
    cli("collect", "profile", "--backend", "fake", "--model", "resnet50", "--batch", 2, "--tpcs", "8,20,46",
        "--db", tmp_path / "cli.db", "-q")
    cli("collect", "coexec", *co, "--devices", "0,1", "--db", tmp_path / "cli.db", "-q")
    cli("collect", "export", "--db", tmp_path / "cli.db", "--ops", tmp_path / "cli_ops.csv", "--coexec",
        tmp_path / "cli_co.csv", "-q")
    decl = pairsight.op_params("collect")
    assert "model_name" in decl["members"] and decl["needs"] == ""
    rows = {p["name"]: p for p in decl["params"]}
    assert rows["runs"]["min"] == 1 and rows["runs"]["default"] is None and rows["batch"]["default"] == 8
    db = str(tmp_path / "py.db")
    got = pairsight.run("collect", action="profile", db=db, backend="fake", model_name="resnet50", batch=2,
                        tpcs="8,20,46")
    assert got["schema"] == "pairsight.collect.v1" and got["tasks_done"] == got["tasks"] == 3
    assert got["gpu"] == "FAKE-GPU" and got["op_rows"] > 0 and got["shards"] == 0
    got = pairsight.run("collect", action="coexec", db=db, devices="0,1", export_ops=str(tmp_path / "py_ops.csv"),
                        export_coexec=str(tmp_path / "py_co.csv"), **kw)
    assert got["shards"] == 2 and got["coexec_rows"] == 36 and got["tasks_done"] == got["tasks"] == 15
    assert got["notes"] == ["shard %d/2 on device %d done (%s.shard%d-of-2)" % (k, k, db, k) for k in (0, 1)]
    for a, b in (("py_ops.csv", "cli_ops.csv"), ("py_co.csv", "cli_co.csv")):
        assert (tmp_path / a).read_bytes() == (tmp_path / b).read_bytes(), a
    # again: every task is done, nothing is measured twice
    again = pairsight.run("collect", action="coexec", db=db, devices="0,1", **kw)
    assert again["coexec_rows"] == 36
    # a shard that fails: its database is not one; the error names it, nothing is merged
    bad = str(tmp_path / "bad.db")
    open(bad + ".shard1-of-2", "w").write("not a database\n")
    with pytest.raises(pairsight.Error, match=r"1 of 2 shards failed.*shard 1/2 on device 1 failed .exit status 1; "
                       r".*not a campaign database"):
        pairsight.run("collect", action="coexec", db=bad, devices="0,1", **kw)
    assert not os.path.exists(bad)
    for args, msg in [(dict(db=db), "missing action"), (dict(action="scan", db=db), "action: 'scan'"),
                      (dict(action="profile"), "missing db"), (dict(action="profile", db=db), "needs a model"),
                      (dict(action="coexec", db=db, hp="resnet50"), "hp: bad value 'resnet50'"),
                      (dict(action="coexec", db=db, hp="resnet50:2"), "coexec needs hp and lp"),
                      (dict(kw, action="coexec", db=db, runs=0), "runs: expected a number in 1..1e.06"),
                      (dict(kw, action="coexec", db=db, tpcs="0"), "tpcs: '0': expected counts"),
                      (dict(kw, action="coexec", db=db, devices="0,0"), "devices: 0 twice"),
                      (dict(kw, action="coexec", db=db, devices="0,x"), "devices: bad value '0,x'"),
                      (dict(kw, action="coexec", db=db, devices="0,1", shard="0/2"), "devices and a shard"),
                      (dict(kw, action="coexec", db=db, seg_min=20), "seg_min 20 is above seg_max"),
                      (dict(kw, action="coexec", db=db, flush_l2=2), "flush_l2: expected a number in 0..1"),
                      (dict(action="profile", db=db, model_name="resnet50", bogus=1), "unknown member 'bogus'"),
                      (dict(action="profile", db=db, model_name="vgg16", backend="fake"), "unknown model 'vgg16'"),
                      (dict(action="scaling", model_name="mobilenetv2", shares="0,100"), "shares: bad value '0,100'"),
                      (dict(action="colocate", jobs="mobilenetv2@50"), "jobs: bad value 'mobilenetv2@50'"),
                      (dict(action="colocate"), "colocate needs jobs"),
                      (dict(action="colocate", jobs="mobilenetv2:4@50", seconds=0), "seconds: expected a number")]:
        with pytest.raises(pairsight.ArgumentError, match=msg):
            pairsight.run("collect", **args)
    # scaling and colocate: the rows `pairsight collect scaling|colocate` adds to the same tables
    sc = ["--backend", "fake", "--seconds", 0.01]
    cli("collect", "scaling", *sc, "--model", "mobilenetv2", "--batch", 4, "--shares", "20,100", "--scaling",
        tmp_path / "cli_s.csv", "--workloads", tmp_path / "cli_w.csv")
    cli("collect", "colocate", *sc, "--jobs", "mobilenetv2:4@50,bert-base:2@50", "--colocations",
        tmp_path / "cli_c.csv")
    mk = dict(backend="fake", seconds=0.01)
    got = pairsight.run("collect", action="scaling", model_name="mobilenetv2", batch=4, shares="20,100",
                        scaling_path=str(tmp_path / "py_s.csv"), workloads_path=str(tmp_path / "py_w.csv"), **mk)
    assert got["workload"] == "mobilenetv2_batch4-inf" and [r["share_pct"] for r in got["rows"]] == [20, 100]
    got = pairsight.run("collect", action="colocate", jobs="mobilenetv2:4@50,bert-base:2@50",
                        colocations_path=str(tmp_path / "py_c.csv"), **mk)
    assert got["colocation"] == "mobilenetv2_batch4-inf@50+bert-base_batch2-inf@50" and len(got["rows"]) == 2
    for t in "swc":
        assert (tmp_path / ("py_%s.csv" % t)).read_bytes() == (tmp_path / ("cli_%s.csv" % t)).read_bytes(), t
    with pytest.raises(pairsight.Error, match="already has co-location mobilenetv2_batch4-inf@50"):
        pairsight.run("collect", action="colocate", jobs="mobilenetv2:4@50,bert-base:2@50",
                      colocations_path=str(tmp_path / "py_c.csv"), **mk)


def test_place_equals_cli(co, tmp_path):
    w, s, c = co
    m = pairsight.ColocModel.train(w, c, s, kind="mps", boost_rounds=50)
    m.save(tmp_path / "m.psc")
    jobs = ["alpha_batch2-inf", "alpha_batch2-inf", "beta_batch4-train", "gamma_batch1-inf"]
    want = json.loads(cli("colocate", "place", "--model", tmp_path / "m.psc", "--workloads",
                          os.path.join(COLOC, "workloads.csv"), "--scaling",
                          os.path.join(COLOC, "workload_scaling.csv"), "--jobs", ",".join(jobs), "--gpus", 2,
                          "--json", "-q"))
    got = m.place(w, jobs, 2, scaling=s)
    assert got["objective"] == pytest.approx(want["objective"], rel=1e-12) and got["exact"] == want["exact"]
    assert [j["job"] for j in got["jobs"]] == jobs
    # the colocate_place operation: the CLI's --json reply (both read the cluster with ps_coloc_cluster_parse)
    run = lambda **kw: pairsight.run("colocate_place", coloc=m, workloads=w, scaling=s, **kw)
    assert run(jobs=jobs, gpus=2) == want and want["schema"] == "pairsight.colocate-place.v1" and want["exact"]
    assert run(jobs="alpha_batch2-inf*2,beta_batch4-train,gamma_batch1-inf", gpus=[None, None]) == want
    want3 = json.loads(cli("colocate", "place", "--model", tmp_path / "m.psc", "--workloads",
                           os.path.join(COLOC, "workloads.csv"), "--scaling", os.path.join(COLOC, "workload_scaling.csv"),
                           "--jobs", ",".join(jobs), "--gpus", "1:TESTGPU", "--max-per-gpu", 3, "--shares", "100,50",
                           "--allow-wait", "--time-limit", 2, "--json", "-q"))
    got3 = run(jobs=jobs, gpus=["TESTGPU"], max_per_gpu=3, shares=[100, 50], allow_wait=True, time_limit=2)
    assert got3 == want3 and got3["max_per_gpu"] == 3 and got3["gpus"][0]["type"] == "TESTGPU"
    decl = {p["name"]: p for p in pairsight.op_params("colocate_place")["params"]}
    assert decl["time_limit"]["default"] == 5 and decl["max_per_gpu"]["max"] == 8
    with pytest.raises(pairsight.Error, match="place: jobs: 'nope' has no row in workloads.csv"):
        run(jobs=["alpha_batch2-inf", "nope"], gpus=1)
    with pytest.raises(pairsight.Error, match="place: gpus: GPU type 'NOPE' has no row in workloads.csv .it has"):
        run(jobs=jobs, gpus="1:NOPE")
    with pytest.raises(pairsight.ArgumentError, match="place: jobs: 'a\\*0': the repeat count must be 1..64"):
        run(jobs="a*0", gpus=1)
    with pytest.raises(pairsight.ArgumentError, match="place: shares: expected up to 4 shares in 1..100, got '100,0'"):
        run(jobs=jobs, gpus=1, shares=[100, 0])
    with pytest.raises(pairsight.ArgumentError, match="colocate_place: time_limit: expected a number in 0..86400"):
        run(jobs=jobs, gpus=1, time_limit=-1)
    with pytest.raises(pairsight.ArgumentError, match="colocate_place: allow_wait: expected true or false"):
        run(jobs=jobs, gpus=1, allow_wait="yes")
    with pytest.raises(pairsight.ArgumentError, match="colocate_place: gpus: expected a count"):
        run(jobs=jobs)
    # colocate shares: the same reply as the CLI's --json, its emit, its refusals
    args = ["--set", "alpha_batch2-inf,beta_batch4-train", "--floor", "alpha_batch2-inf=0.1", "--json"]
    want = json.loads(cli("colocate", "shares", "--model", tmp_path / "m.psc", "--workloads",
                          os.path.join(COLOC, "workloads.csv"), "--scaling",
                          os.path.join(COLOC, "workload_scaling.csv"), *args))
    got = m.shares(w, scaling=s, set=["alpha_batch2-inf", "beta_batch4-train"], floor={"alpha_batch2-inf": 0.1},
                   max_total=100, step=10)
    assert got == want and got["schema"] == "pairsight.shares.v1"
    assert "kind: GpuConfig" in m.shares(w, scaling=s, emit="dra", set="alpha_batch2-inf,beta_batch4-train")
    with pytest.raises(pairsight.ArgumentError, match="sums to 120"):
        m.shares(w, scaling=s, set="alpha_batch2-inf,beta_batch4-train", candidates="60/60")


def test_colocate_select_op_equals_cli(co, tmp_path):
    """pairsight.run('colocate_select'): the ranking `pairsight colocate
    select --json` prints (both call ps_coloc_select), its lists as strings
    or lists, and its refusals naming the member."""
    w, s, c = co
    m = pairsight.ColocModel.train(w, c, s, kind="mps", boost_rounds=50)
    m.save(tmp_path / "m.psc")
    files = ["--model", tmp_path / "m.psc", "--workloads", os.path.join(COLOC, "workloads.csv"), "--scaling",
             os.path.join(COLOC, "workload_scaling.csv")]
    cands = ["beta_batch4-train", "gamma_batch1-inf+alpha_batch8-inf", "gamma_batch4-inf"]
    want = json.loads(cli("colocate", "select", *files, "--target", "alpha_batch2-inf", "--candidates",
                          ",".join(cands), "--shares", "50/25", "--json"))
    got = pairsight.run("colocate_select", coloc=m, workloads=w, scaling=s, target="alpha_batch2-inf",
                        candidates=cands, shares=[50, 25])
    assert got == want and got["schema"] == "pairsight.colocate-select.v1" and len(got["ranking"]) == 3
    sums = [r["tput_sum"] for r in got["ranking"]]
    assert sums == sorted(sums, reverse=True) and {r["candidate"] for r in got["ranking"]} == set(cands)
    assert pairsight.run("colocate_select", coloc=m, workloads=w, scaling=s, target="alpha_batch2-inf",
                         candidates=",".join(cands), shares="50/25") == got
    # a candidate's figures are colocate_predict's for its set at the same shares
    two = [r for r in got["ranking"] if r["candidate"] == cands[1]][0]
    one = pairsight.run("colocate_predict", coloc=m, workloads=w, scaling=s,
                        set=["alpha_batch2-inf", "gamma_batch1-inf", "alpha_batch8-inf"], shares=[50, 25, 25])
    assert two["tput"] == one["tput_pred"] and two["tput_sum"] == one["tput_sum_pred"]
    run = lambda **kw: pairsight.run("colocate_select", coloc=m, workloads=w, scaling=s, **kw)
    with pytest.raises(pairsight.Error, match="select: target 'alpha_batch2-inff' is not in workloads.csv; did you "
                       "mean 'alpha_batch2-inf'"):
        run(target="alpha_batch2-inff", candidates=cands)
    with pytest.raises(pairsight.Error, match="select: candidate 'nope' .gpu TESTGPU. is not in workloads.csv"):
        run(target="alpha_batch2-inf", candidates=["beta_batch4-train", "nope"])
    with pytest.raises(pairsight.ArgumentError, match="select: candidates: 'gamma_batch4-inf' is listed twice"):
        run(target="alpha_batch2-inf", candidates=["gamma_batch4-inf", "gamma_batch4-inf"])
    with pytest.raises(pairsight.ArgumentError, match="select: shares: 3 shares for at most 2 workloads"):
        run(target="alpha_batch2-inf", candidates=["beta_batch4-train"], shares=[50, 25, 25])
    with pytest.raises(pairsight.ArgumentError, match="select: shares: expected A/B/.. in 1..100, got '0/50'"):
        run(target="alpha_batch2-inf", candidates=["beta_batch4-train"], shares=[0, 50])
    with pytest.raises(pairsight.ArgumentError, match="colocate_select: candidates: expected"):
        run(target="alpha_batch2-inf", candidates=[])
    with pytest.raises(pairsight.ArgumentError, match="colocate_select: target: expected a workload name"):
        run(candidates=cands)
    with pytest.raises(pairsight.ArgumentError, match="colocate_select: needs a co-location model .coloc."):
        pairsight.run("colocate_select", workloads=w, target="alpha_batch2-inf", candidates=cands)


def test_misuse_at_the_boundary(mo, camp):
    model, ops = mo
    cx = pairsight.Coexec.load(camp / "c" / "coexec.csv")
    with pytest.raises(TypeError, match="ops must be a pairsight.Ops, not Coexec"):
        model.predict(cx, [Q])
    with pytest.raises(TypeError):
        pairsight.Model.train(cx, ops)
    for bad in (2 ** 32 + 23, -2 ** 31 - 1, 2 ** 63):
        with pytest.raises(ValueError, match="outside the C range"):
            model.predict(ops, [dict(Q, hp_start=bad)])
    with pytest.raises(ValueError, match="NUL"):
        model.predict(ops, [dict(Q, hp_model="resnet50\0junk")])
    with pytest.raises(ValueError, match="NUL"):
        pairsight.Ops.load("ops\0.csv")
    with pytest.raises(ValueError):
        pairsight.Model.train(ops, cx, max_rounds=2 ** 32 + 23)
    with pytest.raises(ValueError, match="NUL"):
        pairsight.Colocations.from_rows([dict(colocation="x\0y", gpu="g", slot=1, workload="w", share_pct=100)])
    m2 = pairsight.Model.load(camp / "m.psm")
    m2.close()
    with pytest.raises(pairsight.Error, match="used after close"):
        m2.predict(ops, [Q])
    m2.close()  # twice is fine


def test_close_while_other_threads_predict(camp):
    """close() on a model while threads are inside predict waits for them;
    calls after it fail cleanly. Under ASan (scripts/test.sh --sanitize) a
    use-after-free here aborts the process."""
    ops = pairsight.Ops.load(camp / "c" / "ops.csv")
    queries = [dict(Q, hp_tpcs=t, lp_tpcs=54 - t) for t in (16, 22, 27, 32, 38)] * 40
    for _ in range(int(os.environ.get("PAIRSIGHT_STRESS_ROUNDS", "5"))):
        model = pairsight.Model.load(camp / "m.psm")
        done, errors, ok = threading.Event(), [], [0]

        def work():
            while not done.is_set():
                try:
                    p = model.predict(ops, queries)
                    assert len(p.hp_ns) == len(queries)
                    ok[0] += 1
                except pairsight.Error as e:
                    if "used after close" not in e.message:
                        errors.append(e)
                    return

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(0.05)
        model.close()
        done.set()
        for t in threads:
            t.join()
        assert not errors, errors
        assert ok[0] > 0


def test_coloc_model_serves_one_thread_at_a_time(co):
    """The C library lets one thread use a co-location model at a time: calls
    from several threads wait for each other, and close() waits for them."""
    w, s, c = co
    m = pairsight.ColocModel.train(w, c, s, kind="kace_rf", trees=5)
    want = list(m.predict(w, c, s))
    done, errors, ok = threading.Event(), [], [0]

    def work():
        while not done.is_set():
            try:
                got = list(m.predict(w, c, s))
                if got != want:
                    errors.append("differs")
                ok[0] += 1
            except pairsight.Error as e:
                if "used after close" not in e.message:
                    errors.append(e)
                return

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.1)
    m.close()
    done.set()
    for t in threads:
        t.join()
    assert not errors and ok[0] > 0
