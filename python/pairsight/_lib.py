"""The C library: finding and loading it, checking its version, declaring its
calls, and turning its return codes into exceptions (as xgboost's
``_check_call``). Everything that crosses into C is checked here first:
types, integer ranges, NUL bytes."""
from __future__ import annotations

import ctypes as _C
import ctypes.util as _cutil
import json as _json
import os as _os
from typing import Any, Dict, List, Optional, Sequence, Union

from ._version import __version__

try:
    import numpy as _np
except ImportError:  # numpy is optional: lists in and out without it
    _np = None

PS_OK, PS_E_INPUT, PS_E_IO, PS_E_NOMEM, PS_E_ARG, PS_E_BACKEND, PS_E_MISMATCH = 0, -1, -2, -3, -4, -5, -6
LIBRARY_NAME = "libpairsight.so.0"
INT_MIN, INT_MAX = -(2 ** 31), 2 ** 31 - 1

PathLike = Union[str, bytes, "_os.PathLike[str]"]


class Error(Exception):
    """A failed library call: .code is the PS_E_* code (negative), .name its
    short description (ps_errstr), .message the library's message."""

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        self.message = message
        self.name = _lib.ps_errstr(code).decode() if _lib is not None else str(code)
        super().__init__("%s (%s)" % (message, self.name))


class ArgumentError(Error, ValueError):
    """An invalid argument (PS_E_ARG): also a ValueError, so that code that
    catches ValueError for a bad value catches it too."""

    def __init__(self, message: str, code: int = PS_E_ARG) -> None:
        super().__init__(code, message)


def _candidates() -> List[str]:
    """Where the library is looked for, in order (see library_path)."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    out = [_os.path.join(here, LIBRARY_NAME)]  # bundled by `pip install`
    d = _os.path.dirname(here)
    for _ in range(6):  # an install prefix's lib/ up the tree
        out.append(_os.path.join(d, "lib", LIBRARY_NAME))
        d = _os.path.dirname(d)
    return out


def _find_library() -> str:
    env = _os.environ.get("PAIRSIGHT_LIBRARY")
    if env:
        return env
    for cand in _candidates():
        if _os.path.exists(cand):
            return cand
    return _cutil.find_library("pairsight") or LIBRARY_NAME


class LibraryNotFound(ImportError):
    """The C library could not be loaded (as opposed to a library of the
    wrong version, which is refused at import)."""


_lib: Any = None
_path = _find_library()
try:
    _lib = _C.CDLL(_path)
except OSError as e:
    raise LibraryNotFound("pairsight: cannot load the C library %r (%s); install the package with `pip install "
                      "./python` (which builds it), or set PAIRSIGHT_LIBRARY to the path of %s"
                      % (_path, e, LIBRARY_NAME)) from None


def _check_version() -> str:
    _lib.ps_version.restype = _C.c_char_p
    _lib.ps_version.argtypes = []
    have = _lib.ps_version().decode()
    if have.split(".")[:2] != __version__.split(".")[:2]:
        raise ImportError("pairsight: the C library %s is version %s, this package is %s; install both from one "
                          "checkout (pip install ./python), or set PAIRSIGHT_LIBRARY to a matching library"
                          % (_path, have, __version__))
    return have


LIBRARY_VERSION = _check_version()

_P = _C.c_void_p
_PP = _C.POINTER(_C.c_void_p)
_D = _C.POINTER(_C.c_double)
_F = _C.POINTER(_C.c_float)
_S = _C.c_char_p
_I = _C.c_int
_Z = _C.c_size_t
_CHARPP = _C.POINTER(_C.c_void_p)  # char **out: read with string_at, released with ps_free
_BYTESP = _C.POINTER(_C.c_void_p)
_ZP = _C.POINTER(_C.c_size_t)


def _query_struct() -> type:
    """ps_query_t as ctypes, built from the layout the compiler gave it
    (ps_query_layout_json) and checked field by field, so that no layout is
    copied by hand into Python."""
    p = _C.c_void_p()
    _lib.ps_query_layout_json.argtypes = [_CHARPP]
    _lib.ps_query_layout_json.restype = _I
    _lib.ps_free.argtypes = [_P]
    _lib.ps_free.restype = None
    if _lib.ps_query_layout_json(_C.byref(p)) != 0:
        raise ImportError("pairsight: ps_query_layout_json failed")
    try:
        layout = _json.loads(_C.string_at(p.value).decode())
    finally:
        _lib.ps_free(p)
    types = {"int": _C.c_int, "uint64": _C.c_uint64, "double": _C.c_double, "string": _C.c_char_p}
    cls = type("_Query", (_C.Structure,), {"_fields_": [(f["name"], types[f["type"]]) for f in layout["fields"]]})
    for f in layout["fields"]:
        if getattr(cls, f["name"]).offset != f["offset"]:
            raise ImportError("pairsight: ps_query_t.%s is at byte %d in C, %d in ctypes"
                              % (f["name"], f["offset"], getattr(cls, f["name"]).offset))
    if _C.sizeof(cls) != layout["size"]:
        raise ImportError("pairsight: ps_query_t has %d bytes in C, %d in ctypes" % (layout["size"], _C.sizeof(cls)))
    return cls


Query = _query_struct()
_Q = _C.POINTER(Query)

_SIGNATURES = [
    ("ps_errstr", _S, (_I,)), ("ps_last_error", _S, ()), ("ps_free", None, (_P,)),
    ("ps_ops_load", _I, (_S, _PP)), ("ps_ops_save", _I, (_P, _S)), ("ps_ops_free", None, (_P,)),
    ("ps_ops_rows", _Z, (_P,)),
    ("ps_coexec_load", _I, (_S, _PP)), ("ps_coexec_save", _I, (_P, _S)), ("ps_coexec_free", None, (_P,)),
    ("ps_coexec_rows", _Z, (_P,)), ("ps_coexec_split", _I, (_P, _C.c_uint64, _C.POINTER(_C.c_ubyte))),
    ("ps_workloads_load", _I, (_S, _PP)), ("ps_workloads_save", _I, (_P, _S)), ("ps_workloads_free", None, (_P,)),
    ("ps_workloads_rows", _Z, (_P,)), ("ps_workloads_key", _I, (_P, _Z, _C.POINTER(_S), _C.POINTER(_S))),
    ("ps_scaling_load", _I, (_S, _PP)), ("ps_scaling_save", _I, (_P, _S)), ("ps_scaling_free", None, (_P,)),
    ("ps_colocations_load", _I, (_S, _PP)), ("ps_colocations_save", _I, (_P, _S)),
    ("ps_colocations_free", None, (_P,)), ("ps_colocations_rows", _Z, (_P,)),
    ("ps_table_builder_create", _I, (_I, _S, _C.POINTER(_S), _I, _PP)),
    ("ps_table_builder_append", _I, (_P, _C.POINTER(_S))),
    ("ps_table_builder_finish_ops", _I, (_P, _PP)), ("ps_table_builder_finish_coexec", _I, (_P, _PP)),
    ("ps_table_builder_finish_workloads", _I, (_P, _PP)), ("ps_table_builder_finish_scaling", _I, (_P, _PP)),
    ("ps_table_builder_finish_colocations", _I, (_P, _PP)), ("ps_table_builder_free", None, (_P,)),
    ("ps_params_json", _I, (_S, _CHARPP)),
    ("ps_op_name", _S, (_I,)), ("ps_op_inputs_names", _S, ()), ("ps_op_params_json", _I, (_S, _CHARPP)), ("ps_op_run", _I, (_S, _P, _S, _CHARPP)),
    ("ps_model_train_json", _I, (_P, _P, _S, _PP)), ("ps_model_adapt_json", _I, (_P, _P, _P, _S, _PP)),
    ("ps_model_predict_compose", _I, (_P, _P, _Q, _Z, _I, _D, _D, _D, _D)),
    ("ps_model_predict_bound", _I, (_P, _P, _Q, _Z, _C.c_double, _D, _D)),
    ("ps_model_save", _I, (_P, _S)), ("ps_model_load", _I, (_S, _PP)), ("ps_model_free", None, (_P,)),
    ("ps_model_save_mem", _I, (_P, _BYTESP, _ZP)), ("ps_model_load_mem", _I, (_C.c_char_p, _Z, _PP)),
    ("ps_model_explain", _I, (_P, _P, _Q, _PP)), ("ps_explanation_json", _I, (_P, _CHARPP)),
    ("ps_explanation_free", None, (_P,)),
    ("ps_model_export", _I, (_P, _S)), ("ps_model_meta_json", _I, (_P, _CHARPP)),
    ("ps_model_features", _I, (_P, _P, _Q, _Z, _F, _F, _D, _D)),
    ("ps_plan_json", _I, (_P, _P, _S, _CHARPP)), ("ps_replay_json", _I, (_P, _P, _P, _S, _CHARPP)),
    ("ps_coloc_train_json", _I, (_P, _P, _P, _S, _PP)),
    ("ps_coloc_predict", _I, (_P, _P, _P, _P, _D)),
    ("ps_coloc_kind_predicts_sum", _I, (_I,)), ("ps_coloc_model_kind", _I, (_P,)),
    ("ps_coloc_model_gpu", _S, (_P,)),
    ("ps_coloc_model_save", _I, (_P, _S)), ("ps_coloc_model_load", _I, (_S, _PP)),
    ("ps_coloc_model_save_mem", _I, (_P, _BYTESP, _ZP)), ("ps_coloc_model_load_mem", _I, (_C.c_char_p, _Z, _PP)),
    ("ps_coloc_model_free", None, (_P,)), ("ps_coloc_place_json", _I, (_P, _P, _P, _S, _CHARPP)),
    ("ps_coloc_shares_json", _I, (_P, _P, _P, _S, _CHARPP)), ("ps_coloc_shares_emit", _I, (_S, _S, _CHARPP)),
    ("ps_compose_name", _S, (_I,)), ("ps_compose_from_name", _I, (_S, _C.POINTER(_I))),
    ("ps_feature_variant_name", _S, (_I,)), ("ps_coloc_kind_name", _S, (_I,)),
    ("ps_coloc_kind_from_name", _I, (_S, _C.POINTER(_I))), ("ps_replay_policy_name", _S, (_I,)),
    ("ps_table_name", _S, (_I,)),
]

for _name, _res, _args in _SIGNATURES:
    _f = getattr(_lib, _name)
    _f.restype = _res
    _f.argtypes = list(_args)


def check(rc: int) -> None:
    """Raise the library's error for a non-zero return code."""
    if rc != 0:
        msg = _lib.ps_last_error().decode(errors="replace")
        if rc == PS_E_ARG:
            raise ArgumentError(msg)
        raise Error(rc, msg)


def take_text(fn, *args) -> str:
    """Call fn(*args, &out) for a char *out the caller frees with ps_free."""
    p = _C.c_void_p()
    check(fn(*args, _C.byref(p)))
    try:
        return _C.string_at(p.value).decode()
    finally:
        _lib.ps_free(p)


def take_bytes(fn, *args) -> bytes:
    """Call fn(*args, &buf, &len) for a buffer the caller frees with ps_free."""
    p, n = _C.c_void_p(), _C.c_size_t()
    check(fn(*args, _C.byref(p), _C.byref(n)))
    try:
        return _C.string_at(p.value, n.value)
    finally:
        _lib.ps_free(p)


def _names(fn, stop: Sequence[str]) -> tuple:
    """Every name of an enumeration, from its ps_*_name call: values 0, 1, ...
    until the call answers one of its out-of-range names."""
    out = []
    for i in range(64):
        s = fn(i).decode()
        if s in stop:
            break
        out.append(s)
    return tuple(out)


#: The names the C library gives its enumerations (ps_*_name).
COMPOSE_NAMES = _names(_lib.ps_compose_name, ("?",))
VARIANT_NAMES = _names(_lib.ps_feature_variant_name, ("?",))
COLOC_KINDS = _names(_lib.ps_coloc_kind_name, ("unknown",))
REPLAY_POLICIES = _names(_lib.ps_replay_policy_name, ("?",))
TABLE_KINDS = {_lib.ps_table_name(i).decode(): i for i in range(1, 16)
               if _lib.ps_table_name(i).decode() != "unknown"}


def compose_value(name: str) -> int:
    """The ps_compose_t of a name, by ps_compose_from_name."""
    v = _C.c_int()
    check(_lib.ps_compose_from_name(cstr(name, "compose"), _C.byref(v)))
    return v.value


def coloc_kind_value(name: str) -> int:
    v = _C.c_int()
    check(_lib.ps_coloc_kind_from_name(cstr(name, "kind"), _C.byref(v)))
    return v.value


def cstr(v: Any, what: str) -> bytes:
    """A Python string (or bytes) as a C string: NUL inside is refused, as C
    would silently cut the string there."""
    if isinstance(v, bytes):
        b = v
    elif isinstance(v, str):
        b = v.encode()
    elif _np is not None and isinstance(v, _np.str_):
        b = str(v).encode()
    else:
        raise TypeError("%s: a string is expected, not %s" % (what, type(v).__name__))
    if b"\0" in b:
        raise ArgumentError("%s: %r holds a NUL character" % (what, v))
    return b


def cint(v: Any, what: str, lo: int = INT_MIN, hi: int = INT_MAX) -> int:
    """An integer for a C int (or another range): a float or text must hold
    an integer; a value outside [lo, hi] is refused, never wrapped."""
    if isinstance(v, bool):
        raise ArgumentError("%s: %r is not an integer" % (what, v))
    try:
        iv = int(v)
        if iv != v and iv != float(v):
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise ArgumentError("%s: %r is not an integer" % (what, v)) from None
    if not lo <= iv <= hi:
        raise ArgumentError("%s: %d is outside the C range %d..%d" % (what, iv, lo, hi))
    return iv


def path_arg(path: PathLike, what: str = "path") -> bytes:
    b = _os.fsencode(_os.fspath(path))
    if b"\0" in b:
        raise ArgumentError("%s: %r holds a NUL character" % (what, path))
    return b


def to_json(params: Dict[str, Any]) -> bytes:
    """Keyword parameters as the JSON object the _json calls take. numpy
    scalars become Python numbers; integers above 2^53 go as decimal text
    (the C side range-checks every integer)."""

    def plain(v: Any) -> Any:
        if _np is not None and isinstance(v, _np.generic):
            v = v.item()
        if isinstance(v, bool):
            return v
        if isinstance(v, int) and abs(v) > 2 ** 53:
            return str(v)
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, str) and "\0" in v:
            raise ArgumentError("%r holds a NUL character" % (v,))
        return v

    return _json.dumps({k: plain(v) for k, v in params.items()}).encode()


def default_params(which: str) -> Dict[str, Any]:
    """The C library's default parameters of a call ("train", "coloc",
    "plan", "replay", "place") as a dict: the keys the call accepts."""
    return _json.loads(take_text(_lib.ps_params_json, cstr(which, "which")))


def as_array(values, n: int):
    """A ctypes array's first n values as a numpy array (copied) or a list."""
    if _np is not None:
        return _np.ctypeslib.as_array(values)[:n].copy()
    return list(values[:n])


def version() -> str:
    """The C library's version string, e.g. "0.1.0"."""
    return LIBRARY_VERSION


def library_path() -> str:
    """The path (or name) the C library was loaded from."""
    return _path
