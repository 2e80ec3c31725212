"""Score columns as int64 arrays (runtime.py ``Column``): every step that takes one gives the
answers of the list code it replaced: selectHost's pick and ties (seeded reservoir sampling
included, draw for draw), the weighted totals and the invalid-score check, and the
NormalizeScore of DefaultNormalizeScore, PodTopologySpread and InterPodAffinity."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest

from service.engine.scheduler import runtime
from service.engine.scheduler.framework import MAX_NODE_SCORE
from service.engine.scheduler.placement import place
from service.engine.scheduler.plugins import pod_topology_spread as pts
from service.engine.scheduler.plugins.helper import (
    default_normalize_score,
    give_node_indexes,
    node_indexes,
)
from service.engine.scheduler.plugins.interpod_affinity import InterPodAffinity
from service.engine.scheduler.queue import pick_host, select_host
from service.engine.scheduler.runtime import SAFE_SCORE, NodeScores, as_column, invalid_score
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.scheduler.plugins.node_batches import random_cluster, random_pod


def _pick_host_lists(names, totals, rng):
    """selectHost as the list code did it: max, first index, ties, then node-by-node
    reservoir sampling over every node."""
    if not names:
        return None, ()
    best = max(totals)
    first = totals.index(best)
    if len(names) < 2 or totals.count(best) < 2:
        return names[first], ()
    ties = tuple(n for n, t in zip(names, totals, strict=True) if t == best)
    if rng is None:
        return names[first], ties
    selected, top, count = names[0], totals[0], 1
    for name, total in zip(names[1:], totals[1:], strict=True):
        if total > top:
            selected, top, count = name, total, 1
        elif total == top:
            count += 1
            if rng.randrange(count) == 0:
                selected = name
    return selected, ties


def _totals(rng: random.Random, count: int) -> list[int]:
    """Totals with many ties, below and at the top (a few distinct values)."""
    values = rng.sample(range(0, 400), rng.randint(1, 6))
    return [rng.choice(values) for _ in range(count)]


@pytest.mark.parametrize("seed", range(40))
def test_pick_host_on_arrays_is_the_list_code(seed: int) -> None:
    rng = random.Random(seed)
    for count in (0, 1, 2, 3, 7, 150):
        totals = _totals(rng, count)
        names = [f"n{i}" for i in range(count)]
        nodes = [SimpleNamespace(name=name) for name in names]
        assert pick_host(nodes, np.array(totals, np.int64), None) == _pick_host_lists(
            names, totals, None
        )
        assert pick_host(nodes, totals, None) == _pick_host_lists(names, totals, None)
        ours, theirs = random.Random(seed), random.Random(seed)
        assert pick_host(nodes, np.array(totals, np.int64), ours) == _pick_host_lists(
            names, totals, theirs
        )
        assert ours.getstate() == theirs.getstate()  # the same draws, no more, no fewer


def _scores(columns: dict[str, list[int]], weights: dict[str, int], arrays: bool) -> NodeScores:
    normalized = {p: as_column(c) if arrays else c for p, c in columns.items()}
    return NodeScores(list(columns), weights, dict(normalized), normalized)


@pytest.mark.parametrize("seed", range(10))
def test_totals_and_invalid_scores_on_arrays_are_the_list_code(seed: int) -> None:
    rng = random.Random(seed)
    count = 300
    nodes = [SimpleNamespace(name=f"n{i}") for i in range(count)]
    columns = {f"P{j}": [rng.randint(0, MAX_NODE_SCORE) for _ in range(count)] for j in range(4)}
    weights = {p: rng.randint(1, 5) for p in columns}
    if seed % 2:  # an invalid score, and one beyond int64 in the totals' Python ints
        columns["P1"][rng.randrange(count)] = -7
        columns["P2"][rng.randrange(count)] = 2**70
    plain, arrays = _scores(columns, weights, False), _scores(columns, weights, True)
    want = [sum(weights[p] * columns[p][i] for p in columns) for i in range(count)]
    got = arrays.totals(count)
    assert isinstance(got, np.ndarray) != bool(seed % 2)
    assert list(got) == want == plain.totals(count)
    assert invalid_score(arrays, nodes) == invalid_score(plain, nodes)
    if seed % 2:
        assert invalid_score(arrays, nodes) is not None
    assert arrays.invalid() == plain.invalid() == (["P1", "P2"] if seed % 2 else [])


def test_as_column() -> None:
    assert as_column([1, 2]) == [1, 2]  # few nodes: a list
    many = list(range(150))
    assert isinstance(as_column(many), np.ndarray) and as_column(many).tolist() == many
    for big in (SAFE_SCORE + 1, 2**63 - 1, 2**70, -(2**64)):  # beyond SAFE_SCORE: Python ints
        column = as_column([*many, big])
        assert isinstance(column, list) and column[-1] == big
        column = as_column(np.array([*many, min(max(big, -(2**63)), 2**63 - 1)], np.int64))
        assert isinstance(column, list)


@pytest.mark.parametrize("seed", range(20))
def test_normalize_scores_on_arrays_are_the_list_code(seed: int) -> None:
    rng = random.Random(seed)
    count = rng.choice([1, 2, 150])
    span = rng.choice([0, 3, 1000, SAFE_SCORE])
    low = rng.choice([0, -span])
    raw = [rng.randint(low, span) for _ in range(count)]
    nodes = [SimpleNamespace(name=f"n{i}") for i in range(count)]
    ignored = {f"n{i}" for i in range(count) if rng.random() < 0.2}
    spread = SimpleNamespace(ignored=ignored, nodes=None, tokens=None, present=None)
    state = SimpleNamespace(data={pts._SCORE_KEY: spread}, view=None)
    for normalize in (
        lambda s: default_normalize_score(MAX_NODE_SCORE, False, s),
        lambda s: default_normalize_score(MAX_NODE_SCORE, True, s),
        lambda s: pts.PodTopologySpread.normalize_score(None, state, nodes, s),
        lambda s: InterPodAffinity.normalize_score(None, state, nodes, s),
    ):
        plain, column = list(raw), np.array(raw, np.int64)
        normalize(plain)
        normalize(column)
        assert column.tolist() == plain


def test_node_indexes_given_for_that_list_only() -> None:
    nodes = [SimpleNamespace(index=i) for i in (4, 1, 7)]
    state = SimpleNamespace(data={})
    assert node_indexes(state, nodes).tolist() == [4, 1, 7]  # read off the nodes
    give_node_indexes(state, nodes, np.array([4, 1, 7]))
    assert node_indexes(state, nodes) is state.data["helper/nodeIndexes"][1]
    assert node_indexes(state, nodes[:2]).tolist() == [4, 1]  # another list: read


@pytest.mark.parametrize("seed", range(6))
def test_place_on_columns_is_place_node_by_node(seed: int, monkeypatch) -> None:
    """place with every cycle batched (array columns, whatever the number of feasible nodes)
    and with the batches off (lists): the same records, their scores and totals plain ints
    (what the JSON holds), the same choice; and the queue's pick equals it."""
    rng = random.Random(seed)
    cluster = random_cluster(rng, 150)
    pods = [random_pod(rng, 150, i) for i in range(6)]
    monkeypatch.setattr(runtime, "BATCH_FROM_NODES", 0)
    batched = [place(cluster, pod, settings=DEFAULT_SETTINGS) for pod in pods]
    monkeypatch.setattr(runtime, "BATCH_FROM_NODES", 10**9)
    plain = [place(cluster, pod, settings=DEFAULT_SETTINGS) for pod in pods]
    for ours, theirs in zip(batched, plain, strict=True):
        assert ours.nodes == theirs.nodes
        assert ours.selected_node == theirs.selected_node
        assert ours.message == theirs.message
        for entry in ours.nodes:
            values = [*(entry.scores or {}).values(), *(entry.raw_scores or {}).values()]
            assert all(type(v) is int for v in values)
            assert entry.total is None or type(entry.total) is int
        if ours.selected_node is not None and not ours.nominated_node_chosen:
            assert select_host(ours, None)[0] == ours.selected_node
            assert select_host(ours, None) == select_host(theirs, None)
