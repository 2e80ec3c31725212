"""Decision kind "placement" (service.decisions.placement): request validation naming the
field, scoring configuration, holds, and the contract's result shape."""

from __future__ import annotations

import pytest
from marshmallow import ValidationError

from service.api.errors import flatten_messages
from service.decisions import KINDS
from service.decisions.placement import decide  # noqa: F401 - registers the kind
from service.decisions.run import compute
from service.engine.objects import Cluster
from tests.conftest import kube_list, node, pod, snapshot_from_objects


def _node(name, cpu="4", memory="8Gi", pods="110", **spec):
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "spec": spec,
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": pods},
            "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
        },
    }


def _pod(name, cpu=None, memory=None, *, node=None, priority=0, owner=None, deleting=False):
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}-{node}"},
        "spec": {
            "priority": priority,
            "containers": [{"name": "c", "resources": {"requests": requests}}],
        },
        "status": {"phase": "Running" if node else "Pending"},
    }
    if node:
        body["spec"]["nodeName"] = node
    if owner:
        body["metadata"]["ownerReferences"] = [owner]
    if deleting:
        body["metadata"]["deletionTimestamp"] = "2026-11-20T09:59:00Z"
    return body


CLUSTER = [
    _node("a"),
    _node("b"),
    _node("c", unschedulable=True),
    _pod("busy", "2", "6Gi", node="a"),
]


def _place(params, objects=CLUSTER):
    return compute(KINDS["placement"], Cluster(snapshot_from_objects(list(objects))), params)


def test_default_profile_result() -> None:
    out = _place({"pod": _pod("p", "1", "1Gi")})
    r = out.result
    assert r["selectedNode"] == "b"
    assert [n["nodeName"] for n in r["nodes"]] == ["a", "b", "c"]
    a, b, c = r["nodes"]
    assert a == {
        "nodeName": "a",
        "feasible": True,
        "reasons": [],
        # TaintToleration: no PreferNoSchedule taint (raw 0) normalizes, reversed, to 100
        # DynamicResources scores 0 for a pod without claims (it has no PreScore to skip)
        "scores": {
            "TaintToleration": 100,
            "NodeResourcesFit": 18,
            "DynamicResources": 0,
            # the change the pod makes to a's balance (87 -> 93): 50 + (50 + 93 - 87) / 2
            # (1.36 on, kubernetes#135573; 93 up to 1.35)
            "NodeResourcesBalancedAllocation": 78,
            "ImageLocality": 0,
        },
        "rawScores": {"TaintToleration": 0},
        "total": 3 * 100 + 18 + 78,
    }
    assert b["total"] == 300 + 81 + 71  # b's balance 100 -> 93: 50 + (50 + 93 - 100) / 2
    assert r["weights"] == {
        "TaintToleration": 3,
        "NodeResourcesFit": 1,
        "DynamicResources": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }
    assert c == {
        "nodeName": "c",
        "feasible": False,
        "reasons": ["node(s) were unschedulable"],
        "scores": None,
        "total": None,
    }
    assert r["notModelled"] == []
    assert out.subjects.node_names == ["b"]
    assert out.subjects.pods == ["default/p"]


def test_scoring_configuration() -> None:
    scoring = {
        "strategy": "RequestedToCapacityRatio",
        "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}],
        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
        "balancedAllocation": False,
    }
    r = _place({"pod": _pod("p", "1", "1Gi"), "scoring": scoring}).result
    # a: cpu 75 (x3), memory 87: (225 + 87) / 4 = 78; b: cpu 25 (x3), memory 12: 87 / 4 = 21.75
    assert [n["scores"]["NodeResourcesFit"] for n in r["nodes"][:2]] == [78, 22]
    assert "NodeResourcesBalancedAllocation" not in r["weights"]
    assert r["selectedNode"] == "a"


def test_statefulset_hold_through_the_api() -> None:
    owner = {"kind": "StatefulSet", "name": "web", "uid": "sts", "controller": True}
    objects = [
        _node("n1"),
        _pod("db", "2", "1Gi", node="n1", priority=100),
        _pod("web-0", "2", "1Gi", node="n1", priority=100, owner=owner, deleting=True),
    ]
    deployment = _pod("api", "2", "1Gi")
    r = _place({"pod": deployment, "holdStatefulSetUpgrades": True}, objects).result
    assert r["nodes"][0]["reasons"] == [
        "Insufficient cpu",
        "node(s) had resources held for default/web-0",
    ]
    replacement = _pod("web-0", "2", "1Gi", priority=100, owner=owner)
    r = _place({"pod": replacement, "holdStatefulSetUpgrades": True}, objects).result
    assert r["selectedNode"] == "n1"
    assert "free for this pod, its replacement" in r["message"]
    r = _place({"pod": replacement}, objects).result
    assert r["selectedNode"] is None


@pytest.mark.parametrize(
    ("params", "paths"),
    [
        pytest.param({"pod": _pod("p", "1", node="a")}, ["pod.spec.nodeName"], id="bound pod"),
        pytest.param(
            {"pod": _pod("p", "1"), "scoring": {"strategy": "Fancy"}},
            ["scoring.strategy"],
            id="unknown strategy",
        ),
        pytest.param(
            {"pod": _pod("p", "1"), "scoring": {"resources": [{"name": "cpu", "weight": 0}]}},
            ["scoring.resources[0].weight"],
            id="weight 0",
        ),
        pytest.param(
            {"pod": _pod("p", "1"), "scoring": {"resources": [{"name": "cpu", "weight": 101}]}},
            ["scoring.resources[0].weight"],
            id="weight 101",
        ),
        pytest.param(
            {"pod": _pod("p", "1"), "scoring": {"resources": []}},
            ["scoring.resources"],
            id="no resources",
        ),
        pytest.param(
            {"pod": _pod("p", "1"), "scoring": {"strategy": "RequestedToCapacityRatio"}},
            ["scoring.shape"],
            id="shape missing",
        ),
        pytest.param(
            {
                "pod": _pod("p", "1"),
                "scoring": {
                    "strategy": "RequestedToCapacityRatio",
                    "shape": [{"utilization": 50, "score": 1}, {"utilization": 50, "score": 2}],
                },
            },
            ["scoring.shape[1].utilization"],
            id="shape not increasing",
        ),
        pytest.param(
            {
                "pod": _pod("p", "1"),
                "scoring": {
                    "strategy": "RequestedToCapacityRatio",
                    "shape": [{"utilization": 0, "score": 11}, {"utilization": 101, "score": 0}],
                },
            },
            ["scoring.shape[0].score", "scoring.shape[1].utilization"],
            id="shape out of range",
        ),
        pytest.param(
            {
                "pod": _pod("p", "1"),
                "scoring": {"balancedResources": [{"name": "cpu", "weight": 2}]},
            },
            ["scoring.balancedResources[0].weight"],
            id="balanced weight must be 1",
        ),
        pytest.param(
            {"pod": _pod("p", "1"), "scoring": {"weights": {}}},
            ["scoring.weights"],
            id="unknown scoring field",
        ),
    ],
)
def test_validation_errors_name_the_field(params, paths) -> None:
    with pytest.raises(ValidationError) as err:
        _place(params)
    assert sorted(e["path"] for e in flatten_messages(err.value.messages)) == sorted(paths)


def test_a_pod_whose_resource_claim_is_missing_fits_nowhere() -> None:
    """DynamicResources' PreFilter rejects the pod on every node (modelled: nothing is
    "not modelled")."""
    pending = _pod("gpu", "1", "1Gi")
    pending["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "gpu-claim"}]
    result = _place({"pod": pending}).result
    assert result["notModelled"] == []
    assert result["selectedNode"] is None
    assert result["message"].startswith(
        '0/3 nodes are available: could not find ResourceClaim "default/gpu-claim".'
    )


def test_a_score_outside_0_100_fails_the_cycle(api) -> None:
    """RunScorePlugins refuses a normalized score outside [0, 100]. On node "a" the pods'
    cpu requests sum past 2^63-1 and wrap negative (NodeInfo.update), so the pod fits and
    LeastAllocated's (capacity - requested) * 100 / capacity is far above 100: the cycle
    fails, although "b" is feasible with valid scores."""
    cluster = kube_list(
        node("a", cpu="4", memory="8Gi"),
        node("b", cpu="4", memory="8Gi"),
        pod("p0", "a", cpu=f"{3 * 2**61}m", memory=str(2**63 - 1)),
        pod("p1", "a", cpu=f"{2**62}m", memory=str(2**63 - 2)),
    )
    snap = api.post("/v1/snapshots", json=cluster, role="decide").json["id"]
    body = {"snapshotId": snap, "pod": pod("in", cpu="100m", memory="1Gi")}
    response = api.post("/v1/decisions/placement", json=body, role="decide")
    assert response.status_code == 201, response.json
    result = response.json["result"]
    assert result["selectedNode"] is None
    assert result["cycleError"] == {
        "extensionPoint": "Score",
        "plugin": "NodeResourcesFit",
        "nodeName": "a",
        "message": 'applying score defaultWeights on Score plugins: plugin "NodeResourcesFit" '
        "returns an invalid score -1152921504606754, it should in the range of [0, 100] "
        "after normalizing",
    }
    assert [(n["feasible"], n["total"]) for n in result["nodes"]] == [(True, None)] * 2
    assert result["nodes"][1]["scores"]["NodeResourcesFit"] in range(101)
    assert "reason SchedulerError" in result["message"]
    stored = api.get(f"/v1/decisions/{response.json['id']}", role="decide").json
    assert stored["result"] == result


def test_a_lone_feasible_node_is_taken_without_scoring(api) -> None:
    """schedulePod returns a lone feasible node before prioritizeNodes: the invalid score
    that fails the cycle above on "a" (beside "b") cannot fail it when "a" is alone."""
    cluster = kube_list(
        node("a", cpu="4", memory="8Gi"),
        pod("p0", "a", cpu=f"{3 * 2**61}m", memory=str(2**63 - 1)),
        pod("p1", "a", cpu=f"{2**62}m", memory=str(2**63 - 2)),
    )
    snap = api.post("/v1/snapshots", json=cluster, role="decide").json["id"]
    body = {"snapshotId": snap, "pod": pod("in", cpu="100m", memory="1Gi")}
    response = api.post("/v1/decisions/placement", json=body, role="decide")
    assert response.status_code == 201, response.json
    result = response.json["result"]
    assert result["selectedNode"] == "a"
    assert "cycleError" not in result
    assert result["nodes"][0]["scores"]["NodeResourcesFit"] not in range(101)


def test_a_filter_error_fails_the_cycle(api) -> None:
    """A profile that disables NodeResourcesFit's PreFilter but keeps its Filter: the filter
    finds no PreFilter state and answers Error on the first node, and the cycle fails."""
    cluster = kube_list(node("a"), node("b"))
    snap = api.post("/v1/snapshots", json=cluster, role="decide").json["id"]
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"preFilter": {"disabled": [{"name": "NodeResourcesFit"}]}}}],
    }
    body = {"snapshotId": snap, "pod": pod("in", cpu="100m"), "schedulerConfiguration": config}
    for kind in ("placement", "preemption"):
        response = api.post(f"/v1/decisions/{kind}", json=body, role="decide")
        assert response.status_code == 201, response.json
        error = response.json["result"]["cycleError"]
        assert error["extensionPoint"] == "Filter" and error["nodeName"] == "a"
        assert error["message"].startswith('running "NodeResourcesFit" filter plugin: ')
    assert response.json["result"]["candidates"] == []


def test_the_tie_sentence_only_where_nodes_tie() -> None:
    """Said when feasible nodes share the top total; never on an unschedulable pod."""
    twins = [_node("a"), _node("b")]
    tied = _place({"pod": _pod("p", "1", "1Gi")}, twins).result
    assert tied["selectedNode"] == "a"
    assert '2 nodes tie at the top total ("a", "b")' in tied["message"]
    assert "Verdict takes the first in snapshot order" in tied["message"]
    apart = _place({"pod": _pod("p", "1", "1Gi")}).result
    assert "tie" not in apart["message"]
    nowhere = _place({"pod": _pod("p", "64", "1Gi")}).result
    assert nowhere["selectedNode"] is None and "tie" not in nowhere["message"]
    assert "snapshot order" not in nowhere["message"]


def test_the_result_names_the_devices_allocated_per_claim(api) -> None:
    """DynamicResources' allocation on each feasible node and for the selected one, as the
    OpenAPI document describes it (the test client checks the answer against it)."""
    from tests.engine.dra.test_allocator import CLASS, _claim, _gpu, _held, _slice

    cluster = kube_list(
        node("a", cpu="4", memory="8Gi"),
        node("b", cpu="4", memory="8Gi"),
        CLASS,
        _slice("a", [_gpu("g0"), _gpu("g1")]),
        _slice("b", [_gpu("g0")]),
        _held("busy", "a", ["g0"]),
        _claim([{"name": "r", "exactly": {"deviceClassName": "gpu", "count": 1}}]),
    )
    snap = api.post("/v1/snapshots", json=cluster, role="decide").json["id"]
    incoming = pod("in", cpu="100m", memory="1Gi")
    incoming["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "want"}]
    response = api.post(
        "/v1/decisions/placement", json={"snapshotId": snap, "pod": incoming}, role="decide"
    )
    assert response.status_code == 201, response.json
    result = response.json["result"]
    a, b = result["nodes"]
    device = {"request": "r", "driver": "gpu.example.com"}
    assert a["allocation"] == {"want": [{**device, "pool": "a", "device": "g1"}]}
    assert b["allocation"] == {"want": [{**device, "pool": "b", "device": "g0"}]}
    assert result["allocation"] == (a if result["selectedNode"] == "a" else b)["allocation"]
    assert result["notModelled"] == []


def _dra_cluster(slice_version: str = "v1") -> dict:
    from tests.engine.dra.test_allocator import CLASS, _claim, _gpu, _slice

    gpu_slice = _slice("a", [_gpu("g0")])
    gpu_slice["apiVersion"] = f"resource.k8s.io/{slice_version}"
    claim = _claim([{"name": "r", "exactly": {"deviceClassName": "gpu", "count": 1}}])
    return kube_list(node("a", cpu="4", memory="8Gi"), CLASS, gpu_slice, claim)


def _gpu_pod() -> dict:
    incoming = pod("in", cpu="100m", memory="1Gi")
    incoming["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "want"}]
    return incoming


@pytest.mark.parametrize(
    ("slice_version", "release", "status", "unserved"),
    [
        ("v1", "1.35", 201, None),
        ("v1beta1", "1.35", 422, 'ResourceSlice "a-gpu": apiVersion resource.k8s.io/v1beta1'),
        ("v1beta2", "1.34", 422, 'ResourceSlice "a-gpu": apiVersion resource.k8s.io/v1beta2'),
        ("v1", "1.33", 422, 'ResourceClaim "default/want": apiVersion resource.k8s.io/v1'),
    ],
)
def test_an_object_in_a_version_the_release_does_not_serve_is_a_422(
    api, slice_version, release, status, unserved
) -> None:
    """EngineSettings.resource_api_versions: v1 from 1.34, no version before; the beta
    versions are off by default everywhere. Both kinds that run the scheduler answer so."""
    snap = api.post("/v1/snapshots", json=_dra_cluster(slice_version), role="decide").json["id"]
    body = {"snapshotId": snap, "pod": _gpu_pod(), "kubernetesVersion": release}
    for kind in ("placement", "preemption"):
        response = api.post(f"/v1/decisions/{kind}", json=body, role="decide")
        assert response.status_code == status, response.json
        if unserved is not None:
            (error,) = response.json["errors"]
            assert error["path"] == "snapshot"
            assert error["message"].startswith(f"{unserved} is not served by Kubernetes {release}")


def test_an_impact_on_a_release_that_cannot_read_the_claims_counts_them_failed(api) -> None:
    snap = api.post("/v1/snapshots", json=_dra_cluster(), role="decide").json["id"]
    body = {"snapshotId": snap, "pod": _gpu_pod(), "kubernetesVersion": "1.35"}
    stored = api.post("/v1/decisions/placement", json=body, role="decide")
    assert stored.status_code == 201, stored.json
    response = api.post("/v1/impact", json={"kubernetesVersion": "1.33"}, role="read")
    assert response.status_code == 200, response.json
    assert (response.json["examined"], response.json["failed"]) == (1, 1)
    reason = response.json["failures"][0]["reason"]
    assert 'ResourceClaim "default/want": apiVersion resource.k8s.io/v1 is not served' in reason


def test_the_result_carries_the_configuration_of_each_allocation(api) -> None:
    """allocationConfig beside allocation (on the node and the result), as the OpenAPI
    document describes it; a claim without configuration has no entry."""
    cluster = _dra_cluster()
    gpu_class = cluster["items"][1]
    gpu_class["spec"]["config"] = [
        {"opaque": {"driver": "gpu.example.com", "parameters": {"sharing": "time-slicing"}}}
    ]
    snap = api.post("/v1/snapshots", json=cluster, role="decide").json["id"]
    response = api.post(
        "/v1/decisions/placement", json={"snapshotId": snap, "pod": _gpu_pod()}, role="decide"
    )
    assert response.status_code == 201, response.json
    result = response.json["result"]
    expected = {
        "want": [
            {
                "source": "FromClass",
                "requests": ["r"],
                "opaque": {"driver": "gpu.example.com", "parameters": {"sharing": "time-slicing"}},
            }
        ]
    }
    assert result["allocationConfig"] == expected
    assert result["nodes"][0]["allocationConfig"] == expected
