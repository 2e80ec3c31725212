"""columns.py: the columns of a list of NodeInfos are each node's own values (``row_values``),
whether gathered from the row store, answered from the memo, or patched from a list that
differs in a few positions; a node with a value outside the exact range is not plain."""

from __future__ import annotations

import random

import numpy as np
import pytest

from service.engine.scheduler.framework import NodeInfo
from service.engine.scheduler.plugins.noderesources import columns as col
from tests.engine.scheduler.helpers import node
from tests.engine.scheduler.plugins.noderesources.random_nodes import node_info, node_infos


def _expected(nodes: list[NodeInfo]) -> tuple[np.ndarray, np.ndarray]:
    rows = [col.row_values(ni) for ni in nodes]
    values = np.array([v for v, _ in rows], np.int64).reshape(len(nodes), col._WIDTH).T
    return values, np.array([p for _, p in rows], bool)


def _assert_columns(nodes: list[NodeInfo]) -> col.Columns:
    got = col.columns_of(nodes)
    values, plain = _expected(nodes)
    assert got.nodes == list(nodes)
    assert np.array_equal(got.values, values)
    assert np.array_equal(got.plain, plain)
    assert got.all_plain == bool(plain.all())
    return got


def test_row_values_read_as_the_plugins_read() -> None:
    ni = NodeInfo(node("a", cpu=4000, memory=2**33, pods=110), 0, [])
    assert col.row_values(ni) == ((4000, 2**33, 0, 110, 0, 0, 0, 0, 0, 0), True)
    for big in (col.NO_WRAP, 2**63 - 1, 2**64, -1):
        ni = NodeInfo(node("a", cpu=big), 0, [])
        assert col.row_values(ni) == ((0,) * col._WIDTH, False)


@pytest.mark.parametrize("seed", range(4))
def test_columns_follow_successive_lists(seed: int) -> None:
    """Lists as a queue run makes them: subsets, the same list again, a few NodeInfos
    replaced, another cluster altogether, in random order."""
    rng = random.Random(seed)
    nodes = node_infos(rng, 300)
    _assert_columns(nodes)
    for step in range(60):
        roll = rng.random()
        if roll < 0.4 and nodes:  # a queue step: a few NodeInfos replaced
            nodes = list(nodes)
            for _ in range(rng.choice((1, 1, 2, 5, 20))):
                i = rng.randrange(len(nodes))
                nodes[i] = node_info(rng, 1000 + step)
            _assert_columns(nodes)
        elif roll < 0.7:
            _assert_columns([ni for ni in nodes if rng.random() < 0.9])
        elif roll < 0.8:
            again = list(nodes)
            assert _assert_columns(again) is col.columns_of(nodes)  # the memo
        elif roll < 0.9:
            _assert_columns(tuple(nodes[: rng.randrange(len(nodes) + 1)]))
        else:
            nodes = node_infos(rng, rng.choice((0, 1, 50, 300)))
            _assert_columns(nodes)


def test_store_is_replaced_when_it_grows_or_misses() -> None:
    rng = random.Random(9)
    first = node_infos(rng, 100)
    col.columns_of(first)
    store = col._store
    assert all(ni in store.rows for ni in first)
    other = node_infos(rng, 100)  # another cluster: most NodeInfos unknown
    _assert_columns(other)
    assert col._store is not store and not any(ni in col._store.rows for ni in first)
    grown = col._store
    for _ in range(60):  # a few new NodeInfos at a time: kept until the store is too big
        other = [*other[:-2], node_info(rng, 0), node_info(rng, 1)]
        col._recent.clear()  # force the store path
        _assert_columns(other)
    assert len(col._store.rows) <= 4 * 100 + 4096
    assert col._store is grown


@pytest.mark.parametrize("seed", range(20))
def test_mismatches_is_the_naive_comparison(seed: int) -> None:
    rng = random.Random(seed)
    size = rng.choice((0, 1, 7, 8, 9, 100, 1000))
    old = [object() for _ in range(size)]
    new = list(old)
    for _ in range(rng.choice((0, 1, 2, 16, 17, 50))):
        if size:
            new[rng.randrange(size)] = object()
    naive = [k for k in range(size) if new[k] is not old[k]]
    got = col.mismatches(new, old, 16)
    assert got == (naive if len(naive) <= 16 else None)
