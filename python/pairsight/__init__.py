"""pairsight: predict how much deep-learning tasks slow each other down when
they share one NVIDIA GPU.

Pure Python over the C library libpairsight.so.0 (ctypes; no compiler at
install time). The library is looked for, in order: in the environment
variable PAIRSIGHT_LIBRARY (a path), next to this package (a copy of
libpairsight.so.0 in its folder or in ../lib, ../../lib up the tree, where an
install prefix keeps it), then on the system path (LD_LIBRARY_PATH, ldconfig).

The API mirrors the C one (include/pairsight.h):

    import pairsight
    ops = pairsight.Ops.load("ops.csv")
    model = pairsight.Model.load("model.psm")
    hp_ns, lp_ns = model.predict(ops, [
        dict(hp_model="resnet50", hp_batch=8, hp_start=0, hp_len=16,
             lp_model="bert-base", lp_batch=8, lp_start=40, lp_len=16,
             hp_tpcs=32, lp_tpcs=22)])

Queries are a list of dicts, the path of a CSV file with the key columns of
coexec.csv, or a numpy structured array with those fields; `gpu` may be
left out and is then the model's. A batch is one C call. With numpy present
results are numpy arrays, otherwise lists.

Errors raise pairsight.Error, whose .code is the PS_E_* code and .message
the library's ps_last_error() text (it names the file, line and column of
input errors).

Classes: Ops, Coexec (tables), Model (the segment model: load, train, adapt,
save, info, predict, features, explain, export), Workloads, Scaling,
Colocations and ColocModel (workload-level co-location: train, predict,
select).
"""
import csv as _csv
import ctypes as _C
import ctypes.util as _cutil
import json as _json
import os as _os

try:
    import numpy as _np
except ImportError:  # numpy is optional: lists in and out without it
    _np = None

__all__ = ["Error", "version", "library_path", "Ops", "Coexec", "Model", "Workloads", "Scaling",
           "Colocations", "ColocModel", "QUERY_FIELDS", "PS_E_INPUT", "PS_E_IO", "PS_E_NOMEM",
           "PS_E_ARG", "PS_E_BACKEND", "PS_E_MISMATCH"]

PS_OK, PS_E_INPUT, PS_E_IO, PS_E_NOMEM, PS_E_ARG, PS_E_BACKEND, PS_E_MISMATCH = 0, -1, -2, -3, -4, -5, -6

#: The key columns of a query, as in coexec.csv (gpu optional).
QUERY_FIELDS = ("gpu", "hp_model", "hp_batch", "hp_start", "hp_len", "lp_model", "lp_batch",
                "lp_start", "lp_len", "hp_tpcs", "lp_tpcs")

_VARIANTS = ("full", "no-corunner", "summed", "durations", "utilization")
_COMPOSE = {"index": 0, "overlap": 1}
_COLOC_KINDS = ("kace_lr", "kace_rf", "kace_mlp", "xu_rf", "ratio", "mps", "lowrank", "auto")


class Error(Exception):
    """A failed library call: .code is the PS_E_* code (negative), .name its
    short description (ps_errstr), .message the library's message."""

    def __init__(self, code, message):
        self.code = code
        self.message = message
        self.name = _lib.ps_errstr(code).decode() if _lib else str(code)
        super().__init__("%s (%s)" % (message, self.name))


def _find_library():
    env = _os.environ.get("PAIRSIGHT_LIBRARY")
    if env:
        return env
    here = _os.path.dirname(_os.path.abspath(__file__))
    d = here
    for _ in range(6):
        for sub in ("", "lib"):
            cand = _os.path.join(d, sub, "libpairsight.so.0")
            if _os.path.exists(cand):
                return cand
        d = _os.path.dirname(d)
    found = _cutil.find_library("pairsight")
    return found or "libpairsight.so.0"


class _Query(_C.Structure):
    _fields_ = [("gpu", _C.c_char_p), ("hp_model", _C.c_char_p), ("hp_batch", _C.c_int),
                ("hp_start", _C.c_int), ("hp_len", _C.c_int), ("lp_model", _C.c_char_p),
                ("lp_batch", _C.c_int), ("lp_start", _C.c_int), ("lp_len", _C.c_int),
                ("hp_tpcs", _C.c_int), ("lp_tpcs", _C.c_int)]


class _TrainParams(_C.Structure):
    _fields_ = [("variant", _C.c_int), ("window", _C.c_int), ("seed", _C.c_uint64), ("nthread", _C.c_int),
                ("max_rounds", _C.c_int), ("early_stopping", _C.c_int), ("n_depths", _C.c_int),
                ("depths", _C.c_int * 4), ("n_etas", _C.c_int), ("etas", _C.c_double * 4),
                ("subsample", _C.c_double), ("adapt_rounds", _C.c_int), ("adapt_eta", _C.c_double),
                ("adapt_depth", _C.c_int), ("progress", _C.c_void_p), ("progress_user", _C.c_void_p)]


class _Contribution(_C.Structure):
    _fields_ = [("side", _C.c_int), ("owner", _C.c_int), ("op", _C.c_int), ("name", _C.c_char_p),
                ("contribution", _C.c_double)]


class _Explanation(_C.Structure):
    _fields_ = [("hp_ns", _C.c_double), ("lp_ns", _C.c_double), ("hp_solo_ns", _C.c_double),
                ("lp_solo_ns", _C.c_double), ("bias", _C.c_double * 2), ("n", _C.c_size_t),
                ("items", _C.POINTER(_Contribution))]


class _ColocParams(_C.Structure):
    _fields_ = [("kind", _C.c_int), ("seed", _C.c_uint64), ("trees", _C.c_int), ("mlp_epochs", _C.c_int),
                ("boost_rounds", _C.c_int)]


_lib = None
_path = _find_library()
try:
    _lib = _C.CDLL(_path)
except OSError as e:
    raise ImportError("pairsight: cannot load the C library %r (%s); build it (scripts/test.sh) or set "
                      "PAIRSIGHT_LIBRARY to the path of libpairsight.so.0" % (_path, e)) from None

_P = _C.c_void_p
_PP = _C.POINTER(_C.c_void_p)
_D = _C.POINTER(_C.c_double)
_F = _C.POINTER(_C.c_float)
_S = _C.c_char_p
_I = _C.c_int
_Z = _C.c_size_t


def _sig(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


for _name, _res, _args in [
        ("ps_version", _S, ()), ("ps_errstr", _S, (_I,)), ("ps_last_error", _S, ()),
        ("ps_ops_load", _I, (_S, _PP)), ("ps_ops_save", _I, (_P, _S)), ("ps_ops_free", None, (_P,)),
        ("ps_ops_rows", _Z, (_P,)),
        ("ps_coexec_load", _I, (_S, _PP)), ("ps_coexec_save", _I, (_P, _S)), ("ps_coexec_free", None, (_P,)),
        ("ps_coexec_rows", _Z, (_P,)), ("ps_coexec_split", _I, (_P, _C.c_uint64, _C.POINTER(_C.c_ubyte))),
        ("ps_workloads_load", _I, (_S, _PP)), ("ps_workloads_free", None, (_P,)),
        ("ps_workloads_rows", _Z, (_P,)),
        ("ps_scaling_load", _I, (_S, _PP)), ("ps_scaling_free", None, (_P,)),
        ("ps_colocations_load", _I, (_S, _PP)), ("ps_colocations_free", None, (_P,)),
        ("ps_colocations_rows", _Z, (_P,)),
        ("ps_train_default_params", _TrainParams, ()),
        ("ps_model_train", _I, (_P, _P, _C.POINTER(_TrainParams), _PP)),
        ("ps_model_adapt", _I, (_P, _P, _P, _C.POINTER(_TrainParams), _PP)),
        ("ps_model_predict_ex", _I, (_P, _P, _C.POINTER(_Query), _Z, _I, _D, _D, _D, _D)),
        ("ps_model_predict_bound", _I, (_P, _P, _C.POINTER(_Query), _Z, _C.c_double, _D, _D)),
        ("ps_model_save", _I, (_P, _S)), ("ps_model_load", _I, (_S, _PP)), ("ps_model_free", None, (_P,)),
        ("ps_model_explain", _I, (_P, _P, _C.POINTER(_Query), _C.POINTER(_C.POINTER(_Explanation)))),
        ("ps_explanation_free", None, (_C.POINTER(_Explanation),)),
        ("ps_model_export", _I, (_P, _S)), ("ps_model_meta_json", _I, (_P, _C.POINTER(_C.c_void_p))),
        ("ps_free", None, (_P,)),
        ("ps_model_features", _I, (_P, _P, _C.POINTER(_Query), _Z, _F, _F, _D, _D)),
        ("ps_coloc_default_params", _ColocParams, ()),
        ("ps_coloc_train", _I, (_P, _P, _P, _C.POINTER(_ColocParams), _PP)),
        ("ps_coloc_predict", _I, (_P, _P, _P, _P, _D)),
        ("ps_coloc_kind_predicts_sum", _I, (_I,)), ("ps_coloc_model_kind", _I, (_P,)),
        ("ps_coloc_model_save", _I, (_P, _S)), ("ps_coloc_model_load", _I, (_S, _PP)),
        ("ps_coloc_model_free", None, (_P,))]:
    _sig(_name, _res, *_args)


def _check(rc):
    if rc != 0:
        raise Error(rc, _lib.ps_last_error().decode(errors="replace"))


def _b(s):
    return None if s is None else (s if isinstance(s, bytes) else str(s).encode())


def _path_arg(path):
    return _os.fsencode(_os.fspath(path))


def _out(values):
    """A ctypes double array as a numpy array (copied) or a list."""
    if _np is not None:
        return _np.ctypeslib.as_array(values).copy()
    return list(values)


def version():
    """The C library's version string, e.g. "0.1.0"."""
    return _lib.ps_version().decode()


def library_path():
    """The path (or name) the C library was loaded from."""
    return _path


class _Handle:
    """An owned C handle, released by close() or when collected."""
    _free = None

    def __init__(self, handle):
        self._h = handle

    def close(self):
        """Release the C object now (later calls fail)."""
        if self._h:
            type(self)._free(self._h)
            self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def _ptr(self):
        if not self._h:
            raise Error(PS_E_ARG, "%s: used after close()" % type(self).__name__)
        return self._h

    @classmethod
    def _load_with(cls, fn, path):
        h = _C.c_void_p()
        _check(fn(_path_arg(path), _C.byref(h)))
        return cls(h.value)


class Ops(_Handle):
    """Standalone per-operator profiles (ops.csv, docs/FORMATS.md)."""
    _free = staticmethod(_lib.ps_ops_free)

    @classmethod
    def load(cls, path):
        """Load and validate ops.csv; Error names path:line:column."""
        return cls._load_with(_lib.ps_ops_load, path)

    def save(self, path):
        """Write atomically as ops.csv."""
        _check(_lib.ps_ops_save(self._ptr, _path_arg(path)))

    def __len__(self):
        return _lib.ps_ops_rows(self._ptr)


class Coexec(_Handle):
    """Measured co-executions (coexec.csv)."""
    _free = staticmethod(_lib.ps_coexec_free)

    @classmethod
    def load(cls, path):
        """Load and validate coexec.csv."""
        return cls._load_with(_lib.ps_coexec_load, path)

    def save(self, path):
        _check(_lib.ps_coexec_save(self._ptr, _path_arg(path)))

    def __len__(self):
        return _lib.ps_coexec_rows(self._ptr)

    def split(self, seed=1):
        """Split of every row by experiment, as Model.train draws it with the
        same seed: 0 train, 1 validation, 2 test, 3 calibration of the upper
        bounds (80/10/10, of which the last eighth of the training
        experiments calibrates from 20 experiments on: 70/10/10/10)."""
        n = len(self)
        out = (_C.c_ubyte * max(n, 1))()
        _check(_lib.ps_coexec_split(self._ptr, seed, out))
        return _np.array(out[:n], dtype=_np.uint8) if _np is not None else list(out[:n])


class Workloads(_Handle):
    """Workload-level features and solo throughput (workloads.csv)."""
    _free = staticmethod(_lib.ps_workloads_free)

    @classmethod
    def load(cls, path):
        return cls._load_with(_lib.ps_workloads_load, path)

    def __len__(self):
        return _lib.ps_workloads_rows(self._ptr)


class Scaling(_Handle):
    """Solo throughput by MPS share (workload_scaling.csv)."""
    _free = staticmethod(_lib.ps_scaling_free)

    @classmethod
    def load(cls, path):
        return cls._load_with(_lib.ps_scaling_load, path)


class Colocations(_Handle):
    """Co-locations, one row per slot (colocations.csv)."""
    _free = staticmethod(_lib.ps_colocations_free)

    @classmethod
    def load(cls, path):
        return cls._load_with(_lib.ps_colocations_load, path)

    @classmethod
    def from_rows(cls, rows, path):
        """Write rows (dicts with colocation, gpu, slot, workload,
        share_pct and optionally tput) to the CSV file path and load it."""
        with open(path, "w", newline="") as f:
            w = _csv.writer(f)
            w.writerow(["colocation", "gpu", "slot", "workload", "share_pct", "tput"])
            for r in rows:
                tput = r.get("tput")
                w.writerow([r["colocation"], r["gpu"], r["slot"], r["workload"], r["share_pct"],
                            "" if tput is None else repr(float(tput))])
        return cls.load(path)

    def __len__(self):
        return _lib.ps_colocations_rows(self._ptr)


def _queries(queries):
    """(ctypes array of ps_query_t, the objects it points into)."""
    if isinstance(queries, (str, bytes, _os.PathLike)):
        with open(queries, newline="") as f:
            rows = list(_csv.DictReader(f))
    elif _np is not None and isinstance(queries, _np.ndarray):
        names = queries.dtype.names or ()
        rows = [{k: queries[k][i] for k in names} for i in range(len(queries))]
    elif isinstance(queries, dict):
        rows = [queries]
    else:
        rows = list(queries)
    arr = (_Query * max(len(rows), 1))()
    keep = []
    for i, r in enumerate(rows):
        q = arr[i]
        for k in QUERY_FIELDS:
            v = r.get(k)
            if v is None or (k == "gpu" and v == ""):
                if k == "gpu":
                    continue
                raise Error(PS_E_ARG, "query %d: missing %s" % (i, k))
            if k in ("gpu", "hp_model", "lp_model"):
                v = v.decode() if isinstance(v, bytes) else str(v)
                bs = v.encode()
                keep.append(bs)
                setattr(q, k, bs)
            else:
                try:
                    iv = int(v)
                    if iv != float(v):
                        raise ValueError
                except (TypeError, ValueError):
                    raise Error(PS_E_ARG, "query %d: %s %r is not an integer" % (i, k, v)) from None
                setattr(q, k, iv)
    return arr, len(rows), keep


def _params(base, kw, names):
    for k, v in kw.items():
        if k == "variant":
            if v not in _VARIANTS:
                raise Error(PS_E_ARG, "variant %r: one of %s" % (v, ", ".join(_VARIANTS)))
            base.variant = _VARIANTS.index(v)
        elif k == "depths":
            v = list(v)
            if not 1 <= len(v) <= 4:
                raise Error(PS_E_ARG, "depths: 1 to 4 values")
            base.n_depths = len(v)
            for i, d in enumerate(v):
                base.depths[i] = int(d)
        elif k == "etas":
            v = list(v)
            if not 1 <= len(v) <= 4:
                raise Error(PS_E_ARG, "etas: 1 to 4 values")
            base.n_etas = len(v)
            for i, d in enumerate(v):
                base.etas[i] = float(d)
        elif k in names:
            setattr(base, k, v)
        else:
            raise Error(PS_E_ARG, "unknown parameter %r (known: %s)" % (k, ", ".join(sorted(names))))
    return base


_TRAIN_NAMES = {"variant", "window", "seed", "nthread", "max_rounds", "early_stopping", "depths", "etas",
                "subsample", "adapt_rounds", "adapt_eta", "adapt_depth"}


class Model(_Handle):
    """The PairSight segment model: two XGBoost regressors of log slowdown
    (docs/model.md). A model is read-only once trained or loaded; predict,
    features and explain may run from several threads."""
    _free = staticmethod(_lib.ps_model_free)

    @classmethod
    def load(cls, path):
        """Load a .psm file; Error(PS_E_MISMATCH) for another format or layout."""
        return cls._load_with(_lib.ps_model_load, path)

    @classmethod
    def train(cls, ops, coexec, **params):
        """Train on every row of coexec (a Coexec) with profiles from ops.
        params: the fields of ps_train_params_t (variant="full", window=16,
        seed=1, nthread=0, max_rounds=400, early_stopping=20, depths=(6, 8),
        etas=(0.1, 0.3), subsample=1.0, ...)."""
        p = _params(_lib.ps_train_default_params(), params, _TRAIN_NAMES)
        h = _C.c_void_p()
        _check(_lib.ps_model_train(ops._ptr, coexec._ptr, _C.byref(p), _C.byref(h)))
        return cls(h.value)

    def adapt(self, ops, coexec, **params):
        """A new model: this one plus adapt_rounds trees per regressor fitted
        on every row of coexec (adapt_rounds=30, adapt_eta=0.05,
        adapt_depth=1). This model is unchanged."""
        p = _params(_lib.ps_train_default_params(), params, _TRAIN_NAMES)
        h = _C.c_void_p()
        _check(_lib.ps_model_adapt(self._ptr, ops._ptr, coexec._ptr, _C.byref(p), _C.byref(h)))
        return Model(h.value)

    def save(self, path):
        """Write atomically as a .psm file."""
        _check(_lib.ps_model_save(self._ptr, _path_arg(path)))

    def export(self, directory):
        """Write directory/hp.ubj, lp.ubj (XGBoost UBJSON) and meta.json."""
        _check(_lib.ps_model_export(self._ptr, _path_arg(directory)))

    def info(self):
        """The model's metadata as a dict (what `pairsight model info --json`
        prints): gpu, layout (variant, window, columns), target, training."""
        p = _C.c_void_p()
        _check(_lib.ps_model_meta_json(self._ptr, _C.byref(p)))
        try:
            return _json.loads(_C.string_at(p.value).decode())
        finally:
            _lib.ps_free(p)

    @property
    def gpu(self):
        return self.info()["gpu"]

    @property
    def feature_names(self):
        """The names of the feature columns, in order."""
        return list(self.info()["layout"]["columns"])

    def predict(self, ops, queries, compose="overlap", solo=False, coverage=None):
        """Predicted co-execution latencies (ns) of every query, in one C
        call: (hp_ns, lp_ns), or with solo=True (hp_ns, lp_ns, hp_solo_ns,
        lp_solo_ns). compose: "overlap" (time-aligned, the default of
        `pairsight predict`) or "index" (published) for segments longer
        than the window. coverage=C (0.5..0.999) appends the calibrated
        upper bounds (hp_ns_upper, lp_ns_upper) at coverage C, as
        `pairsight predict --coverage C` writes them (time-aligned
        composition; the model must carry its calibration)."""
        if compose not in _COMPOSE:
            raise Error(PS_E_ARG, "compose %r: overlap or index" % (compose,))
        arr, n, keep = _queries(queries)
        gpu = self.gpu.encode()
        for i in range(n):
            if not arr[i].gpu:
                arr[i].gpu = gpu
        outs = [(_C.c_double * max(n, 1))() for _ in range(4)]
        _check(_lib.ps_model_predict_ex(self._ptr, ops._ptr, arr, n, _COMPOSE[compose], *outs))
        res = tuple(_out(o)[:n] for o in outs)
        res = res if solo else res[:2]
        if coverage is not None:
            up = [(_C.c_double * max(n, 1))() for _ in range(2)]
            _check(_lib.ps_model_predict_bound(self._ptr, ops._ptr, arr, n, float(coverage), *up))
            res = res + tuple(_out(o)[:n] for o in up)
        return res

    def features(self, ops, queries):
        """The rows the regressors read for queries of one window per side:
        (x_hp, x_lp, hp_solo_ns, lp_solo_ns), x_* of n rows of n_features
        float32 (NaN = missing counter). hp_ns = hp_solo_ns * exp(margin of
        the HP regressor on x_hp), and the same for LP."""
        arr, n, keep = _queries(queries)
        gpu = self.gpu.encode()
        for i in range(n):
            if not arr[i].gpu:
                arr[i].gpu = gpu
        nf = self.info()["layout"]["n_features"]
        xh = (_C.c_float * max(n * nf, 1))()
        xl = (_C.c_float * max(n * nf, 1))()
        hs = (_C.c_double * max(n, 1))()
        ls = (_C.c_double * max(n, 1))()
        _check(_lib.ps_model_features(self._ptr, ops._ptr, arr, n, xh, xl, hs, ls))
        if _np is not None:
            return (_np.ctypeslib.as_array(xh)[:n * nf].reshape(n, nf).copy(),
                    _np.ctypeslib.as_array(xl)[:n * nf].reshape(n, nf).copy(), _out(hs)[:n], _out(ls)[:n])
        return ([list(xh[i * nf:(i + 1) * nf]) for i in range(n)],
                [list(xl[i * nf:(i + 1) * nf]) for i in range(n)], list(hs[:n]), list(ls[:n]))

    def explain(self, ops, query):
        """One query of one window taken apart (SHAP): a dict with hp_ns,
        lp_ns, hp_solo_ns, lp_solo_ns, bias (per side) and items, each
        {side, owner, op, name, contribution} in log delta."""
        arr, n, keep = _queries(query)
        if n != 1:
            raise Error(PS_E_ARG, "explain takes one query, got %d" % n)
        if not arr[0].gpu:
            arr[0].gpu = self.gpu.encode()
        e = _C.POINTER(_Explanation)()
        _check(_lib.ps_model_explain(self._ptr, ops._ptr, arr, _C.byref(e)))
        try:
            x = e.contents
            items = [{"side": ("hp", "lp")[it.side], "owner": {0: "hp", 1: "lp"}.get(it.owner),
                      "op": it.op if it.op >= 0 else None, "name": it.name.decode(),
                      "contribution": it.contribution} for it in x.items[:x.n]]
            return {"hp_ns": x.hp_ns, "lp_ns": x.lp_ns, "hp_solo_ns": x.hp_solo_ns, "lp_solo_ns": x.lp_solo_ns,
                    "bias": {"hp": x.bias[0], "lp": x.bias[1]}, "items": items}
        finally:
            _lib.ps_explanation_free(e)


class ColocModel(_Handle):
    """A workload-level co-location predictor (docs/colocate.md): kind one
    of kace_lr, kace_rf, kace_mlp, xu_rf, ratio, mps."""
    _free = staticmethod(_lib.ps_coloc_model_free)

    @classmethod
    def load(cls, path):
        return cls._load_with(_lib.ps_coloc_model_load, path)

    @classmethod
    def train(cls, workloads, colocations, scaling=None, kind="mps", **params):
        """Train on the measured co-locations. params: seed=0, trees=100,
        mlp_epochs=400, boost_rounds=400."""
        if kind not in _COLOC_KINDS:
            raise Error(PS_E_ARG, "kind %r: one of %s" % (kind, ", ".join(_COLOC_KINDS)))
        p = _lib.ps_coloc_default_params()
        p.kind = _COLOC_KINDS.index(kind)
        for k, v in params.items():
            if k not in ("seed", "trees", "mlp_epochs", "boost_rounds"):
                raise Error(PS_E_ARG, "unknown parameter %r" % k)
            setattr(p, k, v)
        h = _C.c_void_p()
        _check(_lib.ps_coloc_train(workloads._ptr, scaling._ptr if scaling else None, colocations._ptr,
                                   _C.byref(p), _C.byref(h)))
        return cls(h.value)

    @property
    def kind(self):
        return _COLOC_KINDS[_lib.ps_coloc_model_kind(self._ptr)]

    @property
    def predicts_sum(self):
        """True when the kind predicts a co-location's throughput sum."""
        return bool(_lib.ps_coloc_kind_predicts_sum(_lib.ps_coloc_model_kind(self._ptr)))

    def save(self, path):
        _check(_lib.ps_coloc_model_save(self._ptr, _path_arg(path)))

    def predict(self, workloads, colocations, scaling=None):
        """Per row of colocations: its workload's predicted throughput, or
        for sum kinds its co-location's predicted throughput sum."""
        n = len(colocations)
        out = (_C.c_double * max(n, 1))()
        _check(_lib.ps_coloc_predict(self._ptr, workloads._ptr, scaling._ptr if scaling else None,
                                     colocations._ptr, out))
        return _out(out)[:n]

    def select(self, workloads, target, candidates, gpu, shares=None, scaling=None, scratch=None):
        """Rank candidate co-runners of target by predicted throughput sum
        (as `pairsight colocate select`): candidates is a list of workload
        names or of lists of names (several co-runners at once); shares the
        MPS percentage of the target then each co-runner (default 100).
        Returns [(candidate, tput_sum, [tput per workload or None])], best
        first. scratch: a folder for the query file (default: a temporary one)."""
        import tempfile
        rows, spans = [], []
        for c in candidates:
            names = [c] if isinstance(c, str) else list(c)
            cid = "select/%s+%s" % (target, "+".join(names))
            start = len(rows)
            for slot, w in enumerate([target] + names, 1):
                share = 100 if not shares else shares[min(slot, len(shares)) - 1]
                rows.append({"colocation": cid, "gpu": gpu, "slot": slot, "workload": w, "share_pct": share})
            spans.append((c, start, len(rows)))
        with tempfile.TemporaryDirectory(dir=scratch) as d:
            q = Colocations.from_rows(rows, _os.path.join(d, "candidates.csv"))
            try:
                pred = list(self.predict(workloads, q, scaling))
            finally:
                q.close()
        out = []
        for c, a, b in spans:
            if self.predicts_sum:
                out.append((c, pred[a], [None] * (b - a)))
            else:
                out.append((c, sum(pred[a:b]), pred[a:b]))
        out.sort(key=lambda t: -t[1])
        return out
