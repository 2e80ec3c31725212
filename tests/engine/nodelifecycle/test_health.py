"""health.py on its own: the health tracker's lease memory and grace period."""

from __future__ import annotations

from service.engine.nodelifecycle.clock import SECOND
from service.engine.nodelifecycle.config import NodeLifecycleConfig
from service.engine.nodelifecycle.health import (
    Condition,
    LeaseSeen,
    NodeHealthTracker,
    NodeWorkingCopy,
)


def _state(heartbeat: int) -> NodeWorkingCopy:
    return NodeWorkingCopy("n", conditions=[Condition("Ready", "True", heartbeat, 0)])


def test_tracker_forgets_the_lease_when_the_heartbeat_changes():
    # Go builds a new nodeHealthData without the lease when Ready.lastHeartbeatTime changes;
    # the next pass then treats the unchanged lease as new and resets the probe time.
    tracker = NodeHealthTracker(NodeLifecycleConfig())
    lease = LeaseSeen(0)
    tracker.try_update(_state(0), lease, 0)
    tracker.try_update(_state(10 * SECOND), lease, 10 * SECOND)
    assert tracker.data["n"].lease is None
    tracker.try_update(_state(10 * SECOND), lease, 55 * SECOND)
    assert tracker.data["n"].probe == 55 * SECOND


def test_tracker_marks_a_silent_node_unknown_after_the_grace():
    tracker = NodeHealthTracker(NodeLifecycleConfig())
    tracker.try_update(_state(0), None, 0)
    state = _state(0)
    result = tracker.try_update(state, None, 50 * SECOND)
    assert not result.posted and result.current.status == "True"
    result = tracker.try_update(state, None, 50 * SECOND + 1)
    assert result.posted and result.current.status == "Unknown"
    assert [c.type for c in state.conditions] == [
        "Ready",
        "MemoryPressure",
        "DiskPressure",
        "PIDPressure",
    ]
