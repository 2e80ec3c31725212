"""A pod nominated to a node where a lower-priority victim is already being preempted is not
eligible to preempt again; the DisruptionTarget condition comes from ingest."""

from service.engine.objects import Cluster
from service.engine.scheduler.preemption import pod_eligible_to_preempt_others
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object, snapshot_from_objects
from tests.conftest import kube_list, node, pod


def _victim(reason: str) -> dict:
    victim = pod("victim", "n1", cpu="1", priority=1)
    victim["metadata"]["deletionTimestamp"] = "2026-11-20T09:59:00Z"
    victim["status"]["conditions"] = [
        {"type": "Ready", "status": "False"},
        {"type": "DisruptionTarget", "status": "True", "reason": reason},
    ]
    return victim


def _eligible(reason: str) -> bool:
    cluster = Cluster(snapshot_from_objects(kube_list(node("n1"), _victim(reason))["items"]))
    preemptor = pod("high", cpu="2", priority=100)
    preemptor["status"]["nominatedNodeName"] = "n1"
    eligible, _ = pod_eligible_to_preempt_others(
        scheduler_view(cluster, settings=DEFAULT_SETTINGS), pod_from_object(preemptor), None
    )
    return eligible


def test_victim_terminating_by_preemption_blocks():
    assert _eligible("PreemptionByScheduler") is False


def test_victim_terminating_for_another_reason_does_not_block():
    assert _eligible("DeletionByTaintManager") is True
