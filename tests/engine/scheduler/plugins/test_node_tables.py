"""The tables the node-local plugins keep (node_tables.py): answers per group, NodeInfos
read on first sight, kept per lineage of views and bounded."""

from __future__ import annotations

import gc
from operator import attrgetter
from types import SimpleNamespace

from service.engine.objects import Cluster, Node, Snapshot
from service.engine.scheduler.framework import NodeInfo
from service.engine.scheduler.plugins import node_tables
from service.engine.scheduler.plugins.node_tables import NodeGroups, NodeTable, TableStore
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS

_UNSCHEDULABLE = attrgetter("node.unschedulable")
_NAME = attrgetter("name")


def _view(count: int = 6):
    nodes = tuple(Node(name=f"n{i}", unschedulable=i % 3 == 0) for i in range(count))
    return scheduler_view(Cluster(Snapshot(nodes=nodes)), DEFAULT_SETTINGS)


def test_answers_once_per_group_and_for_new_nodeinfos():
    view = _view()
    asked = []

    def answer(ni):
        asked.append(ni.name)
        return ni.node.unschedulable

    groups = NodeGroups(_UNSCHEDULABLE)
    groups.fill(view.nodes)
    table = NodeTable(groups, answer)
    assert table.answers(view.nodes) == [True, False, False, True, False, False]
    assert len(asked) == 2  # one per group
    fresh = NodeInfo(Node(name="x", unschedulable=True), 0, [])
    assert table.answers([fresh, view.nodes[1]]) == [True, False]
    assert len(asked) == 2  # a new NodeInfo of a known group: no new answer


def test_store_keeps_tables_per_lineage_and_pod_key():
    view = _view()
    store = TableStore()
    first = store.table(view, view.nodes, "u", _UNSCHEDULABLE, "k", _UNSCHEDULABLE)
    assert store.table(view, view.nodes, "u", _UNSCHEDULABLE, "k", _UNSCHEDULABLE) is first
    other = store.table(view, view.nodes, "u", _UNSCHEDULABLE, "k2", _UNSCHEDULABLE)
    assert other is not first
    assert store.table(None, view.nodes, "u", _UNSCHEDULABLE, "k", _UNSCHEDULABLE) is not first


def test_store_is_bounded_and_goes_with_its_views():
    view = _view()
    store = TableStore()
    for i in range(node_tables.TABLES_KEPT + 5):
        store.table(view, view.nodes, "u", _UNSCHEDULABLE, i, _UNSCHEDULABLE)
    lineage = store._lineages[node_tables.lineage_of(view)]
    assert len(lineage.tables) == node_tables.TABLES_KEPT
    table = store.table(view, view.nodes, "u", _UNSCHEDULABLE, "k", _UNSCHEDULABLE)
    many = [NodeInfo(Node(name=f"m{i}"), 0, []) for i in range(3 * len(view.nodes) + 1100)]
    table.answers(many)  # NodeInfos of views long gone pile up ...
    again = store.table(view, view.nodes, "u", _UNSCHEDULABLE, "k", _UNSCHEDULABLE)
    assert again is not table and len(again) == len(view.nodes)  # ... and are dropped
    del view, lineage, table, again
    gc.collect()
    assert len(store._lineages) == 0


def test_threads_sharing_the_groups_of_a_lineage():
    """Decisions in threads share a lineage's groups: tables made while other threads add
    NodeInfos and groups to them (here a group per node name) are filled from a copy, and
    every answer is right."""
    import sys
    import threading

    view = _view(200)
    store = TableStore()
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            for round_ in range(30):
                fresh = [
                    NodeInfo(Node(name=f"t{seed}-{round_}-{i}", unschedulable=i % 2 == 0), i, [])
                    for i in range(20)
                ]
                nodes = [*view.nodes, *fresh]
                key = (seed, round_)
                table = store.table(view, nodes, "name", _NAME, key, _UNSCHEDULABLE)
                assert table.answers(nodes) == [ni.node.unschedulable for ni in nodes]
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(before)
    assert errors == []


def _patchable_table() -> tuple[NodeTable, list[NodeInfo]]:
    """NodeUnschedulable's table over a view long enough for the table to patch its last
    answer, and that view's nodes as a list."""
    view = _view(node_tables._PATCH_FROM + 40)
    groups = NodeGroups(_UNSCHEDULABLE)
    groups.fill(view.nodes)
    return NodeTable(groups, _UNSCHEDULABLE), list(view.nodes)


def test_a_list_like_the_last_one_is_patched_where_it_differs():
    """A list of the last one's length differing in a few places (a queue step's new
    NodeInfos) takes the last answers there; each answer is a new list (a caller may change
    it), and a list differing in many places is looked up whole."""
    table, nodes = _patchable_table()
    first = table.answers(nodes)
    assert first == [ni.node.unschedulable for ni in nodes]
    first[0] = "changed by the caller"
    replaced = list(nodes)
    for k in (0, 1, 7):
        ni = nodes[k]
        replaced[k] = NodeInfo(Node(name=ni.name, unschedulable=not ni.node.unschedulable), k, [])
    patched = table.answers(replaced)
    assert patched == [ni.node.unschedulable for ni in replaced]
    assert table.answers(nodes) == [ni.node.unschedulable for ni in nodes]
    reversed_nodes = nodes[::-1]
    assert table.answers(reversed_nodes) == [ni.node.unschedulable for ni in reversed_nodes]


def _scored_table(view, score=lambda ni: int(ni.name[1:]) % 4):
    groups = NodeGroups(_NAME)
    groups.fill(view.nodes)
    return NodeTable(groups, score)


def test_scores_by_view_index_match_the_answers():
    """A Score's table answers a sublist of the view's nodes, at their view indexes, with an
    int64 column equal to the per-node answers, also on a view differing in a few NodeInfos
    (patched) and on one differing everywhere."""
    import numpy as np

    view = _view(node_tables._PATCH_FROM + 40)
    table = _scored_table(view)
    indexes = np.arange(0, len(view.nodes), 3)
    nodes = [view.nodes[i] for i in indexes.tolist()]
    column = table.scores(view, nodes, indexes)
    assert isinstance(column, np.ndarray) and column.dtype == np.int64
    assert column.tolist() == table.answers(nodes)
    replaced = list(view.nodes)
    for k in (0, 3, 9):
        replaced[k] = NodeInfo(Node(name=f"n{k + 1}"), k, [])  # another answer there
    replaced[20] = NodeInfo(Node(name="n24"), 20, [])  # the same answer
    step = SimpleNamespace(nodes=replaced)
    nodes = [replaced[i] for i in indexes.tolist()]
    assert table.scores(step, nodes, indexes).tolist() == [int(n.name[1:]) % 4 for n in nodes]
    fresh = SimpleNamespace(nodes=[NodeInfo(Node(name=f"n{i + 2}"), i, []) for i in range(9)])
    column = table.scores(fresh, fresh.nodes, np.arange(9))
    assert column.tolist() == [(i + 2) % 4 for i in range(9)]


def test_scores_fall_back_to_the_answers():
    """Nodes that are not the view's at the given indexes, and answers beyond int64, are
    answered by ``answers`` (a list of Python ints)."""
    import numpy as np

    view = _view(12)
    table = _scored_table(view)
    indexes = np.arange(len(view.nodes))
    shuffled = view.nodes[::-1]
    assert table.scores(view, shuffled, indexes) == table.answers(shuffled)
    assert table.scores(view, view.nodes[:3], indexes) == table.answers(view.nodes[:3])
    assert table.scores(None, view.nodes, indexes) == table.answers(view.nodes)
    huge = _scored_table(view, lambda ni: 2**63 + int(ni.name[1:]))
    assert huge.scores(view, view.nodes, indexes) == [2**63 + i for i in range(12)]


def test_a_patched_list_with_the_same_answers_is_a_new_list():
    """A queue step's new NodeInfo answered as the one it replaces: the answers are those
    of the last list, still a new list each time (a caller may change it)."""
    table, nodes = _patchable_table()
    first = table.answers(nodes)
    replaced = list(nodes)
    replaced[4] = NodeInfo(Node(name="n4", unschedulable=nodes[4].node.unschedulable), 4, [])
    second = table.answers(replaced)
    assert second == first and second is not first
    second[0] = "changed by the caller"
    assert table.answers(nodes) == first
