"""The PairSight segment model (docs/model.md): train, adapt, predict with
bounds, features, explain, plan and replay, save, load and pickle."""
from __future__ import annotations

import ctypes as _C
import json as _json
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from . import _lib
from ._handle import SavedModel, use
from .queries import Batch, batch
from .tables import Coexec, Ops


class Prediction:
    """The result of Model.predict: one row per query, in the queries' order,
    with named columns: hp_ns and lp_ns (predicted co-execution latency),
    hp_solo_ns and lp_solo_ns (standalone latency at each side's TPCs,
    with solo=True), hp_ns_upper and lp_ns_upper (calibrated upper bounds,
    with coverage=C). Columns are numpy arrays (lists without numpy):
    p.hp_ns or p["hp_ns"]; p.to_pandas() is a DataFrame (pandas needed),
    p.to_dict() a dict of lists. For code written against the older tuple
    result, the columns also unpack in order: hp, lp = model.predict(...)."""

    def __init__(self, columns: Dict[str, Any], n: int) -> None:
        self._columns = columns
        self.n = n

    @property
    def columns(self) -> List[str]:
        return list(self._columns)

    def __getitem__(self, name: Union[str, int]):
        """A column by name, or (as the older tuple result) by position."""
        if isinstance(name, int):
            return list(self._columns.values())[name]
        return self._columns[name]

    def __getattr__(self, name: str):
        cols = self.__dict__.get("_columns", {})
        if name in cols:
            return cols[name]
        raise AttributeError("Prediction has no column %r (columns: %s)" % (name, ", ".join(cols)))

    def __iter__(self) -> Iterator[Any]:
        return iter(self._columns.values())

    def __len__(self) -> int:
        """The number of columns (as iteration yields them); p.n is the rows."""
        return len(self._columns)

    def __repr__(self) -> str:
        return "<pairsight.Prediction: %d rows, columns %s>" % (self.n, ", ".join(self._columns))

    def to_dict(self) -> Dict[str, List[float]]:
        return {k: [float(x) for x in v] for k, v in self._columns.items()}

    def to_pandas(self, index: Optional[Sequence[Any]] = None):
        """A pandas DataFrame of the columns (index: the queries' index when
        they came as a DataFrame, else 0..n-1)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("Prediction.to_pandas needs pandas (Debian: python3-pandas); "
                              "to_dict() needs nothing") from None
        return pandas.DataFrame({k: list(v) if _lib._np is None else v for k, v in self._columns.items()},
                                index=index if index is not None else getattr(self, "_index", None))


class Model(SavedModel):
    """The PairSight segment model: two XGBoost regressors of log slowdown
    (docs/model.md). A model is read-only once trained or loaded; predict,
    features and explain may run from several threads at once, and close()
    waits for them. Models pickle (through their file's bytes)."""
    _free_name = "ps_model_free"
    _load_fn, _save_fn = "ps_model_load", "ps_model_save"
    _load_mem_fn, _save_mem_fn = "ps_model_load_mem", "ps_model_save_mem"

    @classmethod
    def train(cls, ops: Ops, coexec: Coexec, **params: Any) -> "Model":
        """Train on every row of coexec with profiles from ops. params: the
        keys of default_params("train") (variant="full", window=16, seed=1,
        nthread=0, max_rounds=400, early_stopping=20, depths=[6, 8],
        etas=[0.1, 0.3], subsample=1.0, ...), the C library's own defaults."""
        cfg = _lib.to_json(params)
        h = _C.c_void_p()
        with use("train", (ops, Ops, "ops", False), (coexec, Coexec, "coexec", False)) as (o, c):
            _lib.check(_lib._lib.ps_model_train_json(o, c, cfg, _C.byref(h)))
        return cls(h.value)

    def adapt(self, ops: Ops, coexec: Coexec, **params: Any) -> "Model":
        """A new model: this one plus adapt_rounds trees per regressor fitted
        on every row of coexec. params as train; the adaptation's defaults
        are the C library's: adapt_rounds=30, adapt_eta=0.05, adapt_depth=0
        (per side, the best of depths 1, 2, 3 on held-out experiments). This
        model is unchanged."""
        cfg = _lib.to_json(params)
        h = _C.c_void_p()
        with use("adapt", (self, Model, "self", False), (ops, Ops, "ops", False),
                 (coexec, Coexec, "coexec", False)) as (m, o, c):
            _lib.check(_lib._lib.ps_model_adapt_json(m, o, c, cfg, _C.byref(h)))
        return Model(h.value)

    def export(self, directory: _lib.PathLike) -> None:
        """Write directory/hp.ubj, lp.ubj (XGBoost UBJSON) and meta.json."""
        with use("export", (self, Model, "self", False)) as (m,):
            _lib.check(_lib._lib.ps_model_export(m, _lib.path_arg(directory)))

    def info(self) -> Dict[str, Any]:
        """The model's metadata as a dict (what `pairsight model info --json`
        prints): gpu, layout (variant, window, columns), target, training."""
        with use("info", (self, Model, "self", False)) as (m,):
            return _json.loads(_lib.take_text(_lib._lib.ps_model_meta_json, m))

    @property
    def gpu(self) -> str:
        return self.info()["gpu"]

    @property
    def feature_names(self) -> List[str]:
        """The names of the feature columns, in order."""
        return list(self.info()["layout"]["columns"])

    def _batch(self, queries: Any) -> Batch:
        b = batch(queries)
        b.fill_gpu(self.gpu.encode())
        return b

    def predict(self, ops: Ops, queries: Any, compose: str = "overlap", solo: bool = False,
                coverage: Optional[float] = None) -> Prediction:
        """Predicted co-execution latencies (ns) of every query, in one C
        call, as a Prediction with columns hp_ns, lp_ns, and with solo=True
        hp_solo_ns, lp_solo_ns, and with coverage=C (0.5..0.999) the
        calibrated upper bounds hp_ns_upper, lp_ns_upper at coverage C, as
        `pairsight predict --coverage C` writes them. compose: "overlap"
        (time-aligned, the default of `pairsight predict`) or "index"
        (published) for segments longer than the window. queries: a list of
        dicts, one dict, a CSV path, a numpy structured array or a pandas
        DataFrame with the key columns of coexec.csv (gpu optional)."""
        method = _lib.compose_value(compose)
        b = self._batch(queries)
        n = b.n
        outs = [(_C.c_double * max(n, 1))() for _ in range(4)]
        up = [(_C.c_double * max(n, 1))() for _ in range(2)]
        with use("predict", (self, Model, "self", False), (ops, Ops, "ops", False)) as (m, o):
            try:
                _lib.check(_lib._lib.ps_model_predict_compose(m, o, b.arr, n, method, *outs))
                if coverage is not None:
                    cov = float(coverage)
                    _lib.check(_lib._lib.ps_model_predict_bound(m, o, b.arr, n, cov, *up))
            except _lib.Error as e:
                raise b.reword(e) from None
        names = ["hp_ns", "lp_ns"] + (["hp_solo_ns", "lp_solo_ns"] if solo else [])
        cols = {k: _lib.as_array(outs[i], n) for i, k in enumerate(names)}
        if coverage is not None:
            cols["hp_ns_upper"] = _lib.as_array(up[0], n)
            cols["lp_ns_upper"] = _lib.as_array(up[1], n)
        p = Prediction(cols, n)
        if hasattr(queries, "index") and hasattr(queries, "columns"):
            p._index = queries.index
        return p

    def features(self, ops: Ops, queries: Any):
        """The rows the regressors read for queries of one window per side:
        (x_hp, x_lp, hp_solo_ns, lp_solo_ns), x_* of n rows of n_features
        float32 (NaN = missing counter). hp_ns = hp_solo_ns * exp(margin of
        the HP regressor on x_hp), and the same for LP."""
        b = self._batch(queries)
        n = b.n
        nf = self.info()["layout"]["n_features"]
        xh = (_C.c_float * max(n * nf, 1))()
        xl = (_C.c_float * max(n * nf, 1))()
        hs = (_C.c_double * max(n, 1))()
        ls = (_C.c_double * max(n, 1))()
        with use("features", (self, Model, "self", False), (ops, Ops, "ops", False)) as (m, o):
            try:
                _lib.check(_lib._lib.ps_model_features(m, o, b.arr, n, xh, xl, hs, ls))
            except _lib.Error as e:
                raise b.reword(e) from None
        np = _lib._np
        if np is not None:
            return (np.ctypeslib.as_array(xh)[:n * nf].reshape(n, nf).copy(),
                    np.ctypeslib.as_array(xl)[:n * nf].reshape(n, nf).copy(),
                    _lib.as_array(hs, n), _lib.as_array(ls, n))
        return ([list(xh[i * nf:(i + 1) * nf]) for i in range(n)],
                [list(xl[i * nf:(i + 1) * nf]) for i in range(n)], list(hs[:n]), list(ls[:n]))

    def explain(self, ops: Ops, query: Any) -> Dict[str, Any]:
        """One query of one window taken apart (SHAP): a dict with hp_ns,
        lp_ns, hp_solo_ns, lp_solo_ns, bias (per side) and items, each
        {side, owner, op, name, contribution} in log delta."""
        b = self._batch(query)
        if b.n != 1:
            raise _lib.ArgumentError("explain takes one query, got %d" % b.n)
        e = _C.c_void_p()
        with use("explain", (self, Model, "self", False), (ops, Ops, "ops", False)) as (m, o):
            try:
                _lib.check(_lib._lib.ps_model_explain(m, o, b.arr, _C.byref(e)))
            except _lib.Error as err:
                raise b.reword(err) from None
            try:
                out = _json.loads(_lib.take_text(_lib._lib.ps_explanation_json, e))
            finally:
                _lib._lib.ps_explanation_free(e)
        out.pop("schema", None)
        return out

    def plan(self, ops: Ops, hp_model: str, hp_batch: int, lp_model: str, lp_batch: int, budget_ns: float,
             **params: Any) -> Dict[str, Any]:
        """Plan one HP request beside the LP task within budget_ns, as
        `pairsight plan` (docs/planner.md): the plan as a dict (schema
        "pairsight.plan.v1": steps, planned_ns, lp_work_ns, ...). It is the
        library's plan operation, run("plan", hp="MODEL:BATCH", lp=...,
        slo_ns=budget_ns), the request of the CLI and of POST /v1/plan.
        params: its other members (op_params("plan"): coverage, lp_start,
        alone_run_ns, time_value, window, lp_lengths, gpu)."""
        from .ops import run  # ops imports this module

        with use("plan", (self, Model, "self", False), (ops, Ops, "ops", False)):
            pass
        return run("plan", self, ops, hp="%s:%d" % (hp_model, hp_batch), lp="%s:%d" % (lp_model, lp_batch),
                   slo_ns=budget_ns, **params)

    def replay(self, ops: Ops, hp_model: str, hp_batch: int, lp_model: str, lp_batch: int,
               intensity_train: Optional[Coexec] = None, **params: Any) -> Dict[str, Any]:
        """Replay an HP request stream beside an always-backlogged LP task on
        the simulator's physics, per policy, as `pairsight replay`: a dict
        (schema "pairsight.replay_result.v1") with each policy's SLO attainment,
        latencies and LP throughput. params: the keys of
        default_params("replay") (requests, load, seed, policies="a,b" or
        "all", ...); the intensity policy needs intensity_train."""
        cfg = _lib.to_json(dict(params, hp_model=hp_model, hp_batch=hp_batch, lp_model=lp_model, lp_batch=lp_batch))
        with use("replay", (self, Model, "self", False), (ops, Ops, "ops", False),
                 (intensity_train, Coexec, "intensity_train", True)) as (m, o, it):
            return _json.loads(_lib.take_text(_lib._lib.ps_replay_json, m, o, it, cfg))
