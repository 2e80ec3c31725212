"""NodeName's batch (FiltersNodes) held to its Filter node by node."""

from __future__ import annotations

import pytest

from service.engine.objects import Cluster, Node, Pod, Snapshot
from service.engine.scheduler.framework import CycleState
from service.engine.scheduler.plugins.node_name import NodeName
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.scheduler.plugins.node_batches import check_batches


@pytest.mark.parametrize("seed", range(16))
def test_batch_equals_per_node(seed):
    check_batches("NodeName", seed)


def test_batch_with_a_name_given_twice_and_none():
    """A list naming the wanted node twice passes it twice; a wanted name no node has
    rejects them all."""
    view = scheduler_view(
        Cluster(Snapshot(nodes=(Node(name="a"), Node(name="b")))), DEFAULT_SETTINGS
    )
    plugin = NodeName(settings=DEFAULT_SETTINGS)
    nodes = [view.nodes[1], view.nodes[0], view.nodes[1]]
    for wanted in ("b", "c", ""):
        state = CycleState(Pod("d", "p", node_name=wanted), view, DEFAULT_SETTINGS)
        assert plugin.filter_nodes(state, nodes) == [plugin.filter(state, ni, ni) for ni in nodes]
