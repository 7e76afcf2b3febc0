"""The C library's operations by name (include/pairsight_core.h,
"Operations"; docs/python.md): each is declared once in the library, with one
table of its parameters (name, type, bounds, default, help). op_params shows
that table; run passes keyword arguments through it, as the service reads a
request's members and the CLI its options."""
import ctypes as _C
import json as _json
from typing import Any, Dict, List, Optional

from . import _lib
from ._handle import use
from .coloc import ColocModel
from .model import Model
from .tables import Coexec, Ops, Scaling, Workloads


# ps_op_inputs_t's members in order, from the library: the struct is
# pointers alone, passed as an array filled by name (no struct mirrored).
_INPUTS = _lib._lib.ps_op_inputs_names().decode().split(",")


def operations() -> List[str]:
    """The names of the library's operations ("plan", "colocate_shares", ...)."""
    out, i = [], 0
    while True:
        name = _lib._lib.ps_op_name(i)
        if name is None:
            return out
        out.append(name.decode())
        i += 1


def op_params(name: str) -> Dict[str, Any]:
    """Operation name as the library declares it (schema "pairsight.op.v1"):
    its result's schema, help, params [{name, type, min, max, default, help}]
    and the other members its request takes."""
    return _json.loads(_lib.take_text(_lib._lib.ps_op_params_json, _lib.cstr(name, "name")))


def run(name: str, model: Optional[Model] = None, ops: Optional[Ops] = None, coloc: Optional[ColocModel] = None,
        workloads: Optional[Workloads] = None, scaling: Optional[Scaling] = None, coexec: Optional[Coexec] = None,
        **params: Any) -> Dict[str, Any]:
    """Run operation name on the given inputs with its parameters as keyword
    arguments (op_params(name)'s params and members; each checked against its
    bounds by the library, an unknown one refused naming the known ones).
    Returns its result as a dict, e.g. run("plan", model=m, ops=o,
    hp="resnet50:8", lp=["bert-base:8"], slo_factor=1.3)."""
    with use("run", (model, Model, "model", True), (ops, Ops, "ops", True), (coloc, ColocModel, "coloc", True),
             (workloads, Workloads, "workloads", True), (scaling, Scaling, "scaling", True),
             (coexec, Coexec, "coexec", True)) as ptrs:
        given = dict(zip(("model", "ops", "coloc", "workloads", "scaling", "coexec"), ptrs))
        inputs = (_C.c_void_p * len(_INPUTS))(*[given.get(k) for k in _INPUTS])
        return _json.loads(_lib.take_text(_lib._lib.ps_op_run, _lib.cstr(name, "name"), _C.addressof(inputs),
                                          _lib.to_json(params)))
