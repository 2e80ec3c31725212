"""zones.py on its own: the disruption controller's zones come and go with their nodes."""

from __future__ import annotations

from service.engine.nodelifecycle.config import NodeLifecycleConfig
from service.engine.nodelifecycle.zones import DisruptionController


def test_zone_with_only_excluded_nodes_is_dropped_and_recreated():
    dc = DisruptionController(NodeLifecycleConfig())
    dc.ensure_zone("z")
    dc.handle_disruption({}, 0, lambda: None, lambda: None)
    assert "z" not in dc.zone_states
    assert dc.ensure_zone("z")  # a fresh queue next pass
