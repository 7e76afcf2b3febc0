"""The five tables of docs/FORMATS.md, loaded from files or built in memory
(the C library's ps_table_builder_*: no temporary file is written)."""
from __future__ import annotations

import ctypes as _C
import os as _os
import re as _re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from . import _lib
from ._handle import FileBacked, use


def _cell(v: Any, what: str) -> Optional[bytes]:
    """A value as the text of a CSV cell (floats exactly, None empty)."""
    if v is None:
        return None
    if _lib._np is not None and isinstance(v, _lib._np.generic):
        v = v.item()
    if isinstance(v, float):
        return repr(v).encode() if v == v else None
    if isinstance(v, (int, str, bytes)) or (_lib._np is not None and isinstance(v, _lib._np.str_)):
        return _lib.cstr(v if isinstance(v, (str, bytes)) else str(v), what)
    raise TypeError("%s: %r is not a number or a string" % (what, v))


def _records(rows: Any) -> Tuple[List[Mapping[str, Any]], List[str]]:
    """Rows as dicts and a label for each (its index in the list, or its
    DataFrame index label), for messages that name the caller's own rows."""
    if hasattr(rows, "to_dict") and hasattr(rows, "columns") and hasattr(rows, "index"):  # a pandas DataFrame
        return rows.to_dict("records"), ["row %r" % (k,) for k in rows.index]
    if _lib._np is not None and isinstance(rows, _lib._np.ndarray) and rows.dtype.names:
        names = rows.dtype.names
        return [{k: r[k] for k in names} for r in rows], ["row %d" % i for i in range(len(rows))]
    if isinstance(rows, Mapping):
        rows = [rows]
    rows = list(rows)
    return rows, ["row %d" % i for i in range(len(rows))]


_WHERE = _re.compile(r"^(?P<src>.*?):(?P<line>\d+):(?P<col>\d+): ")


def _own_words(err: _lib.Error, source: str, labels: Sequence[str], columns: Sequence[str]) -> _lib.Error:
    """The builder's "source:LINE:COLUMN: ..." as the caller's row and
    column: "source, row 3, column tput: ..." (line 1 is the header)."""
    m = _WHERE.match(err.message)
    if not m or m.group("src") != source:
        return err
    line, col = int(m.group("line")), int(m.group("col"))
    where = "header" if line == 1 else labels[line - 2] if 0 <= line - 2 < len(labels) else "line %d" % line
    if 1 <= col <= len(columns):
        where += ", column %s" % columns[col - 1]
    msg = "%s, %s: %s" % (source, where, err.message[m.end():])
    return _lib.ArgumentError(msg, err.code) if err.code == _lib.PS_E_ARG else _lib.Error(err.code, msg)


class Table(FileBacked):
    """A loaded table (read-only; any number of threads may read it)."""
    _kind = ""
    _rows_fn = ""
    _finish_fn = ""

    @classmethod
    def from_rows(cls, rows: Any, columns: Optional[Sequence[str]] = None, source: Optional[str] = None):
        """A table from rows in memory: dicts keyed by the file's column
        names, a pandas DataFrame or a numpy structured array. columns
        (default: the keys in the order first seen) are the header; a value
        absent from a row is an empty cell. The rows are checked exactly as
        a file's; errors name source (default "<kind> rows") and the row."""
        records, labels = _records(rows)
        if isinstance(columns, (str, bytes, _os.PathLike)):
            columns = None  # the path of the old from_rows(rows, path): nothing is written now
        if columns is None:
            seen: Dict[str, None] = {}
            for r in records:
                for k in r:
                    seen.setdefault(str(k), None)
            columns = list(seen)
        columns = [str(c) for c in columns]
        source = source or "%s rows" % cls._kind
        return cls._build(source, columns, labels, ([r.get(c) for c in columns] for r in records))

    @classmethod
    def _build(cls, source: str, columns: Sequence[str], labels: Sequence[str], rows: Iterable[Sequence[Any]]):
        if not columns:
            raise _lib.ArgumentError("%s: no columns" % source)
        b = _C.c_void_p()
        names = (_C.c_char_p * len(columns))(*[_lib.cstr(c, "%s: column name" % source) for c in columns])
        _lib.check(_lib._lib.ps_table_builder_create(_lib.TABLE_KINDS[cls._kind], _lib.cstr(source, "source"),
                                                     names, len(columns), _C.byref(b)))
        try:
            cells = (_C.c_char_p * len(columns))()
            for i, row in enumerate(rows):
                for j, v in enumerate(row):
                    cells[j] = _cell(v, "%s, %s, column %s" % (source, labels[i], columns[j]))
                _lib.check(_lib._lib.ps_table_builder_append(b, cells))
            h = _C.c_void_p()
            try:
                _lib.check(getattr(_lib._lib, cls._finish_fn)(b, _C.byref(h)))
            except _lib.Error as e:
                raise _own_words(e, source, labels, columns) from None
            return cls(h.value)
        finally:
            _lib._lib.ps_table_builder_free(b)

    def __len__(self) -> int:
        if not self._rows_fn:
            raise TypeError("pairsight.%s has no row count" % type(self).__name__)
        with use("len", (self, type(self), "self", False)) as (p,):
            return int(getattr(_lib._lib, self._rows_fn)(p))


class Ops(Table):
    """Standalone per-operator profiles (ops.csv, docs/FORMATS.md)."""
    _kind, _free_name = "ops", "ps_ops_free"
    _finish_fn = "ps_table_builder_finish_ops"
    _load_fn, _save_fn, _rows_fn = "ps_ops_load", "ps_ops_save", "ps_ops_rows"


class Coexec(Table):
    """Measured co-executions (coexec.csv)."""
    _kind, _free_name = "coexec", "ps_coexec_free"
    _finish_fn = "ps_table_builder_finish_coexec"
    _load_fn, _save_fn, _rows_fn = "ps_coexec_load", "ps_coexec_save", "ps_coexec_rows"

    def split(self, seed: int = 1):
        """Split of every row by experiment, as Model.train draws it with the
        same seed: 0 train, 1 validation, 2 test, 3 calibration of the upper
        bounds (80/10/10, of which the last eighth of the training
        experiments calibrates from 20 experiments on: 70/10/10/10)."""
        seed = _lib.cint(seed, "split: seed", 0, 2 ** 64 - 1)
        with use("split", (self, Coexec, "self", False)) as (p,):
            n = int(_lib._lib.ps_coexec_rows(p))
            out = (_C.c_ubyte * max(n, 1))()
            _lib.check(_lib._lib.ps_coexec_split(p, seed, out))
        if _lib._np is not None:
            return _lib._np.array(out[:n], dtype=_lib._np.uint8)
        return list(out[:n])


class Workloads(Table):
    """Workload-level features and solo throughput (workloads.csv)."""
    _kind, _free_name = "workloads", "ps_workloads_free"
    _finish_fn = "ps_table_builder_finish_workloads"
    _load_fn, _save_fn, _rows_fn = "ps_workloads_load", "ps_workloads_save", "ps_workloads_rows"

    def keys(self) -> List[Tuple[str, str]]:
        """(gpu, workload) of every row, in file order."""
        out = []
        with use("keys", (self, Workloads, "self", False)) as (p,):
            g, w = _C.c_char_p(), _C.c_char_p()
            for i in range(int(_lib._lib.ps_workloads_rows(p))):
                _lib.check(_lib._lib.ps_workloads_key(p, i, _C.byref(g), _C.byref(w)))
                out.append((g.value.decode(), w.value.decode()))
        return out


class Scaling(Table):
    """Solo throughput by MPS share (workload_scaling.csv)."""
    _kind, _free_name = "workload_scaling", "ps_scaling_free"
    _finish_fn = "ps_table_builder_finish_scaling"
    _load_fn, _save_fn = "ps_scaling_load", "ps_scaling_save"


class Colocations(Table):
    """Co-locations, one row per slot (colocations.csv)."""
    _kind, _free_name = "colocations", "ps_colocations_free"
    _finish_fn = "ps_table_builder_finish_colocations"
    _load_fn, _save_fn, _rows_fn = "ps_colocations_load", "ps_colocations_save", "ps_colocations_rows"
