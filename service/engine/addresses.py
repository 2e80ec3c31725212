"""The addresses of a list's objects, read in one copy: ``[id(x) for x in items]`` as a
numpy array, without Python code per item where the interpreter allows (CPython, where an
object's id is its address).

Verdict's own, no Kubernetes counterpart. Batches compare lists by it: the noderesources
columns and the node-local plugins' tables find the NodeInfos a queue step replaced, and
the framework runtime finds the nodes a filter batch passed (the answers that are None
itself). The caller keeps the list alive and unchanged while it is read.
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np

__all__ = ["addresses"]

# Where CPython keeps a list's item pointers: PyListObject's ``ob_item`` follows the
# variable-size object header (reference count, type, size).
_OB_ITEM_OFFSET = 3 * ctypes.sizeof(ctypes.c_void_p)


def _addresses_read(items: list) -> np.ndarray:
    """The list's item pointers, copied in one go (CPython: an object's id is its address)."""
    if not items:
        return np.empty(0, np.uintp)
    start = ctypes.c_void_p.from_address(id(items) + _OB_ITEM_OFFSET).value
    size = len(items) * ctypes.sizeof(ctypes.c_void_p)
    return np.frombuffer(ctypes.string_at(start, size), np.uintp)  # a copy, read-only


def _addresses_mapped(items: list) -> np.ndarray:
    """The same from ``id`` of each item (Python code per item): where the layout differs."""
    return np.fromiter(map(id, items), np.uintp, len(items))


def _read_works() -> bool:
    """Whether this interpreter lays lists out as ``_addresses_read`` assumes."""
    if sys.implementation.name != "cpython":
        return False
    probe = [object() for _ in range(7)]
    try:
        return bool(np.array_equal(_addresses_read(probe), _addresses_mapped(probe)))
    except Exception:  # pragma: no cover - an interpreter unlike CPython
        return False


_addresses = _addresses_read if _read_works() else _addresses_mapped


def addresses(items: list) -> np.ndarray:
    """``[id(x) for x in items]`` as a uintp array, without Python code per item where the
    interpreter allows (CPython). The caller keeps ``items`` alive and unchanged meanwhile."""
    return _addresses(items)
