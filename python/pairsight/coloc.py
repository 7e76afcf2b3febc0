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


def _target_gpu(keys: List[Tuple[str, str]], target: str, gpu: Optional[str]) -> str:
    """The gpu of the target's row in workloads (on gpu when given), as
    `pairsight colocate select` infers it."""
    gpus = [g for g, w in keys if w == target]
    if gpu is not None:
        found = [g for g in gpus if g == gpu] or [g for g in gpus if g.casefold() == gpu.casefold()]
        if not found:
            raise _lib.Error(_lib.PS_E_INPUT, "select: target '%s' on gpu %s is not in the workloads table"
                             % (target, gpu))
        return found[0]
    if not gpus:
        raise _lib.Error(_lib.PS_E_INPUT, "select: target '%s' is not in the workloads table" % target)
    if len(set(gpus)) > 1:
        raise _lib.ArgumentError("select: target '%s' has rows on several GPUs (%s): give gpu="
                                 % (target, ", ".join(sorted(set(gpus)))))
    return gpus[0]


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
        """Rank candidate co-runners of target by predicted throughput sum
        (as `pairsight colocate select`): candidates is a list of workload
        names or of lists of names (several co-runners at once); shares the
        MPS percentage of the target then each co-runner (default 100); gpu
        the target's GPU in workloads (default: inferred from its row, as
        the CLI does). Returns [(candidate, tput_sum, [tput per workload or
        None])], best first. The query is built in memory (scratch, the old
        temporary folder, is ignored)."""
        if not isinstance(workloads, Workloads):
            raise TypeError("select: workloads must be a pairsight.Workloads, not %s" % type(workloads).__name__)
        target_b = _lib.cstr(target, "select: target").decode()
        keys = workloads.keys()
        g = _target_gpu(keys, target_b, gpu)
        known = {w for kg, w in keys if kg == g}
        rows, spans = [], []
        for i, c in enumerate(candidates):
            names = [c] if isinstance(c, (str, bytes)) else list(c)
            if not names:
                raise _lib.ArgumentError("select: candidate %d is empty" % i)
            for nm in names:
                s = _lib.cstr(nm, "select: candidate %d" % i).decode()
                if s not in known:
                    raise _lib.Error(_lib.PS_E_INPUT, "select: candidate %d (%s): workload '%s' (gpu %s) is not in "
                                     "the workloads table" % (i, "+".join(map(str, names)), s, g))
            start = len(rows)
            for slot, w in enumerate([target_b] + [str(x) for x in names], 1):
                share = 100 if not shares else shares[min(slot, len(shares)) - 1]
                share = _lib.cint(share, "select: shares", 1, 100)
                rows.append(("select/%d" % i, g, slot, w, share))
            spans.append((c, start, len(rows)))
        if not spans:
            return []
        labels = ["candidate %d" % i for i, (c, a, b) in enumerate(spans) for _ in range(b - a)]
        q = Colocations._build("select candidates", ["colocation", "gpu", "slot", "workload", "share_pct"], labels,
                               rows)
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
