"""NodePorts' batch (FiltersNodes) held to its Filter node by node."""

from __future__ import annotations

import pytest

from service.engine.objects import Pod
from service.engine.scheduler.framework import CycleState
from service.engine.scheduler.plugins.node_ports import NodePorts
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.scheduler.plugins.node_batches import check_batches


@pytest.mark.parametrize("seed", range(24))
def test_batch_equals_per_node(seed):
    check_batches("NodePorts", seed)


def test_batch_without_its_prefilter_state_errors_on_every_node():
    """PreFilter disabled: upstream's Filter errors, and so does the batch, on each node."""
    plugin = NodePorts(settings=DEFAULT_SETTINGS)
    state = CycleState(Pod("d", "p"), None, DEFAULT_SETTINGS)
    assert plugin.filter_nodes(state, []) == []
    out = plugin.filter_nodes(state, [object(), object()])  # type: ignore[list-item]
    assert [s.code for s in out] == ["Error", "Error"]
