"""DynamicResources' PreFilter and Filter statuses (the pod's claims resolved, their
classes checked, allocated claims kept to their nodes), with the scheduler's messages."""

from __future__ import annotations

import copy

from service.engine.objects import Cluster
from service.engine.scheduler.placement import place
from service.engine.scheduler.preemption import preempt
from service.engine.version import settings_for
from service.ingest.kube import pod_from_object
from tests.conftest import node, pod, snapshot_from_objects
from tests.engine.dra.test_allocator import CLASS, GPU, _claim, _gpu, _slice

UNRESOLVABLE = "UnschedulableAndUnresolvable"
WANT = _claim([{"name": "r", "exactly": {"deviceClassName": "gpu"}}])


def _incoming(claims: list[dict], statuses: list[dict] | None = None, cpu: str = "100m") -> dict:
    p = pod("in", cpu=cpu)
    p["metadata"]["uid"] = "uid-in"
    p["spec"]["resourceClaims"] = claims
    if statuses is not None:
        p["status"]["resourceClaimStatuses"] = statuses
    return p


def _place(objects: list[dict], incoming: dict):
    cluster = Cluster(snapshot_from_objects([CLASS, *objects]))
    return place(cluster, pod_from_object(incoming), settings=settings_for("1.35"))


def _rejected_everywhere(out) -> str:
    assert out.selected_node is None
    assert {n.status.code for n in out.nodes} == {UNRESOLVABLE}
    (reasons,) = {tuple(n.reasons) for n in out.nodes}
    return reasons[0]


def test_a_pod_without_claims_is_skipped() -> None:
    out = _place([node("a")], pod("in", cpu="100m"))
    assert out.selected_node == "a"
    assert out.nodes[0].allocation is None


def test_a_template_claim_not_yet_generated() -> None:
    incoming = _incoming([{"name": "c", "resourceClaimTemplateName": "tmpl"}])
    out = _place([node("a"), node("b")], incoming)
    assert _rejected_everywhere(out) == 'pod "default/in": ResourceClaim not created yet'
    assert (
        out.message == '0/2 nodes are available: pod "default/in": ResourceClaim not created yet.'
    )


def test_a_generated_claim_must_be_owned_by_the_pod() -> None:
    claim = copy.deepcopy(WANT)
    claim["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "other", "uid": "uid-other", "controller": True}
    ]
    incoming = _incoming(
        [{"name": "c", "resourceClaimTemplateName": "tmpl"}],
        [{"name": "c", "resourceClaimName": "want"}],
    )
    out = _place([node("a"), _slice("a", [_gpu("g0")]), claim], incoming)
    assert _rejected_everywhere(out) == (
        "ResourceClaim default/want was not created for pod default/in (pod is not owner)"
    )
    claim["metadata"]["ownerReferences"][0]["uid"] = "uid-in"
    out = _place([node("a"), _slice("a", [_gpu("g0")]), claim], incoming)
    assert out.selected_node == "a"
    assert [d.device for d in out.nodes[0].allocation["want"]] == ["g0"]


def test_a_status_without_a_claim_name_needs_no_claim() -> None:
    incoming = _incoming([{"name": "c", "resourceClaimTemplateName": "tmpl"}], [{"name": "c"}])
    out = _place([node("a")], incoming)
    assert out.selected_node == "a"


def test_a_missing_device_class() -> None:
    claim = _claim([{"name": "r", "firstAvailable": [{"name": "s", "deviceClassName": "nope"}]}])
    incoming = _incoming([{"name": "c", "resourceClaimName": "want"}])
    out = _place([node("a"), claim], incoming)
    assert _rejected_everywhere(out) == "request r/s: device class nope does not exist"


def test_an_allocated_claim_keeps_the_pod_on_its_nodes_and_can_be_shared() -> None:
    held = copy.deepcopy(WANT)
    held["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "r", "driver": GPU, "pool": "a", "device": "g0"}]},
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}
                ]
            },
        },
        "reservedFor": [{"resource": "pods", "name": "other", "uid": "uid-other"}],
    }
    incoming = _incoming([{"name": "c", "resourceClaimName": "want"}])
    out = _place([node("a"), node("b"), _slice("a", [_gpu("g0")]), held], incoming)
    a, b = out.nodes
    assert a.feasible and a.allocation is None  # nothing left to allocate
    assert (b.status.code, b.reasons) == (UNRESOLVABLE, ["resourceclaim not available on the node"])


def test_preemption_never_frees_devices() -> None:
    """Evicting the pod holding the GPU does not deallocate its claim: the node stays
    unresolvable for DynamicResources, so it is no preemption candidate."""
    held = _claim([{"name": "r", "exactly": {"deviceClassName": "gpu"}}], name="held")
    held["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "r", "driver": GPU, "pool": "a", "device": "g0"}]}
        }
    }
    holder = pod("holder", "a", cpu="1")
    holder["spec"]["resourceClaims"] = [{"name": "c", "resourceClaimName": "held"}]
    incoming = _incoming([{"name": "c", "resourceClaimName": "want"}], cpu="2")
    incoming["spec"]["priority"] = 1000
    cluster = Cluster(
        snapshot_from_objects(
            [CLASS, node("a", cpu="2"), _slice("a", [_gpu("g0")]), held, WANT, holder]
        )
    )
    out = preempt(cluster, pod_from_object(incoming), settings=settings_for("1.35"))
    assert out.candidates == []
    assert out.nominated_node_name in (None, "")


def test_score_batch_and_normalize_for_a_pod_without_claims():
    """No PreScore upstream: Score runs, 0 on every node, answered at once."""
    from service.engine.objects import Pod
    from service.engine.scheduler.framework import CycleState
    from service.engine.scheduler.plugins.dynamic_resources import DynamicResources
    from service.engine.scheduler.snapshot import scheduler_view

    settings = settings_for("1.35")
    view = scheduler_view(Cluster(snapshot_from_objects([node("a"), node("b")])), settings)
    plugin = DynamicResources(settings=settings)
    state = CycleState(Pod("d", "p"), view, settings)
    assert list(plugin.score_nodes(state, view.nodes)) == [0, 0]  # PreFilter did not run
    _, status = plugin.pre_filter(state, view.nodes)
    assert status.is_skip
    assert list(plugin.score_nodes(state, view.nodes)) == [
        plugin.score(state, ni, ni) for ni in view.nodes
    ]
    scores = [0, 0]
    plugin.normalize_score(state, view.nodes, scores)
    assert scores == [0, 0]
