"""Queries (candidate co-executions) from the caller's own containers: a
list of dicts, one dict, the path of a CSV file with the key columns of
coexec.csv, a numpy structured array or a pandas DataFrame. Each becomes
an array of ps_query_t (whose layout the C library reports); every value
is checked here (integers in C's range, no NUL in names), and messages name
the caller's own row: "queries.csv:5", "query 3", "row 'job-7'"."""
from __future__ import annotations

import csv as _csv
import os as _os
import re as _re
from typing import Any, List, Mapping, Optional, Sequence, Tuple

from . import _lib

#: The key columns of a query, as in coexec.csv (gpu optional: the model's).
QUERY_FIELDS = tuple(f for f, _ in _lib.Query._fields_)
_STRINGS = {f for f, t in _lib.Query._fields_ if t is _lib._C.c_char_p}


class Batch:
    """Queries as C structs, the bytes they point into, and the caller's
    label of each (for messages)."""

    def __init__(self, n: int, labels: List[str]) -> None:
        self.n = n
        self.arr = (_lib.Query * max(n, 1))()
        self.keep: List[bytes] = []
        self.labels = labels

    def fill_gpu(self, gpu: bytes) -> None:
        self.keep.append(gpu)
        for i in range(self.n):
            if not self.arr[i].gpu:
                self.arr[i].gpu = gpu

    def reword(self, err: _lib.Error) -> _lib.Error:
        """The library's "query K: ..." as the caller's label of row K."""
        m = _re.match(r"^query (\d+)(:|\b)", err.message)
        if not m or int(m.group(1)) >= len(self.labels):
            return err
        msg = self.labels[int(m.group(1))] + err.message[m.end(1):]
        return _lib.ArgumentError(msg, err.code) if err.code == _lib.PS_E_ARG else _lib.Error(err.code, msg)


def _rows(queries: Any) -> Tuple[List[Mapping[str, Any]], List[str]]:
    if isinstance(queries, (str, bytes, _os.PathLike)):
        name = _os.fsdecode(queries)
        with open(queries, newline="") as f:
            rows = list(_csv.DictReader(f))
        return rows, ["%s:%d" % (name, i + 2) for i in range(len(rows))]
    if _lib._np is not None and isinstance(queries, _lib._np.ndarray):
        names = queries.dtype.names
        if not names:
            raise TypeError("queries: a numpy array must be structured, with fields named as coexec.csv's columns")
        cols = {k: queries[k].tolist() for k in names}
        return [{k: cols[k][i] for k in names} for i in range(len(queries))], \
            ["row %d" % i for i in range(len(queries))]
    if hasattr(queries, "to_dict") and hasattr(queries, "columns") and hasattr(queries, "index"):
        return queries.to_dict("records"), ["row %r" % (k,) for k in queries.index]
    if isinstance(queries, Mapping):
        return [queries], ["query 0"]
    if isinstance(queries, (list, tuple)) or hasattr(queries, "__iter__"):
        rows = list(queries)
        for i, r in enumerate(rows):
            if not isinstance(r, Mapping):
                raise TypeError("query %d: a dict of the key columns is expected, not %s" % (i, type(r).__name__))
        return rows, ["query %d" % i for i in range(len(rows))]
    raise TypeError("queries: a list of dicts, a dict, a CSV path, a numpy structured array or a pandas DataFrame "
                    "is expected, not %s" % type(queries).__name__)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v) or (isinstance(v, str) and v == "")


def batch(queries: Any) -> Batch:
    """The queries as a Batch; gpu may be absent (filled in later)."""
    rows, labels = _rows(queries)
    b = Batch(len(rows), labels)
    for i, r in enumerate(rows):
        q = b.arr[i]
        for k in QUERY_FIELDS:
            v = r.get(k)
            if _missing(v):
                if k == "gpu":
                    continue
                raise _lib.ArgumentError("%s: missing %s" % (labels[i], k))
            where = "%s: %s" % (labels[i], k)
            if k in _STRINGS:
                bs = _lib.cstr(v if isinstance(v, (str, bytes)) else str(v), where)
                b.keep.append(bs)
                setattr(q, k, bs)
            else:
                setattr(q, k, _lib.cint(v, where))
    return b
