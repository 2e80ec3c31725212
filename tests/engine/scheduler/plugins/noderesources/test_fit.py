"""NodeResourcesFit's batches (fit.py ``filter_nodes``, ``score_nodes``) give its per-node
Filter and Score, status for status and score for score, on random nodes around every edge
of the batch's exact range, for every scoring strategy and both unresolvable rules."""

from __future__ import annotations

import dataclasses
import random

import pytest

from service.engine.scheduler.framework import CycleState
from service.engine.scheduler.plugins.noderesources import columns as col
from service.engine.scheduler.plugins.noderesources import fit as fit_module
from service.engine.scheduler.plugins.noderesources.fit import NodeResourcesFit
from service.engine.scheduler.plugins.noderesources.resource_allocation import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    ResourceSpec,
    ScoringError,
)
from service.engine.scheduler.profile import NodeResourcesFitArgs, ScoringStrategy
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.scheduler.helpers import pod
from tests.engine.scheduler.plugins.noderesources.random_nodes import GPU, incoming, node_infos

CPU_MEM = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
STRATEGIES = [
    pytest.param(ScoringStrategy(), id="least-default"),
    pytest.param(
        ScoringStrategy(LEAST_ALLOCATED, (ResourceSpec("memory", 3), ResourceSpec("cpu", 100))),
        id="least-weighted",
    ),
    pytest.param(
        ScoringStrategy(
            LEAST_ALLOCATED,
            (*CPU_MEM, ResourceSpec("ephemeral-storage", 2), ResourceSpec(GPU, 5)),
        ),
        id="least-four",
    ),
    pytest.param(ScoringStrategy(MOST_ALLOCATED, CPU_MEM), id="most"),
    pytest.param(
        ScoringStrategy(REQUESTED_TO_CAPACITY_RATIO, CPU_MEM, ((0, 10), (100, 0))),
        id="ratio-down",
    ),
    pytest.param(
        ScoringStrategy(
            REQUESTED_TO_CAPACITY_RATIO,
            (ResourceSpec("cpu", 2), ResourceSpec("memory", 3)),
            ((0, 0), (30, 7), (50, 3), (100, 10)),
        ),
        id="ratio-broken",
    ),
    pytest.param(
        ScoringStrategy(REQUESTED_TO_CAPACITY_RATIO, CPU_MEM, ((0, 1), (1, 3), (3, 5))),
        id="ratio-rounding",
    ),
]


_DEFAULT_STRATEGY = ScoringStrategy()


def _plugin(strategy: ScoringStrategy = _DEFAULT_STRATEGY, unresolvable: bool = True):
    settings = dataclasses.replace(
        DEFAULT_SETTINGS, fit_unresolvable_beyond_allocatable=unresolvable
    )
    return NodeResourcesFit(NodeResourcesFitArgs(scoring_strategy=strategy), settings=settings)


def _state(plugin: NodeResourcesFit, p, nodes) -> CycleState:
    state = CycleState(p, None, plugin.settings)
    plugin.pre_filter(state, nodes)
    plugin.pre_score(state, nodes)
    return state


@pytest.mark.parametrize("edges", [True, False])
@pytest.mark.parametrize("unresolvable", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_filter_nodes_is_filter(seed: int, unresolvable: bool, edges: bool) -> None:
    rng = random.Random(seed)
    plugin = _plugin(unresolvable=unresolvable)
    nodes = node_infos(rng, 400, edges)
    plain = col.columns_of(nodes).plain.mean()
    assert 0.3 < plain < 0.9 if edges else plain == 1  # both paths on every list
    batches = 0
    for _ in range(12):
        state = _state(plugin, incoming(rng), nodes)
        subset = [ni for ni in nodes if rng.random() < 0.9]
        for batch in (nodes, subset, nodes[:3], []):
            statuses = plugin.filter_nodes(state, batch)
            assert statuses == [plugin.filter(state, ni, ni) for ni in batch]
            # Score on the nodes passed: the sublist the batch announced (columns.py)
            passed = [ni for ni, s in zip(batch, statuses, strict=True) if s is None]
            assert list(plugin.score_nodes(state, passed)) == [
                plugin.score(state, ni, ni) for ni in passed
            ]
        batches += fit_module._batch_checks(state.read(plugin.name)) is not None
    assert batches >= 4


def test_filter_nodes_rejects_with_reasons_in_order() -> None:
    """Every shortfall, pods first; unresolvable only where a request exceeds allocatable."""
    rng = random.Random(7)
    plugin = _plugin()
    nodes = node_infos(rng, 600)
    p = pod("p", 4000, 2**34, extra={"ephemeral-storage": 2**30})
    state = _state(plugin, p, nodes)
    got = plugin.filter_nodes(state, nodes)
    assert got == [plugin.filter(state, ni, ni) for ni in nodes]
    reasons = {s.reasons for s in got if s is not None}
    codes = {s.code for s in got if s is not None}
    assert ("Too many pods", "Insufficient cpu", "Insufficient memory") in reasons
    assert len(reasons) > 6 and len(codes) == 2


def test_filter_nodes_without_prefilter_state_errors_per_node() -> None:
    rng = random.Random(1)
    plugin = _plugin()
    nodes = node_infos(rng, 5)
    state = CycleState(pod("p", 1, 1), None, plugin.settings)
    assert plugin.filter_nodes(state, nodes) == [plugin.filter(state, ni, ni) for ni in nodes]
    assert plugin.filter_nodes(state, nodes)[0].code == "Error"


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("edges", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_score_nodes_is_score(edges: bool, seed: int, strategy: ScoringStrategy) -> None:
    rng = random.Random(seed)
    plugin = _plugin(strategy)
    nodes = node_infos(rng, 400, edges)
    batches = 0
    for _ in range(10):
        state = _state(plugin, incoming(rng), nodes)
        subset = [ni for ni in nodes if rng.random() < 0.8]
        for batch in (nodes, subset, nodes[:1], []):
            assert list(plugin.score_nodes(state, batch)) == [
                plugin.score(state, ni, ni) for ni in batch
            ]
        prepared = state.read(fit_module._SCORE_KEY)
        batches += plugin.scorer.score_columns(prepared, col.columns_of(nodes)) is not None
    assert batches >= 3


def test_score_nodes_without_pre_score_computes_it() -> None:
    rng = random.Random(2)
    plugin = _plugin()
    nodes = node_infos(rng, 50)
    batch_state = CycleState(pod("p", 100, 2**20), None, plugin.settings)
    node_state = CycleState(pod("p", 100, 2**20), None, plugin.settings)
    assert list(plugin.score_nodes(batch_state, nodes)) == [
        plugin.score(node_state, ni, ni) for ni in nodes
    ]


def test_score_nodes_without_resources_raises_as_score() -> None:
    plugin = _plugin(ScoringStrategy(LEAST_ALLOCATED, ()))
    nodes = node_infos(random.Random(3), 3)
    state = _state(plugin, pod("p", 1, 1), nodes)
    with pytest.raises(ScoringError, match="resources not found"):
        plugin.score_nodes(state, nodes)
    assert list(plugin.score_nodes(state, [])) == []


@pytest.mark.parametrize("edges", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_filter_with_pods_patching_its_last_lists_is_filter(seed: int, edges: bool) -> None:
    """Pass 1's batch keeps its last array (``_pass_one_values``): lists that differ from
    the last ones in a few places (a NodeInfo, or only its pods, replaced), in many, or
    asked for another pod's resources answer as Filter node by node."""
    rng = random.Random(seed)
    plugin = _plugin()
    nodes, others = node_infos(rng, 40, edges), node_infos(rng, 40, edges)
    redone: list[int] = []
    array = plugin._pass_one_array
    plugin._pass_one_array = lambda ns, *rest: redone.append(len(ns)) or array(ns, *rest)
    for _ in range(40):
        state = _state(plugin, incoming(rng), nodes)
        infos, pods = list(nodes), list(nodes)
        for k in rng.sample(range(len(nodes)), rng.choice([0, 1, 2, 3, 20])):
            pods[k] = others[k]
            if rng.random() < 0.5:
                infos[k] = others[k]
        statuses = plugin.filter_with_pods(state, infos, pods)
        assert statuses == [
            plugin.filter(state, ni, ns) for ni, ns in zip(infos, pods, strict=True)
        ]
    assert any(0 < n < len(nodes) for n in redone)  # the patched path was taken
    assert any(n == len(nodes) for n in redone)  # and the whole one
