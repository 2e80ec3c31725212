"""NodeUnschedulable's batch (FiltersNodes) held to its Filter node by node."""

from __future__ import annotations

import pytest

from service.engine.objects import Pod, Toleration
from service.engine.scheduler.framework import CycleState
from service.engine.scheduler.plugins.node_unschedulable import NodeUnschedulable
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.scheduler.plugins.node_batches import check_batches


@pytest.mark.parametrize("seed", range(16))
def test_batch_equals_per_node(seed):
    check_batches("NodeUnschedulable", seed)


def test_a_pod_tolerating_the_unschedulable_taint_passes_every_node_unfiltered():
    plugin = NodeUnschedulable(settings=DEFAULT_SETTINGS)
    tol = Toleration(key="node.kubernetes.io/unschedulable", operator="Exists")
    assert not plugin.can_reject(
        CycleState(Pod("d", "p", tolerations=(tol,)), None, DEFAULT_SETTINGS)
    )
    assert plugin.can_reject(CycleState(Pod("d", "p"), None, DEFAULT_SETTINGS))
