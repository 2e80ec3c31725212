"""Tables of a node-local plugin's answers, per kind of pod and per NodeInfo: the batches
(FiltersNodes, ScoresNodes) of TaintToleration, NodeAffinity, NodeUnschedulable, NodePorts.

These plugins read only the pod and the node (its Node object; NodePorts the NodeInfo's used
ports). A drain's recreated pods are few kinds for them (a handful of toleration sets, of
node selectors), and each cycle of a queue run reads a view sharing every unchanged
NodeInfo with the one before it (engine/scheduler/queue.py). So a plugin keeps, per pod key
(exactly what it reads of the pod), a table NodeInfo -> its answer there (``NodeTable``): a
batch is one lookup per node done by ``map`` in C, and only a NodeInfo not seen before is
computed, in Python (``__missing__``); a list that differs from the one the table answered
last only where a queue step replaced NodeInfos is answered from it (``answers``). A Score's
answers are an int64 column over the view's nodes, patched per step alike and taken at the
feasible nodes' view indexes (``scores``). Keys are the NodeInfo objects themselves, held by
the table, so an id is never reused while a key is alive.

A first time is cheap too: the answer depends on the node only through what the plugin
reads of it (``read``: its taints, a few label values), so the nodes are grouped by that
(``NodeGroups``), the answer is computed once per group, on a sample NodeInfo of the group, and a
new table is filled from the groups in bulk. ``read`` must return everything the answer reads
of the node: the tests hold every batch to the plugin's own per-node form.

Lifetime: a plugin's tables live with the views they were made for, weakly keyed by the
view's lineage (``view.images_key``: the view a queue run starts from, shared by the views it
derives), at most ``TABLES_KEPT`` per lineage and plugin (least recently used dropped), and
all dropped once their NodeInfos far outnumber a view's nodes.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from service.engine.addresses import addresses
from service.engine.scheduler.framework import NodeInfo

__all__ = ["NodeGroups", "NodeTable", "TableStore", "lineage_of"]

TABLES_KEPT = 32
_PATCH_FROM = 256  # lists shorter than this are looked up whole
_PATCH_SHARE = 8  # a list is patched when at most 1/8 of it differs from the last one
_MIN_INT64, _MAX_INT64 = -(2**63), 2**63 - 1
_FIRST = itemgetter(0)
_SECOND = itemgetter(1)


def lineage_of(view: Any) -> object | None:
    """What a view's tables are kept under: its lineage (None: keep nothing)."""
    if view is None:
        return None
    return getattr(view, "images_key", view)


class NodeGroups(dict):
    """NodeInfo -> what the plugin reads of it (the group key); a NodeInfo not seen before
    is read on first lookup. ``sample``: a NodeInfo of each group. Shared by the decisions
    of threads: additions and ``copy_items`` hold ``lock`` (a copy that allocates may let
    the collector run other threads' code in the middle of the iteration)."""

    __slots__ = ("lock", "read", "sample")

    def __init__(self, read: Callable[[NodeInfo], Hashable]) -> None:
        super().__init__()
        self.read = read
        self.sample: dict[Hashable, NodeInfo] = {}
        self.lock = threading.Lock()

    def __missing__(self, ni: NodeInfo) -> Hashable:
        key = self.read(ni)
        with self.lock:
            self.sample.setdefault(key, ni)  # before the NodeInfo: a group met has a sample
            self[ni] = key
        return key

    def copy_items(self) -> list[tuple[NodeInfo, Hashable]]:
        """(NodeInfo, group key) of every NodeInfo read so far, copied while none is added."""
        with self.lock:
            return list(self.items())

    def fill(self, nodes: Sequence[NodeInfo]) -> None:
        """Read every node of ``nodes`` (a view's, on first use), in bulk."""
        infos = list(nodes)
        keys = list(map(self.read, infos))
        with self.lock:
            deque(map(self.sample.setdefault, keys, infos), maxlen=0)  # the first of each
            self.update(zip(infos, keys, strict=True))


class NodeTable(dict):
    """NodeInfo -> the plugin's answer on it for one pod key: computed once per group of
    nodes (``answer`` of the group's sample NodeInfo, when the group is first met), filled
    in bulk from ``groups``. ``last``: the addresses of the list last answered and the
    answers (see ``answers``)."""

    __slots__ = ("by_group", "by_index", "groups", "last")

    def __init__(self, groups: NodeGroups, answer: Callable[[NodeInfo], Any]) -> None:
        super().__init__()
        self.groups = groups
        self.by_group = by_group = _ByGroup(groups.sample, answer)
        # a copy: other threads' lookups may add NodeInfos to the groups meanwhile
        items = groups.copy_items()
        self.update(
            zip(map(_FIRST, items), map(by_group.__getitem__, map(_SECOND, items)), strict=True)
        )
        self.last: tuple[np.ndarray, list[Any]] | None = None
        self.by_index: tuple[np.ndarray, np.ndarray] | None = None

    def __missing__(self, ni: NodeInfo) -> Any:
        value = self[ni] = self.by_group[self.groups[ni]]
        return value

    def answers(self, nodes: Sequence[NodeInfo]) -> list[Any]:
        """The answer on each of ``nodes``, in order (a new list: callers may change it).
        A list differing from the last one answered in a few places (a queue step replaced
        a NodeInfo) takes its answers and looks up only those places: the addresses are
        compared in numpy. The table holds every NodeInfo it answered (its keys), so their
        addresses are never reused while it lives."""
        if type(nodes) is not list or len(nodes) < _PATCH_FROM:
            return list(map(self.__getitem__, nodes))
        found = addresses(nodes)
        last = self.last
        if last is not None and len(last[0]) == len(found):
            changed = np.flatnonzero(last[0] != found)
            if len(changed) * _PATCH_SHARE <= len(found):
                out = last[1]  # never changed once kept: copied where an answer differs
                at = changed.tolist()
                patch = [self[nodes[k]] for k in at]
                if any(new is not out[k] for k, new in zip(at, patch, strict=True)):
                    out = out.copy()
                    for k, new in zip(at, patch, strict=True):
                        out[k] = new
                self.last = found, out
                return out.copy()
        out = list(map(self.__getitem__, nodes))
        self.last = found, out
        return out.copy()

    def scores(
        self, view: Any, nodes: Sequence[NodeInfo], indexes: np.ndarray
    ) -> list[int] | np.ndarray:
        """Integer answers (a Score) on ``nodes``, each at its index in ``view.nodes``
        (``indexes``): an int64 array taken from the answers on every node of the view
        (``_view_scores``) when those fit int64 and ``nodes`` are the view's NodeInfos at
        ``indexes`` (their addresses compared); else ``answers``' list."""
        if view is None or type(nodes) is not list:
            return self.answers(nodes)
        by_index = self._view_scores(view.nodes)
        if by_index is None:
            return self.answers(nodes)
        found, values = by_index
        if len(indexes) != len(nodes) or (len(indexes) and int(indexes.max()) >= len(found)):
            return self.answers(nodes)
        if not np.array_equal(found[indexes], addresses(nodes)):
            return self.answers(nodes)
        return values[indexes]

    def _view_scores(self, view_nodes: list[NodeInfo]) -> tuple[np.ndarray, np.ndarray] | None:
        """The addresses of ``view_nodes`` and the answer on each as int64, patched from the
        last view's where few NodeInfos differ (as ``answers``); None when an answer is not
        an int within int64."""
        found = addresses(view_nodes)
        last = self.by_index
        if last is not None and len(last[0]) == len(found):
            changed = np.flatnonzero(last[0] != found)
            if not len(changed):
                return last
            if len(changed) * _PATCH_SHARE <= len(found):
                patch = [self[view_nodes[k]] for k in changed.tolist()]
                if not _all_int64(patch):
                    return None
                values = last[1]  # never changed once kept: copied where an answer differs
                if values[changed].tolist() != patch:
                    values = values.copy()
                    values[changed] = patch
                self.by_index = found, values
                return self.by_index
        answers = list(map(self.__getitem__, view_nodes))
        if not _all_int64(answers):
            return None
        self.by_index = found, np.array(answers, np.int64)
        return self.by_index


def _all_int64(values: list[Any]) -> bool:
    """Whether every value is an int within int64 (an int64 array holds it exactly)."""
    ints = set(map(type, values)) <= {int}
    return ints and (not values or (_MIN_INT64 <= min(values) and max(values) <= _MAX_INT64))


class _ByGroup(dict):
    """Group key -> the answer, computed on the group's sample NodeInfo when first asked."""

    __slots__ = ("answer", "sample")

    def __init__(self, sample: dict[Hashable, NodeInfo], answer: Callable[[NodeInfo], Any]):
        super().__init__()
        self.sample = sample
        self.answer = answer

    def __missing__(self, key: Hashable) -> Any:
        value = self[key] = self.answer(self.sample[key])
        return value


class _Lineage:
    __slots__ = ("groups", "tables")

    def __init__(self) -> None:
        self.groups: dict[Hashable, NodeGroups] = {}
        self.tables: OrderedDict[Hashable, NodeTable] = OrderedDict()


class TableStore:
    """One plugin's tables, per lineage of views (see the module docstring)."""

    def __init__(self) -> None:
        self._lineages: weakref.WeakKeyDictionary[object, _Lineage] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def table(
        self,
        view: Any,
        nodes: Sequence[NodeInfo],
        read_id: Hashable,
        read: Callable[[NodeInfo], Hashable],
        pod_key: Hashable,
        answer: Callable[[NodeInfo], Any],
    ) -> NodeTable:
        """The table of ``pod_key`` (whose answers ``answer`` gives), its nodes grouped by
        ``read`` (named ``read_id``: one grouping per distinct read); kept for ``view``'s
        lineage. ``nodes``: the nodes about to be looked up (the view's are read in bulk)."""
        lineage_key = lineage_of(view)
        all_nodes = view.nodes if view is not None else nodes
        if lineage_key is None:
            groups = NodeGroups(read)
            groups.fill(all_nodes)
            return NodeTable(groups, answer)
        with self._lock:
            lineage = self._lineages.get(lineage_key)
            if lineage is None:
                lineage = self._lineages[lineage_key] = _Lineage()
            groups = lineage.groups.get(read_id)
            if groups is not None and len(groups) > 3 * len(all_nodes) + 1024:
                lineage.groups.clear()  # mostly NodeInfos of views long gone: start afresh
                lineage.tables.clear()
                groups = None
            key = (read_id, pod_key)
            found = lineage.tables.get(key)
            if found is not None:
                lineage.tables.move_to_end(key)
                return found
            if groups is None:
                groups = lineage.groups[read_id] = NodeGroups(read)
                groups.fill(all_nodes)
            table = lineage.tables[key] = NodeTable(groups, answer)
            while len(lineage.tables) > TABLES_KEPT:
                lineage.tables.popitem(last=False)
            return table
