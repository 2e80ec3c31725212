"""columns.py: the columns of a list of NodeInfos are each node's own values (``row_values``),
whether answered from the memo, from rows the store holds or from rows it adds, as lists
follow one another like a queue run's; a node with a value outside the exact range is not
plain; the columns follow lists alike when addresses are read by ``id`` per item."""

from __future__ import annotations

import random

import numpy as np
import pytest

from service.engine import addresses as engine_addresses
from service.engine.scheduler.framework import NodeInfo
from service.engine.scheduler.plugins.noderesources import columns as col
from tests.engine.scheduler.helpers import node
from tests.engine.scheduler.plugins.noderesources.random_nodes import node_info, node_infos


def _assert_columns(nodes, got: col.Columns | None = None) -> col.Columns:
    got = col.columns_of(nodes) if got is None else got
    rows = [col.row_values(ni) for ni in nodes]
    assert got.addresses.tolist() == [id(ni) for ni in nodes]
    assert {id(ni) for ni in nodes} <= {id(ni) for ni in got.store.held}  # held
    for k in range(len(col.FIELDS)):
        assert got.field(k).dtype == np.int64
        assert got.field(k).tolist() == [values[k] for values, _ in rows]
    assert got.plain.tolist() == [plain for _, plain in rows]
    assert got.all_plain == all(plain for _, plain in rows)
    return got


def test_row_values_read_as_the_plugins_read() -> None:
    ni = NodeInfo(node("a", cpu=4000, memory=2**33, pods=110), 0, [])
    values = (4000, 2**33, 0, 110, 0, 0, 0, 0, 0, 0)
    assert col.row_values(ni) == ((*values, 4000, 2**33, 0, 110, 100), True)
    for big in (col.NO_WRAP, 2**63 - 1, 2**64, -1):
        ni = NodeInfo(node("a", cpu=big), 0, [])
        assert col.row_values(ni) == ((0,) * len(col.FIELDS), False)


@pytest.mark.parametrize("mapped", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_columns_follow_successive_lists(seed: int, mapped: bool, monkeypatch) -> None:
    """Lists as a queue run makes them: subsets, the same list again, a few NodeInfos
    replaced, a NodeInfo twice, another cluster altogether, in random order."""
    if mapped:
        monkeypatch.setattr(engine_addresses, "_addresses", engine_addresses._addresses_mapped)
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
        elif roll < 0.85:
            _assert_columns(tuple(nodes[: rng.randrange(len(nodes) + 1)]))
        elif roll < 0.9 and nodes:
            twice = [*nodes, node_info(rng, 0)]
            _assert_columns([*twice, twice[-1], twice[0]])
        else:
            nodes = node_infos(rng, rng.choice((0, 1, 50, 300)))
            _assert_columns(nodes)


def test_store_is_replaced_when_it_misses_most_or_grows() -> None:
    rng = random.Random(9)
    first = node_infos(rng, 100)
    col.columns_of(first)
    store = col._store
    assert {id(ni) for ni in store.held[-100:]} == {id(ni) for ni in first}
    other = node_infos(rng, 100)  # another cluster: most NodeInfos unknown
    _assert_columns(other)
    assert col._store is not store
    assert {id(ni) for ni in col._store.held} == {id(ni) for ni in other}
    grown = col._store
    for _ in range(40):  # a few new NodeInfos at a time are added to the store
        other = [*other[:-2], node_info(rng, 0), node_info(rng, 1)]
        _assert_columns(other)
    assert col._store is grown and len(grown.held) == 180
    for _ in range(2200):  # until it holds more than 4 lists and 4096 NodeInfos
        other = [*other[:-2], node_info(rng, 0), node_info(rng, 1)]
        col.columns_of(other)
    assert col._store is not grown and len(col._store.held) <= 4 * 100 + 4096
    _assert_columns(other)


def test_store_is_replaced_for_a_short_list_it_holds() -> None:
    """A store far larger than the list asked of it is replaced even when it holds the
    whole list (a few nodes after a large cluster)."""
    rng = random.Random(11)
    large = node_infos(rng, 5000, edges=False)
    col.columns_of(large)
    store = col._store
    _assert_columns(large[:10])
    assert col._store is not store and len(col._store.held) == 10


@pytest.mark.parametrize("odd", [None, -1, col.NO_WRAP, 2**63 - 1, 2**63, 2**64, -(2**63) - 1])
def test_rows_block_is_row_values(odd) -> None:
    """The block read at once (numpy checks and derives) equals the nodes read one by one,
    with an odd value or none among realistic ones (numpy's int64 array or not)."""
    rng = random.Random(13)
    nodes = node_infos(rng, col._PENDING_LIMIT + 1, edges=False)  # read at once
    if odd is not None:
        nodes.append(NodeInfo(node("odd", cpu=odd), 50, []))
        nodes.append(NodeInfo(node("zero", cpu=0, memory=0), 51, []))
    fits_int64 = odd is None or -(2**63) <= odd < 2**63
    assert (col._read_all(nodes) is not None) == fits_int64  # else node by node
    block, plain = col._rows_block(nodes)
    rows = [col.row_values(ni) for ni in nodes]
    assert block.T.tolist() == [list(values) for values, _ in rows]
    assert plain.tolist() == [p for _, p in rows]


def test_an_announced_sublist_is_answered_from_its_list() -> None:
    """A sublist announced by expect_sublist is answered from its list's rows, and only the
    list it names: another list of the same length is looked up."""
    rng = random.Random(17)
    nodes = node_infos(rng, 200)
    cols = col.columns_of(nodes)
    positions = np.array([k for k in range(200) if rng.random() < 0.7])
    col.expect_sublist(cols, positions)
    store = col._store
    sublist = [nodes[k] for k in positions.tolist()]
    got = _assert_columns(sublist)
    assert got.store is store and got.rows.tolist() == cols.rows[positions].tolist()
    other = node_infos(rng, len(positions))  # same length, other NodeInfos
    col.expect_sublist(cols, positions)
    _assert_columns(other)


@pytest.mark.parametrize("seed", range(4))
def test_columns_at_view_indexes_follow_successive_views(seed: int) -> None:
    """A Score's list, a view's nodes at given indexes, has its own columns, as the view
    follows a queue run (a few NodeInfos replaced, a view of another length, the store
    replaced meanwhile); indexes that do not name the list's NodeInfos are not trusted."""
    rng = random.Random(seed)
    view = node_infos(rng, 300)
    for step in range(40):
        roll = rng.random()
        if roll < 0.6:  # a queue step
            view = list(view)
            for _ in range(rng.choice((1, 1, 2, 20))):
                view[rng.randrange(len(view))] = node_info(rng, 1000 + step)
        elif roll < 0.7:
            view = node_infos(rng, rng.choice((150, 300)))
        elif roll < 0.8:
            col.columns_of(node_infos(rng, 400))  # another cluster: the store replaced
        indexes = np.flatnonzero([rng.random() < 0.8 for _ in view])
        nodes = [view[i] for i in indexes.tolist()]
        _assert_columns(nodes, col.columns_at(view, nodes, indexes))
        shifted = np.roll(indexes, 1)
        _assert_columns(nodes, col.columns_at(view, nodes, shifted))
        _assert_columns(nodes[:-1], col.columns_at(view, nodes[:-1], indexes))
        _assert_columns(nodes, col.columns_at(view, nodes, indexes + len(view)))
