"""Capacity's replicas (engine/scheduler/capacity.py): their names and UIDs."""

from __future__ import annotations

import uuid

from service.engine.scheduler.capacity import _UID_NAMESPACE, replica
from tests.engine.scheduler.helpers import pod


def test_a_replica_is_named_after_its_template_with_a_uuid5_uid() -> None:
    template = pod("web", 100, uid="uid-web", namespace="team")
    for n in (1, 2, 10, 91616):
        r = replica(template, n)
        assert r.name == f"web-{n}"
        assert r.uid == str(uuid.uuid5(_UID_NAMESPACE, f"team/web/uid-web/{n}"))
        assert not r.node_name and not r.nominated_node_name and r.phase == "Pending"
