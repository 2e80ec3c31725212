"""What the noderesources plugins read of many nodes at once, as numpy columns.

NodeResourcesFit's Filter and Score and NodeResourcesBalancedAllocation's Score read, per
node, a handful of integers: the allocatable cpu, memory, ephemeral-storage and pods, the
Requested and NonZeroRequested sums and the pod count. ``columns_of(nodes)`` gathers them
for a list of NodeInfos into one int64 array per field, so that the plugins' batches
(``filter_nodes`` / ``score_nodes``) compute every node's answer with a few array
operations instead of Python code per node.

The gathering must itself be cheaper than the plugins were. A NodeInfo's fields never
change once it is built (a queue step builds new NodeInfos for the nodes it changes and
shares the others), so:

* a row store keyed on NodeInfo identity (the dict holds the objects: their ids are never
  reused) keeps each NodeInfo's values once computed, for every view that shares it;
* the last few lists gathered are kept (a copy, compared element by element by identity):
  the same list again is answered from the memo, and a list of the same length differing
  in a few positions (the next cycle's nodes after a queue step replaced one NodeInfo) is
  answered by copying the memo's columns and refreshing those positions only.

Every value is a Python int read the way the per-node code reads it (``dict.get(name,
0)``); a node with a value outside [0, 2^56) is marked not ``plain``: the batches leave it
to the per-node code, which handles int64 wrap-around and values past int64.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from itertools import repeat

import numpy as np

from service.engine.scheduler.framework import NodeInfo

__all__ = [
    "ALLOC_CPU",
    "ALLOC_EPHEMERAL",
    "ALLOC_MEMORY",
    "ALLOWED_PODS",
    "FIELDS",
    "NO_WRAP",
    "NZ_CPU",
    "NZ_MEM",
    "POD_COUNT",
    "REQUESTED_CPU",
    "REQUESTED_EPHEMERAL",
    "REQUESTED_MEMORY",
    "Columns",
    "columns_of",
    "mismatches",
    "row_values",
]

# Below this bound every sum of two values and every difference times 100 stays inside
# int64: numpy's int64 arithmetic is then Go's and Python's alike (no wrap-around).
NO_WRAP = 2**56

FIELDS = (
    "alloc_cpu",
    "alloc_memory",
    "alloc_ephemeral",
    "allowed_pods",
    "requested_cpu",
    "requested_memory",
    "requested_ephemeral",
    "nz_cpu",
    "nz_mem",
    "pod_count",
)
_WIDTH = len(FIELDS)
_ZEROS = (0,) * _WIDTH

# Mismatching positions beyond which a list is gathered anew rather than patched.
_PATCH_LIMIT = 16
_RECENT = 4  # lists kept by the memo
_LOCK = threading.Lock()


def row_values(ni: NodeInfo) -> tuple[tuple[int, ...], bool]:
    """The node's values in ``FIELDS`` order, and whether all of them are in [0, NO_WRAP)
    (``plain``; when not, the values are zeros and the node is left to the per-node code)."""
    alloc = ni.allocatable
    requested = ni.requested
    values = (
        alloc.get("cpu", 0),
        alloc.get("memory", 0),
        alloc.get("ephemeral-storage", 0),
        ni.allowed_pods,
        requested.get("cpu", 0),
        requested.get("memory", 0),
        requested.get("ephemeral-storage", 0),
        ni.nz_cpu,
        ni.nz_mem,
        ni.pod_count,
    )
    for v in values:
        if type(v) is not int or not 0 <= v < NO_WRAP:
            return _ZEROS, False
    return values, True


class Columns:
    """``FIELDS`` of a list of nodes: ``values[ALLOC_CPU]`` is every node's allocatable cpu,
    and so on (int64); ``plain`` (bool per node): the values are exact for the batches;
    ``all_plain``: no node needs the per-node code. Shared by the memo: read, never write."""

    __slots__ = ("all_plain", "nodes", "plain", "values")

    def __init__(self, nodes: list[NodeInfo], values: np.ndarray, plain: np.ndarray) -> None:
        self.nodes = nodes
        self.values = values
        self.plain = plain
        self.all_plain = bool(plain.all())


# Each field's row of ``Columns.values``, by name: ALLOC_CPU, ..., POD_COUNT.
(
    ALLOC_CPU,
    ALLOC_MEMORY,
    ALLOC_EPHEMERAL,
    ALLOWED_PODS,
    REQUESTED_CPU,
    REQUESTED_MEMORY,
    REQUESTED_EPHEMERAL,
    NZ_CPU,
    NZ_MEM,
    POD_COUNT,
) = range(_WIDTH)


class _Store:
    """Each NodeInfo's values, once: ``rows`` maps a NodeInfo (held) to its column."""

    def __init__(self, capacity: int) -> None:
        self.rows: dict[NodeInfo, int] = {}
        self.values = np.zeros((_WIDTH, max(capacity, 16)), np.int64)
        self.plain = np.zeros(max(capacity, 16), bool)

    def add(self, ni: NodeInfo) -> int:
        row = len(self.rows)
        if row == self.plain.shape[0]:
            self.values = np.concatenate([self.values, np.zeros_like(self.values)], axis=1)
            self.plain = np.concatenate([self.plain, np.zeros_like(self.plain)])
        values, plain = row_values(ni)
        self.values[:, row] = values
        self.plain[row] = plain
        self.rows[ni] = row
        return row


_store = _Store(0)
_recent: list[Columns] = []


def columns_of(nodes: Sequence[NodeInfo]) -> Columns:
    """The columns of ``nodes``, in their order (see the module docstring for the memo)."""
    current = nodes if type(nodes) is list else list(nodes)
    with _LOCK:
        for i, known in enumerate(_recent):
            if known.nodes == current:  # identity first: equal lists hold the same objects
                if i:
                    _recent.insert(0, _recent.pop(i))
                return known
        found = _patched(current)
        if found is None:
            found = _gathered(current)
        _recent.insert(0, found)
        del _recent[_RECENT:]
        return found


def _patched(current: list[NodeInfo]) -> Columns | None:
    """A remembered list of the same length differing in a few positions, those refreshed."""
    for known in _recent:
        if len(known.nodes) != len(current):
            continue
        changed = mismatches(current, known.nodes, _PATCH_LIMIT)
        if changed is None:
            continue
        values = known.values.copy()
        plain = known.plain.copy()
        for k in changed:
            row, plain[k] = row_values(current[k])
            values[:, k] = row
        return Columns(list(current), values, plain)
    return None


def _gathered(current: list[NodeInfo]) -> Columns:
    """The list's columns from the row store, the NodeInfos it lacks added. A store that
    lacks most of them (another cluster, a rebuilt view) or has grown far beyond the list is
    replaced, so that it holds no more than a few views' NodeInfos."""
    global _store
    store = _store
    found = list(map(store.rows.get, current, repeat(-1)))
    missing = found.count(-1)
    if missing > len(current) // 2 or len(store.rows) + missing > 4 * len(current) + 4096:
        store = _store = _Store(len(current) + 1024)
        found = [-1] * len(current)
    if missing:
        add = store.add
        found = [add(ni) if row < 0 else row for ni, row in zip(current, found, strict=True)]
    rows = np.array(found, np.intp)
    return Columns(list(current), store.values.take(rows, axis=1), store.plain.take(rows))


def mismatches(new: list, old: list, limit: int) -> list[int] | None:
    """The positions where two lists of equal length hold different objects, or None when
    there are more than ``limit``. Halves compared whole (a C loop, identity first), so a few
    differences cost a few passes over the list rather than Python code per element."""
    out: list[int] = []

    def search(lo: int, hi: int) -> bool:
        if new[lo:hi] == old[lo:hi]:
            return True
        if hi - lo <= 8:
            out.extend(k for k in range(lo, hi) if new[k] is not old[k])
            return len(out) <= limit
        mid = (lo + hi) // 2
        return search(lo, mid) and search(mid, hi)

    if not search(0, len(new)):
        return None
    return out
