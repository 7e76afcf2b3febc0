"""Workload-level co-location (docs/colocate.md): train, predict, select
and place, over tables built in memory where the caller gives rows."""
from __future__ import annotations

import ctypes as _C
import json as _json
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _lib
from ._handle import SavedModel, use
from .tables import Colocations, Scaling, Workloads

Candidate = Union[str, Sequence[str]]


class ColocModel(SavedModel):
    """A workload-level co-location predictor: kind one of COLOC_KINDS
    (kace_lr, kace_rf, kace_mlp, xu_rf, ratio, mps, lowrank, auto). The C
    library lets one thread use a model at a time: calls on one ColocModel
    from several threads wait for each other. Models pickle."""
    _free_name = "ps_coloc_model_free"
    _serial = True
    _load_fn, _save_fn = "ps_coloc_model_load", "ps_coloc_model_save"
    _load_mem_fn, _save_mem_fn = "ps_coloc_model_load_mem", "ps_coloc_model_save_mem"

    @classmethod
    def train(cls, workloads: Workloads, colocations: Colocations, scaling: Optional[Scaling] = None,
              kind: str = "mps", **params: Any) -> "ColocModel":
        """Train on the measured co-locations. params: the keys of
        default_params("coloc") (seed=0, trees=100, mlp_epochs=400,
        boost_rounds=400, auto_rule="within")."""
        cfg = _lib.to_json(dict(params, kind=kind))
        h = _C.c_void_p()
        with use("train", (workloads, Workloads, "workloads", False), (scaling, Scaling, "scaling", True),
                 (colocations, Colocations, "colocations", False)) as (w, s, c):
            _lib.check(_lib._lib.ps_coloc_train_json(w, s, c, cfg, _C.byref(h)))
        return cls(h.value)

    @property
    def kind(self) -> str:
        with use("kind", (self, ColocModel, "self", False)) as (m,):
            return _lib.COLOC_KINDS[_lib._lib.ps_coloc_model_kind(m)]

    @property
    def gpus(self) -> List[str]:
        """The GPUs of the model's training co-locations."""
        with use("gpus", (self, ColocModel, "self", False)) as (m,):
            s = _lib._lib.ps_coloc_model_gpu(m).decode()
        return [g for g in s.split(",") if g]

    @property
    def predicts_sum(self) -> bool:
        """True when the kind predicts a co-location's throughput sum."""
        with use("predicts_sum", (self, ColocModel, "self", False)) as (m,):
            return bool(_lib._lib.ps_coloc_kind_predicts_sum(_lib._lib.ps_coloc_model_kind(m)))

    def predict(self, workloads: Workloads, colocations: Any, scaling: Optional[Scaling] = None):
        """Per row of colocations (a Colocations table, or rows for
        Colocations.from_rows): its workload's predicted throughput, or for
        sum kinds its co-location's predicted throughput sum."""
        if not isinstance(colocations, Colocations):
            colocations = Colocations.from_rows(colocations, source="colocations")
        with use("predict", (self, ColocModel, "self", False), (workloads, Workloads, "workloads", False),
                 (scaling, Scaling, "scaling", True), (colocations, Colocations, "colocations", False)) as (m, w, s, c):
            n = int(_lib._lib.ps_colocations_rows(c))
            out = (_C.c_double * max(n, 1))()
            _lib.check(_lib._lib.ps_coloc_predict(m, w, s, c, out))
        return _lib.as_array(out, n)

    def select(self, workloads: Workloads, target: str, candidates: Sequence[Candidate], gpu: Optional[str] = None,
               shares: Optional[Sequence[int]] = None, scaling: Optional[Scaling] = None,
               scratch: Any = None) -> List[Tuple[Candidate, float, List[Optional[float]]]]:
        """Rank candidate co-runners of target by predicted throughput sum:
        the library's colocate_select operation (ps_coloc_select), as
        `pairsight colocate select` runs it. candidates is a list of
        workload names, of "c+d" strings or of lists of names (several
        co-runners at once), each given once; shares the MPS percentage of
        the target then each co-runner, the last repeated (default 100);
        gpu the target's GPU in workloads (default: its row's, refused when
        it has rows on several GPUs). Returns [(candidate, tput_sum, [tput
        per workload, the target first, or None for kinds that predict the
        sum])], best first, candidate as given. Nothing is written to disk
        (scratch, the old temporary folder, is ignored)."""
        from .ops import run  # ops imports this module

        if not isinstance(workloads, Workloads):
            raise TypeError("select: workloads must be a pairsight.Workloads, not %s" % type(workloads).__name__)
        given = list(candidates)
        sent = ["+".join(_lib.cstr(n, "select: candidate %d" % i).decode()
                         for n in ([c] if isinstance(c, (str, bytes)) else c)) for i, c in enumerate(given)]
        if not sent:
            return []
        req: Dict[str, Any] = {"target": _lib.cstr(target, "select: target").decode(), "candidates": sent}
        if gpu is not None:
            req["gpu"] = _lib.cstr(gpu, "select: gpu").decode()
        if shares is not None and len(shares):
            req["shares"] = list(shares)
        got = run("colocate_select", coloc=self, workloads=workloads, scaling=scaling, **req)["ranking"]
        # JSON's null is a non-finite figure: NaN, or None per workload for
        # the kinds that predict the sum alone (as before).
        nan, by_sum = float("nan"), self.predicts_sum
        by_name = dict(zip(sent, given))  # the library refuses a candidate given twice
        return [(by_name[r["candidate"]], nan if r["tput_sum"] is None else r["tput_sum"],
                 [None if by_sum else nan if t is None else t for t in r["tput"]]) for r in got]

    def place(self, workloads: Workloads, jobs: Sequence[str], gpus: Union[int, Sequence[Optional[str]]],
              scaling: Optional[Scaling] = None, **params: Any) -> Dict[str, Any]:
        """Place jobs (workload names, repeats allowed) on GPUs, as
        `pairsight colocate place`: gpus is a count (GPUs of each job's own
        type) or a list of GPU types (None: the job's own). params: the keys
        of default_params("place") (max_per_gpu=2, shares=[100], seed=0,
        allow_wait=0). Returns a dict: objective, exact, and per job {job,
        gpu (index, or None when it waits), share, norm_tput}."""
        if isinstance(gpus, int) and not isinstance(gpus, bool):
            gpus = [None] * _lib.cint(gpus, "place: gpus", 1, 4096)
        cfg = _lib.to_json(dict(params, jobs=[_lib.cstr(j, "place: jobs").decode() for j in jobs],
                                gpus=[None if g is None else _lib.cstr(g, "place: gpus").decode() for g in gpus]))
        with use("place", (self, ColocModel, "self", False), (workloads, Workloads, "workloads", False),
                 (scaling, Scaling, "scaling", True)) as (m, w, s):
            out = _json.loads(_lib.take_text(_lib._lib.ps_coloc_place_json, m, w, s, cfg))
        out.pop("schema", None)
        return out

    def shares(self, workloads: Workloads, scaling: Optional[Scaling] = None, emit: Optional[str] = None,
               **request: Any) -> Any:
        """Each workload's MPS percentage for a set on one GPU, as `pairsight
        colocate shares`: request holds set ("a,b" or a list) and optionally
        gpu, candidates, step, max_total, objective, floor, slo
        (docs/colocate.md). Returns the pairsight.shares.v1 reply as a dict
        (feasible False with failing when no candidate meets the floors), or
        with emit ("dra", "env", "yaml") that text."""
        cfg = _lib.to_json(request)
        with use("shares", (self, ColocModel, "self", False), (workloads, Workloads, "workloads", False),
                 (scaling, Scaling, "scaling", True)) as (m, w, s):
            reply = _lib.take_text(_lib._lib.ps_coloc_shares_json, m, w, s, cfg)
        if emit is None:
            return _json.loads(reply)
        return _lib.take_text(_lib._lib.ps_coloc_shares_emit, reply.encode(), _lib.cstr(emit, "shares: emit"))
