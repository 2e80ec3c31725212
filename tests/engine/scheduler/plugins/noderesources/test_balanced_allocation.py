"""NodeResourcesBalancedAllocation's batch (``score_nodes``) gives its per-node Score on
random nodes around every edge of the batch's exact range, before and after v1.36's change
of score, for the default resources and others (which take the per-node path)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from service.engine.scheduler.framework import SKIP, CycleState
from service.engine.scheduler.plugins.noderesources import columns as col
from service.engine.scheduler.plugins.noderesources.balanced_allocation import (
    NodeResourcesBalancedAllocation,
)
from service.engine.scheduler.plugins.noderesources.resource_allocation import ResourceSpec
from service.engine.scheduler.profile import (
    DEFAULT_RESOURCES,
    NodeResourcesBalancedAllocationArgs,
)
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.scheduler.helpers import pod
from tests.engine.scheduler.plugins.noderesources.random_nodes import GPU, incoming, node_infos

RESOURCES = [
    pytest.param(DEFAULT_RESOURCES, id="cpu-memory"),
    pytest.param((ResourceSpec("memory", 1), ResourceSpec("cpu", 1)), id="memory-cpu"),
    pytest.param(
        (*DEFAULT_RESOURCES, ResourceSpec("ephemeral-storage", 1), ResourceSpec(GPU, 1)),
        id="four",
    ),
]


def _plugin(resources, scores_change: bool) -> NodeResourcesBalancedAllocation:
    settings = dataclasses.replace(
        DEFAULT_SETTINGS, balanced_allocation_scores_change=scores_change
    )
    args = NodeResourcesBalancedAllocationArgs(tuple(resources))
    return NodeResourcesBalancedAllocation(args, settings=settings)


@pytest.mark.parametrize("resources", RESOURCES)
@pytest.mark.parametrize("scores_change", [False, True])
@pytest.mark.parametrize("edges", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_score_nodes_is_score(edges: bool, seed: int, scores_change: bool, resources) -> None:
    rng = random.Random(seed)
    plugin = _plugin(resources, scores_change)
    nodes = node_infos(rng, 400, edges)
    scored = batches = 0
    for _ in range(10):
        state = CycleState(incoming(rng), None, plugin.settings)
        if plugin.pre_score(state, nodes).code == SKIP:
            continue
        subset = [ni for ni in nodes if rng.random() < 0.8]
        for batch in (nodes, subset, nodes[:1], []):
            assert list(plugin.score_nodes(state, batch)) == [
                plugin.score(state, ni, ni) for ni in batch
            ]
        scored += 1
        prepared = state.read(plugin.name)
        batches += plugin.scorer.score_columns(prepared, col.columns_of(nodes)) is not None
    assert scored
    if resources is DEFAULT_RESOURCES:
        assert batches >= 3
    else:
        assert batches == 0  # only cpu then memory has a batch


def test_score_nodes_without_pre_score_computes_it() -> None:
    plugin = _plugin(DEFAULT_RESOURCES, False)
    nodes = node_infos(random.Random(5), 50)
    batch_state = CycleState(pod("p", 100, 2**20), None, plugin.settings)
    node_state = CycleState(pod("p", 100, 2**20), None, plugin.settings)
    assert list(plugin.score_nodes(batch_state, nodes)) == [
        plugin.score(node_state, ni, ni) for ni in nodes
    ]
