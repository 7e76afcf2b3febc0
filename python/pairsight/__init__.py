"""pairsight: predict how much deep-learning tasks slow each other down when
they share one NVIDIA GPU.

Python over the C library libpairsight.so.0 (ctypes). `pip install ./python`
builds the library with CMake and bundles it in the package (as xgboost's and
lightgbm's wheels do); the import then loads that copy. The library is looked
for, in order: the environment variable PAIRSIGHT_LIBRARY (a path; it
overrides everything), the package's own folder, an install prefix's lib/ up
the tree, then the system path (LD_LIBRARY_PATH, ldconfig). The import fails
when the library's major.minor version is not the package's.

The API mirrors the C one (include/pairsight.h):

    import pairsight
    ops = pairsight.Ops.load("ops.csv")
    model = pairsight.Model.load("model.psm")
    p = model.predict(ops, [
        dict(hp_model="resnet50", hp_batch=8, hp_start=0, hp_len=16,
             lp_model="bert-base", lp_batch=8, lp_start=40, lp_len=16,
             hp_tpcs=32, lp_tpcs=22)])
    p.hp_ns, p.lp_ns          # numpy arrays; p.to_pandas() a DataFrame

Queries are a list of dicts, one dict, the path of a CSV file with the key
columns of coexec.csv, a numpy structured array or a pandas DataFrame; `gpu`
may be left out and is then the model's. A batch is one C call. With numpy
present result columns are numpy arrays, otherwise lists.

Parameters go to C as JSON (default_params(name) lists every key with the C
library's default); tables given as rows are built in memory; models pickle
through the bytes of their file (Model.to_bytes / from_bytes).

Errors raise pairsight.Error, whose .code is the PS_E_* code and .message
the library's ps_last_error() text (it names the file, line and column of
input errors, or the caller's own row: "query 3", "queries.csv:5"). An
invalid argument raises ArgumentError, an Error that is also a ValueError:
integers outside C's range and strings holding NUL are refused, never
wrapped or cut. A handle of the wrong kind (a Coexec where Ops is expected)
raises TypeError.

Threads: a Model may predict from several threads at once; close() waits for
calls in flight. A ColocModel serves one call at a time.

Modules: tables (Ops, Coexec, Workloads, Scaling, Colocations), model
(Model: load, train, adapt, save, info, predict, features, explain, export,
plan, replay; Prediction), coloc (ColocModel: train, predict, select, place),
queries (QUERY_FIELDS).
"""
from ._version import __version__

try:
    from ._lib import (COLOC_KINDS, COMPOSE_NAMES, PS_E_ARG, PS_E_BACKEND, PS_E_INPUT, PS_E_IO, PS_E_MISMATCH,
                       PS_E_NOMEM, REPLAY_POLICIES, VARIANT_NAMES, ArgumentError, Error, default_params, library_path,
                       version)
    from .coloc import ColocModel
    from .model import Model, Prediction
    from .ops import op_params, operations, run
    from .queries import QUERY_FIELDS
    from .tables import Coexec, Colocations, Ops, Scaling, Workloads
except ImportError as _e:
    # Without the C library, the parts that need no library still import
    # (python -m pairsight.capture, pairsight.profile_tpcs); any name of the
    # C API then raises the loader's error. A library of the wrong version
    # is still refused here, at import.
    if type(_e).__name__ != "LibraryNotFound":
        raise
    _missing = _e

    def __getattr__(name: str):
        if name in __all__ and name != "__version__":
            raise _missing
        raise AttributeError("module 'pairsight' has no attribute %r" % name)


__all__ = ["Error", "ArgumentError", "version", "library_path", "default_params", "operations", "op_params", "run",
           "Ops", "Coexec", "Model",
           "Prediction", "Workloads", "Scaling", "Colocations", "ColocModel", "QUERY_FIELDS", "COLOC_KINDS",
           "COMPOSE_NAMES", "VARIANT_NAMES", "REPLAY_POLICIES", "PS_E_INPUT", "PS_E_IO", "PS_E_NOMEM", "PS_E_ARG",
           "PS_E_BACKEND", "PS_E_MISMATCH", "__version__"]
