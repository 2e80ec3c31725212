"""Which evicted pods their controllers recreate, and as what (engine/drain/recreation.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from service.engine.drain.recreation import recreated_copy, recreation_of
from service.ingest.kube import request_pod
from tests.engine.drain.helpers import owned


def _pod(kind, *, deleting=False, phase="Running"):
    obj = owned("p-1", "n1", kind, "owner", phase=phase)
    if deleting:
        obj["metadata"]["deletionTimestamp"] = "2026-11-20T09:00:00Z"
    return request_pod(obj)


@pytest.mark.parametrize(
    ("kind", "deleting", "phase", "recreated"),
    [
        ("ReplicaSet", False, "Running", True),
        ("StatefulSet", False, "Running", True),
        ("Job", False, "Pending", True),
        ("ReplicationController", False, "Running", True),
        ("ReplicaSet", True, "Running", False),  # already replaced when deletion began
        ("StatefulSet", True, "Running", True),  # recreated once gone, under its name
        ("ReplicaSet", False, "Succeeded", False),
        ("DaemonSet", False, "Running", False),
        ("FooOperator", False, "Running", False),
        (None, False, "Running", False),
    ],
)
def test_who_recreates_what(kind, deleting, phase, recreated):
    assert recreation_of(_pod(kind, deleting=deleting, phase=phase))[0] is recreated


def test_the_copy_is_pending_unbound_and_stamped_with_the_drain_time():
    original = _pod("ReplicaSet")
    moment = datetime(2026, 11, 20, 10, tzinfo=UTC)
    copy = recreated_copy(original, moment)
    assert copy.name.startswith("owner-") and len(copy.name) == len("owner-") + 5
    assert (copy.node_name, copy.phase, copy.conditions) == ("", "Pending", ())
    assert copy.creation_timestamp == moment and copy.uid != original.uid
    assert recreated_copy(original, moment).name == copy.name
