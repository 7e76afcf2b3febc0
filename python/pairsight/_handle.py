"""Owned C handles. Every call into C holds the handles it passes for its
whole duration: close() (or the garbage collector) waits until no call is
inside C with the handle, so that closing a model while another thread
predicts with it is never a use-after-free. A handle passed where another
type is expected is a TypeError before anything reaches C."""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, List, Optional, Tuple

from . import _lib


class Handle:
    """An owned C handle, released by close(), at the end of a with block,
    or when collected. Calls that use it after close() raise Error."""

    #: the name of the C function that releases this kind of handle
    _free_name = ""
    #: True for objects the C library lets only one thread use at a time:
    #: calls on them then wait for each other.
    _serial = False

    def __init__(self, handle: int) -> None:
        self._h: Optional[int] = handle
        self._cv = threading.Condition(threading.Lock())
        self._busy = 0

    def _enter(self) -> int:
        with self._cv:
            while self._serial and self._busy and self._h:
                self._cv.wait()
            if not self._h:
                raise _lib.Error(_lib.PS_E_ARG, "%s: used after close()" % type(self).__name__)
            self._busy += 1
            return self._h

    def _leave(self) -> None:
        with self._cv:
            self._busy -= 1
            if self._busy == 0:
                self._cv.notify_all()

    def close(self) -> None:
        """Release the C object now. New calls fail at once; calls already
        inside C finish first (close waits for them)."""
        cv = getattr(self, "_cv", None)
        if cv is None:  # __init__ never ran
            return
        with cv:
            h, self._h = self._h, None
            cv.notify_all()
            while self._busy:
                cv.wait()
        if h:
            getattr(_lib._lib, self._free_name)(h)

    @property
    def closed(self) -> bool:
        return not self._h

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __reduce__(self):
        raise TypeError("pairsight.%s cannot be pickled: save() it to a file" % type(self).__name__)

    @classmethod
    def _load_with(cls, fn, path: _lib.PathLike):
        import ctypes
        h = ctypes.c_void_p()
        _lib.check(fn(_lib.path_arg(path), ctypes.byref(h)))
        return cls(h.value)


class FileBacked(Handle):
    """An object read from and written to a file (a table, a model)."""
    _load_fn = _save_fn = ""

    @classmethod
    def load(cls, path: "_lib.PathLike"):
        """Load and validate the file; Error names path:line:column (for a
        model, PS_E_MISMATCH for another format or layout)."""
        return cls._load_with(getattr(_lib._lib, cls._load_fn), path)

    def save(self, path: "_lib.PathLike") -> None:
        """Write the file atomically."""
        with use("save", (self, type(self), "self", False)) as (m,):
            _lib.check(getattr(_lib._lib, self._save_fn)(m, _lib.path_arg(path)))


class SavedModel(FileBacked):
    """A model: a file, and the file's bytes (to_bytes, from_bytes),
    through which it pickles."""
    _load_mem_fn = _save_mem_fn = ""

    @classmethod
    def from_bytes(cls, data: bytes):
        """A model from the bytes of its file (to_bytes, or the file read whole)."""
        import ctypes
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError("from_bytes: bytes expected, not %s" % type(data).__name__)
        data = bytes(data)
        h = ctypes.c_void_p()
        _lib.check(getattr(_lib._lib, cls._load_mem_fn)(data, len(data), ctypes.byref(h)))
        return cls(h.value)

    def to_bytes(self) -> bytes:
        """The bytes of the model's file, as save() would write them."""
        with use("to_bytes", (self, type(self), "self", False)) as (m,):
            return _lib.take_bytes(getattr(_lib._lib, self._save_mem_fn), m)

    def __reduce__(self):
        return (type(self).from_bytes, (self.to_bytes(),))


@contextlib.contextmanager
def use(call: str, *args: Tuple[Any, type, str, bool]) -> Iterator[List[Optional[int]]]:
    """Hold handles for one C call: args are (value, expected class, argument
    name, may be None). Yields their C pointers (None for an absent optional
    one); a value of another type raises TypeError naming the argument."""
    held: List[Handle] = []
    try:
        ptrs: List[Optional[int]] = []
        for value, cls, name, optional in args:
            if value is None and optional:
                ptrs.append(None)
                continue
            if not isinstance(value, cls):
                raise TypeError("%s: %s must be a pairsight.%s, not %s"
                                % (call, name, cls.__name__, type(value).__name__))
            ptrs.append(value._enter())
            held.append(value)
        yield ptrs
    finally:
        for h in held:
            h._leave()
