"""Priority admission applied to request pods before any decision."""

from __future__ import annotations

import pytest

from service.decisions.base import DecisionInputError
from service.decisions.priority import admit_priority
from service.engine.objects import Cluster
from service.ingest.kube import pod_from_object
from tests.conftest import snapshot_from_objects

CLASSES = [
    {
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
        "preemptionPolicy": "Never",
    },
    {"kind": "PriorityClass", "metadata": {"name": "normal"}, "value": 10, "globalDefault": True},
]


def _pod(**spec):
    return pod_from_object(
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], **spec}}
    )


@pytest.mark.parametrize(
    ("spec", "classes", "priority", "policy", "class_name"),
    [
        ({"priorityClassName": "high"}, CLASSES, 1000, "Never", "high"),
        ({}, CLASSES, 10, "PreemptLowerPriority", "normal"),
        ({}, [], 0, "PreemptLowerPriority", ""),
        (
            {"priorityClassName": "system-node-critical"},
            [],
            2000001000,
            "PreemptLowerPriority",
            "system-node-critical",
        ),
        ({"priority": 5, "priorityClassName": "high"}, CLASSES, 5, None, "high"),
    ],
    ids=["named-class", "global-default", "no-class", "built-in-system-class", "already-resolved"],
)
def test_admit_priority(spec, classes, priority, policy, class_name):
    cluster = Cluster(snapshot_from_objects(classes))
    pod = admit_priority(_pod(**spec), cluster)
    assert (pod.priority, pod.preemption_policy, pod.priority_class_name) == (
        priority,
        policy,
        class_name,
    )


def test_unknown_class_names_the_field():
    with pytest.raises(DecisionInputError) as err:
        admit_priority(_pod(priorityClassName="nope"), Cluster(snapshot_from_objects(CLASSES)))
    assert err.value.path == "pod.spec.priorityClassName"
