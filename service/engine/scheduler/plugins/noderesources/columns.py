"""What the noderesources plugins read of many nodes at once, as numpy columns.

NodeResourcesFit's Filter and Score and NodeResourcesBalancedAllocation's Score read, per
node, a handful of integers: the allocatable cpu, memory, ephemeral-storage and pods, the
Requested and NonZeroRequested sums and the pod count. ``columns_of(nodes)`` gives them for
a list of NodeInfos as one int64 array per field, so that the plugins' batches
(``filter_nodes`` / ``score_nodes``) answer for every node with a few array operations
instead of Python code per node.

Gathering them must itself cost far less than Python code per node. A NodeInfo's fields
never change once it is built, and a queue step builds new NodeInfos only for the nodes it
changes and shares the others, so the values are kept per NodeInfo, by identity, in a row
store shared by every view and list: a list's rows are found by the addresses of its
NodeInfos (their ``id``), read from the list in one copy (``addresses``) and looked up in
the store's sorted addresses. The store holds the NodeInfos it has rows for, so their
addresses are never reused while it lives; only NodeInfos it has not seen are read in
Python (a queue step's few; a new view's all, once). A Score's feasible nodes, a sublist of
the view's, take the view's rows at their view indexes (``columns_at``).

Every value is a Python int read as the per-node code reads it (``dict.get(name, 0)``); a
node with a value outside [0, NO_WRAP) is not ``plain``: the batches leave it to the
per-node code, which handles int64 wrap-around and values past int64.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from operator import attrgetter, methodcaller
from typing import Any

import numpy as np

from service.engine.addresses import addresses
from service.engine.scheduler.framework import CycleState, NodeInfo
from service.engine.scheduler.plugins.helper import node_indexes

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
    "columns_at",
    "columns_of",
    "expect_sublist",
    "row_values",
    "scored_columns",
    "with_others",
]

# Below this bound every sum of two values and every difference times 100 stays inside
# int64: numpy's int64 arithmetic is then Go's and Python's alike (no wrap-around).
NO_WRAP = 2**56

# The node's values, then what follows from them alone, computed once per NodeInfo: the
# room left (allocatable - requested, as fitsRequest compares; allowed pods - pods) and the
# node's own BalancedAllocation score of cpu and memory (v1.36's balance without the pod).
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
    "free_cpu",
    "free_memory",
    "free_ephemeral",
    "pod_room",
    "balance",
)
# Each field's index, by name.
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
    FREE_CPU,
    FREE_MEMORY,
    FREE_EPHEMERAL,
    POD_ROOM,
    BALANCE,
) = range(len(FIELDS))
_ZEROS = (0,) * len(FIELDS)
_READ = POD_COUNT + 1  # the fields read from the node; the others follow from them

_RECENT = 4  # lists remembered (Fit's Score and BalancedAllocation's read the same list)
_PATCH_LIMIT = 64  # places a list may differ from a remembered one to be patched
_PENDING_LIMIT = 256  # rows added before their addresses are sorted in
_EXPECTED = 2  # sublists announced and kept
_FEW = 16  # addresses looked up in the store's dict rather than its sorted array
_LOCK = threading.Lock()


def row_values(ni: NodeInfo) -> tuple[tuple[int, ...], bool]:
    """The node's values in ``FIELDS`` order, and whether those it holds are all in
    [0, NO_WRAP) (``plain``; when not, the values are zeros and the node is left to the
    per-node code)."""
    values = _read(ni)
    for v in values:
        if type(v) is not int or not 0 <= v < NO_WRAP:
            return _ZEROS, False
    # resource_allocation reads these columns: imported here, not at the top, to keep the
    # import order one-way
    from service.engine.scheduler.plugins.noderesources.resource_allocation import (
        _balance_of_two,
    )

    cap_cpu, cap_mem, cap_eph, allowed, used_cpu, used_mem, used_eph = values[: _READ - 3]
    derived = (
        cap_cpu - used_cpu,
        cap_mem - used_mem,
        cap_eph - used_eph,
        allowed - values[POD_COUNT],
        _balance_of_two(used_cpu, cap_cpu, used_mem, cap_mem),
    )
    return values + derived, True


def _read(ni: NodeInfo) -> tuple:
    """The fields the node holds (the first _READ of FIELDS), as the per-node code reads
    them."""
    alloc = ni.allocatable
    requested = ni.requested
    return (
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


_GETS = tuple(methodcaller("get", name, 0) for name in ("cpu", "memory", "ephemeral-storage"))


def _read_all(nodes: list[NodeInfo]) -> np.ndarray | None:
    """``_read`` of every node as a (_READ, nodes) int64 array, field by field (a C loop
    each), or None when a field is not all ints within int64."""
    allocs = list(map(attrgetter("allocatable"), nodes))
    requested = list(map(attrgetter("requested"), nodes))
    fields = [
        *(map(get, allocs) for get in _GETS),
        map(attrgetter("allowed_pods"), nodes),
        *(map(get, requested) for get in _GETS),
        map(attrgetter("nz_cpu"), nodes),
        map(attrgetter("nz_mem"), nodes),
        map(attrgetter("pod_count"), nodes),
    ]
    out = np.empty((_READ, len(nodes)), np.int64)
    for k, values in enumerate(fields):
        column = np.array(list(values))
        if column.dtype != np.int64 or column.shape != (len(nodes),):
            return None
        out[k] = column
    return out


def _rows_block(nodes: list[NodeInfo]) -> tuple[np.ndarray, np.ndarray]:
    """``row_values`` of many nodes at once: a (FIELDS, nodes) block and the plain flags.
    The fields are read in Python, checked and derived by numpy; node by node for a few
    nodes, and when a value is not an int within int64 (numpy then makes no int64 array
    of them)."""
    read = _read_all(nodes) if len(nodes) > _PENDING_LIMIT else None
    if read is None:  # a few (numpy's fixed costs would outweigh), or not all int64
        rows = [row_values(ni) for ni in nodes]
        block = np.array([v for v, _ in rows], np.int64).reshape(len(nodes), len(FIELDS))
        return block.T, np.array([p for _, p in rows], bool)
    from service.engine.scheduler.plugins.noderesources.resource_allocation import (
        balance_arrays,
    )

    plain = ((read >= 0) & (read < NO_WRAP)).all(axis=0)
    block = np.empty((len(FIELDS), len(nodes)), np.int64)
    block[:_READ] = read
    block[:, ~plain] = 0
    cap_cpu, cap_mem, cap_eph, allowed, used_cpu, used_mem, used_eph = block[: _READ - 3]
    block[FREE_CPU] = cap_cpu - used_cpu
    block[FREE_MEMORY] = cap_mem - used_mem
    block[FREE_EPHEMERAL] = cap_eph - used_eph
    block[POD_ROOM] = allowed - block[POD_COUNT]
    block[BALANCE] = balance_arrays(used_cpu, cap_cpu, used_mem, cap_mem)
    block[:, ~plain] = 0
    return block, plain


# --- the row store ---


class Columns:
    """The fields of a list of nodes: ``field(ALLOC_CPU)`` is every node's allocatable cpu,
    and so on (int64, taken from the store on first use); ``plain`` (bool per node): the
    node's values are exact for the batches; ``all_plain``: no node needs the per-node
    code. It holds the store whose rows it reads, and with it the NodeInfos: the addresses
    stay theirs. Shared through the memo: read, never write."""

    __slots__ = ("_fields", "addresses", "all_plain", "plain", "rows", "store", "values")

    def __init__(self, found: np.ndarray, rows: np.ndarray, store: _Store) -> None:
        self.addresses = found
        self.rows = rows
        self.store = store
        self.values = store.values  # rows are only ever added to it, never changed
        self._fields: dict[int, Any] = {}
        self.plain = store.plain.take(rows)
        self.all_plain = bool(self.plain.all())

    def field(self, index: int) -> np.ndarray:
        found = self._fields.get(index)
        if found is None:
            found = self._fields[index] = self.values[index].take(self.rows)
        return found

    def all_nonzero(self, index: int) -> bool:
        """Whether the field is non-zero on every node (a resource every node has)."""
        key = -1 - index
        found = self._fields.get(key)
        if found is None:
            found = self._fields[key] = bool(self.field(index).all())
        return found


class _Store:
    """Each NodeInfo's values, once, by row; the NodeInfos held in row order (``held``),
    their addresses sorted (``sorted_addresses``) with their rows (``sorted_rows``), the
    latest in ``pending``; and every row by address (``row_of``), for a look-up of a few
    (a queue step's NodeInfos), where numpy's fixed costs would outweigh the work."""

    def __init__(self, capacity: int) -> None:
        capacity = max(capacity, 64)
        self.held: list[NodeInfo] = []
        self.values = np.zeros((len(FIELDS), capacity), np.int64)
        self.plain = np.zeros(capacity, bool)
        self.sorted_addresses = np.empty(0, np.uintp)
        self.sorted_rows = np.empty(0, np.intp)
        # The latest rows, not yet sorted in: address -> row (a queue step's few at a time)
        self.pending: dict[int, int] = {}
        self.row_of: dict[int, int] = {}

    def rows(self, found: np.ndarray) -> np.ndarray:
        """The row of each address, -1 where the store has none."""
        if len(found) <= _FEW:
            get = self.row_of.get
            return np.array([get(a, -1) for a in found.tolist()], np.intp)
        if not len(self.sorted_addresses):
            rows = np.full(len(found), -1, np.intp)
        else:
            at = np.searchsorted(self.sorted_addresses, found)
            np.minimum(at, len(self.sorted_addresses) - 1, out=at)
            known = self.sorted_addresses[at] == found
            rows = np.where(known, self.sorted_rows[at], -1)
        if self.pending:
            unknown = np.flatnonzero(rows < 0)
            if len(unknown):
                get = self.pending.get
                rows[unknown] = [get(a, -1) for a in found[unknown].tolist()]
        return rows

    def add(self, nodes: list[NodeInfo], found: np.ndarray) -> np.ndarray:
        """Rows for ``nodes`` (new to the store; ``found`` their addresses, each once). Their
        addresses wait in ``pending`` until there are more than _PENDING_LIMIT, then are
        sorted in with the others."""
        first = len(self.held)
        needed = first + len(nodes)
        if needed > len(self.plain):
            capacity = max(needed, 2 * len(self.plain))
            values = np.zeros((len(FIELDS), capacity), np.int64)
            values[:, :first] = self.values[:, :first]
            plain = np.zeros(capacity, bool)
            plain[:first] = self.plain[:first]
            self.values, self.plain = values, plain  # Columns made earlier keep the old
        rows = np.arange(first, needed, dtype=np.intp)
        self.values[:, first:needed], self.plain[first:needed] = _rows_block(nodes)
        self.held.extend(nodes)
        self.row_of.update(zip(found.tolist(), rows.tolist(), strict=True))
        if len(nodes) > _PENDING_LIMIT:  # a view's worth: sorted in at once
            self._sort_in(found, rows)
            return rows
        self.pending.update(zip(found.tolist(), rows.tolist(), strict=True))
        if len(self.pending) > _PENDING_LIMIT:
            pending, self.pending = self.pending, {}
            self._sort_in(
                np.fromiter(pending, np.uintp, len(pending)),
                np.fromiter(pending.values(), np.intp, len(pending)),
            )
        return rows

    def _sort_in(self, found: np.ndarray, rows: np.ndarray) -> None:
        addresses = np.concatenate([self.sorted_addresses, found])
        order = np.argsort(addresses)
        self.sorted_addresses = addresses[order]
        self.sorted_rows = np.concatenate([self.sorted_rows, rows])[order]


_store = _Store(0)
_recent: list[Columns] = []
# The last view's NodeInfo addresses, their rows and the store holding them (``columns_at``)
_view: tuple[np.ndarray, np.ndarray, _Store] | None = None
# Sublists announced by ``expect_sublist``: (the columns of a list, positions in it).
_expected: list[tuple[Columns, np.ndarray]] = []


def expect_sublist(cols: Columns, positions: np.ndarray) -> None:
    """Announce that the nodes of ``cols`` at ``positions`` may be asked next as a list (the
    nodes a Filter passed, which Score may get): ``columns_of`` then answers that list by
    comparing addresses, without looking its NodeInfos up."""
    with _LOCK:
        _expected.insert(0, (cols, positions))
        del _expected[_EXPECTED:]


def columns_of(nodes: Sequence[NodeInfo]) -> Columns:
    """The columns of ``nodes``, in their order. The same list as one of the last few is
    answered from it, and so is a sublist announced by ``expect_sublist``; a list of the
    same length differing in a few places (a queue step replaced a NodeInfo) takes its rows
    and looks up only those places; any other list
    looks its NodeInfos up in the row store. NodeInfos the store lacks are added to it; a
    store that lacks most of a list (another cluster, a view built anew) or has grown far
    past it is replaced, so that it holds no more than a few views' NodeInfos."""
    current = nodes if type(nodes) is list else list(nodes)
    found = addresses(current)  # ``current`` holds them meanwhile; the answer's store after
    with _LOCK:
        patchable = None
        for i, known in enumerate(_recent):
            if len(known.addresses) != len(found):
                continue
            changed = np.flatnonzero(known.addresses != found)
            if not len(changed):
                if i:
                    _recent.insert(0, _recent.pop(i))
                return known
            if patchable is None and len(changed) <= _PATCH_LIMIT:
                patchable = known, changed
        answer = _expected_sublist(found)
        if answer is None and patchable is not None:
            answer = _patched(current, found, *patchable)
        if answer is None:
            answer = _looked_up(current, found)
        _recent.insert(0, answer)
        del _recent[_RECENT:]
        return answer


def scored_columns(state: CycleState, nodes: Sequence[NodeInfo]) -> Columns:
    """The columns of the nodes a Score batch gets: by their view index (``columns_at``)
    when the cycle has a view."""
    view = state.view
    if view is None:
        return columns_of(nodes)
    return columns_at(view.nodes, nodes, node_indexes(state, nodes))


def columns_at(
    view_nodes: list[NodeInfo], nodes: Sequence[NodeInfo], indexes: np.ndarray
) -> Columns:
    """The columns of ``nodes``, the NodeInfos of ``view_nodes`` (a view's) at ``indexes``
    (a cycle's feasible nodes): the rows of the view's columns at those indexes, which a
    queue step patches from the last view's (``columns_of``), rather than each NodeInfo
    looked up; checked by address, any other list takes ``columns_of``."""
    current = nodes if type(nodes) is list else list(nodes)
    found = addresses(current)
    with _LOCK:
        for i, known in enumerate(_recent):
            if len(known.addresses) == len(found) and np.array_equal(known.addresses, found):
                _recent.insert(0, _recent.pop(i))
                return known
    view_found = addresses(view_nodes)  # ``view_nodes`` holds them meanwhile
    in_view = len(indexes) == len(found) and (
        not len(indexes) or int(indexes.max()) < len(view_found)
    )
    if not in_view or not np.array_equal(view_found[indexes], found):
        return columns_of(current)
    with _LOCK:
        rows, store = _view_rows(view_nodes, view_found)
        answer = Columns(found, rows[indexes], store)
        _recent.insert(0, answer)
        del _recent[_RECENT:]
    return answer


def _view_rows(view_nodes: list[NodeInfo], found: np.ndarray) -> tuple[np.ndarray, _Store]:
    """The row of each NodeInfo of a view (``found``: their addresses), patched from the
    last view's where a queue step replaced a few; the store holds them. Under _LOCK."""
    global _view
    last = _view
    if last is not None and last[2] is _store and len(last[0]) == len(found):
        changed = np.flatnonzero(last[0] != found)
        if len(changed) <= _PATCH_LIMIT and len(_store.held) + len(changed) <= _limit(found):
            rows = last[1]
            if len(changed):
                rows = rows.copy()
                rows[changed] = _rows_of(_store, view_nodes, found, changed)
            _view = found, rows, _store
            return rows, _store
    rows = _looked_up(view_nodes, found).rows  # may replace the store
    _view = found, rows, _store
    return rows, _store


def _expected_sublist(found: np.ndarray) -> Columns | None:
    """The columns of an announced sublist whose addresses are exactly ``found``: the
    announcing list's rows at those positions (its store holds the NodeInfos)."""
    for known, positions in _expected:
        if len(positions) == len(found) and np.array_equal(known.addresses[positions], found):
            return Columns(found, known.rows[positions], known.store)
    return None


def _patched(
    current: list[NodeInfo], found: np.ndarray, known: Columns, changed: np.ndarray
) -> Columns | None:
    """The rows of ``known``, a remembered list of the same length, with the few places
    that differ (``changed``) looked up; None when ``known`` reads an older store or the
    store would grow past its limit."""
    store = _store
    if known.store is not store or len(store.held) + len(changed) > _limit(found):
        return None
    rows = known.rows.copy()
    rows[changed] = _rows_of(store, current, found, changed)
    return Columns(found, rows, store)


def _looked_up(current: list[NodeInfo], found: np.ndarray) -> Columns:
    """The rows of every NodeInfo of the list, from the store (replaced when it lacks most
    of them or would grow past its limit)."""
    global _store
    store = _store
    rows = store.rows(found)
    missing = int(np.count_nonzero(rows < 0))
    if missing > len(found) // 2 or len(store.held) + missing > _limit(found):
        store = _store = _Store(len(found) + 1024)
        rows = np.full(len(found), -1, np.intp)
        missing = len(found)
    if missing:
        at = np.flatnonzero(rows < 0)
        rows[at] = _rows_of(store, current, found, at)
    return Columns(found, rows, store)


def _limit(found: np.ndarray) -> int:
    """The NodeInfos a store may hold while lists of this length are asked of it."""
    return 4 * len(found) + 4096


def _rows_of(
    store: _Store, current: list[NodeInfo], found: np.ndarray, at: np.ndarray
) -> np.ndarray:
    """The rows of the NodeInfos of ``current`` at positions ``at``, those the store lacks
    added (one row per NodeInfo, however often it is listed)."""
    rows = store.rows(found[at])
    missing = np.flatnonzero(rows < 0)
    if len(missing):
        first: dict[int, int] = {}  # address -> its first position in ``current``
        positions = at[missing].tolist()
        for address, k in zip(found[positions].tolist(), positions, strict=True):
            first.setdefault(address, k)
        added = store.add(
            [current[k] for k in first.values()], np.fromiter(first, np.uintp, len(first))
        )
        row_of = dict(zip(first, added.tolist(), strict=True))
        rows[missing] = [row_of[a] for a in found[positions].tolist()]
    return rows


def with_others(
    scores: np.ndarray, cols: Columns, nodes: Sequence[NodeInfo], score
) -> np.ndarray | list[int]:
    """A batch's ``scores`` (a Score column: the array itself when every node is in the
    batch's exact range), with ``score(node)`` (the per-node code) on the nodes outside it
    (``cols.plain`` False): then a list, as the per-node scores may not fit int64."""
    if cols.all_plain:
        return scores
    out = scores.tolist()
    for k in np.flatnonzero(~cols.plain).tolist():
        out[k] = score(nodes[k])
    return out
