"""Decision kind "admission" (service.decisions.admission): request schema, result shape
(the contract), node pods taken into account, preemption output, input errors, and the engine
time for a full 110-pod node."""

from __future__ import annotations

import pytest
from marshmallow import ValidationError

from service.decisions import KINDS, DecisionInputError
from service.decisions.admission import AdmissionRequestSchema, decide
from service.decisions.run import compute
from service.engine.objects import Cluster
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import snapshot_from_objects
from tests.conftest import kube_list, node, pod
from tests.decisions.helpers import stored_snapshot

MI = 1024 * 1024


def _node(name="n1", cpu="4", memory="8Gi", pods="110", taints=None, conditions=None, labels=None):
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"taints": taints or []},
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": pods},
            "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
            "conditions": conditions or [{"type": "Ready", "status": "True"}],
        },
    }


def _pod(
    name,
    node="n1",
    cpu=None,
    memory=None,
    *,
    limits=False,
    priority=None,
    phase="Running",
    ns="default",
    **spec,
):
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    resources = {"requests": requests}
    if limits:
        resources["limits"] = dict(requests)
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "resources": resources}], **spec},
        "status": {"phase": phase},
    }
    if priority is not None:
        body["spec"]["priority"] = priority
    return body


def _cluster(*objects) -> Cluster:
    return Cluster(snapshot_from_objects(list(objects)))


def _decide(cluster: Cluster, node_name: str, pod: dict) -> dict:
    return compute(KINDS["admission"], cluster, {"nodeName": node_name, "pod": pod}).result


def test_kind_is_registered():
    assert KINDS["admission"].schema is AdmissionRequestSchema
    assert KINDS["admission"].decide is decide


def test_admitted_result_shape():
    cluster = _cluster(_node(), _pod("a", cpu="1"))
    result = _decide(cluster, "n1", _pod("new", node="", cpu="1"))
    assert result == {
        "admitted": True,
        "reasons": [],
        "critical": False,
        "preemption": None,
        "message": "Admitted: the pod passes every kubelet admission check on this node",
        "kubeletReason": None,
    }


def test_insufficient_resource_reason():
    cluster = _cluster(_node(), _pod("a", cpu="3500m"), _pod("done", cpu="3", phase="Succeeded"))
    result = _decide(cluster, "n1", _pod("new", node="", cpu="1", memory="1Gi"))
    assert result["admitted"] is False
    assert result["reasons"] == [
        {
            "reason": "InsufficientResource",
            "resource": "cpu",
            "requested": 1000,
            "used": 3500,
            "capacity": 4000,
            "message": "Insufficient cpu",
            "kubeletReason": "OutOfcpu",
        }
    ]
    assert result["kubeletReason"] == "OutOfcpu"
    assert result["message"] == (
        "Node didn't have enough resource: cpu, requested: 1000, used: 3500, capacity: 4000"
    )


def test_api_reason_tokens():
    node = _node(
        taints=[{"key": "dedicated", "value": "x", "effect": "NoExecute"}], labels={"zone": "a"}
    )
    other = _pod("a", containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": 80}]}])
    pod = _pod(
        "new",
        node="n2",
        nodeSelector={"zone": "b"},
        containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": 80}]}],
    )
    result = _decide(_cluster(node, other), "n1", pod)
    assert [(r["reason"], r["kubeletReason"]) for r in result["reasons"]] == [
        ("NodeAffinity", "NodeAffinity"),
        ("NodeName", "NodeName"),
        ("HostPort", "NodePorts"),
        ("Taint", "TaintToleration"),
    ]
    assert all("resource" not in r for r in result["reasons"])
    assert result["message"] == (
        "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
    )


def test_os_reason_token():
    pod = _pod("new", node="", os={"name": "windows"})
    result = _decide(_cluster(_node()), "n1", pod)
    assert result["reasons"] == [
        {
            "reason": "OS",
            "message": "Failed to admit pod as the OS field doesn't match node OS",
            "kubeletReason": "PodOSNotSupported",
        }
    ]
    assert result["kubeletReason"] == "PodOSNotSupported"


def test_eviction_reason():
    node = _node(conditions=[{"type": "DiskPressure", "status": "True"}])
    result = _decide(_cluster(node), "n1", _pod("new", node="", cpu="1"))
    assert result["admitted"] is False
    assert result["reasons"] == [
        {
            "reason": "Evicted",
            "message": "The node had condition: [DiskPressure]. ",
            "kubeletReason": "Evicted",
        }
    ]
    assert result["message"] == "The node had condition: [DiskPressure]. "


def test_critical_pod_preempts_with_pod_refs_in_kill_order():
    cluster = _cluster(
        _node(cpu="2"),
        _pod("be", priority=0),
        _pod("burst", cpu="1", priority=0),
        _pod("guar", cpu="900m", memory="1Gi", limits=True, priority=0),
    )
    critical = _pod("dns", node="", cpu="1", ns="kube-system", priority=2_000_000_000)
    result = _decide(cluster, "n1", critical)
    assert result["admitted"] is True
    assert result["critical"] is True
    assert result["preemption"] == {
        "victims": [
            {
                "namespace": "default",
                "name": "burst",
                "uid": "uid-burst",
                "nodeName": "n1",
                "priority": 0,
                "qosClass": "Burstable",
            }
        ],
        "message": "Preempted in order to admit critical pod",
    }
    assert result["reasons"][0]["reason"] == "InsufficientResource"
    assert (
        result["message"] == "Admitted after preempting 1 pod(s) to reclaim [(res: cpu, q: 900), ]"
    )


def test_no_set_of_pods_can_free_enough():
    cluster = _cluster(_node(cpu="2"), _pod("sys", cpu="1500m", priority=2_000_000_000))
    critical = _pod("dns", node="", cpu="1", ns="kube-system", priority=2_000_000_000)
    result = _decide(cluster, "n1", critical)
    assert result["admitted"] is False
    assert result["preemption"] is None
    assert result["kubeletReason"] == "UnexpectedAdmissionError"
    assert result["message"] == (
        "Unexpected error while attempting to recover from admission failure: preemption: "
        "error finding a set of pods to preempt: no set of running pods found to reclaim "
        "resources: [(res: cpu, q: 500), ]"
    )


def test_pod_already_on_the_node_is_not_counted_against_itself():
    cluster = _cluster(
        _node(cpu="2", pods="1"),
        _pod(
            "web",
            cpu="1500m",
            containers=[
                {
                    "name": "c",
                    "ports": [{"containerPort": 80, "hostPort": 80}],
                    "resources": {"requests": {"cpu": "1500m"}},
                }
            ],
        ),
    )
    again = _pod(
        "web",
        containers=[
            {
                "name": "c",
                "ports": [{"containerPort": 80, "hostPort": 80}],
                "resources": {"requests": {"cpu": "1500m"}},
            }
        ],
    )
    assert _decide(cluster, "n1", again)["admitted"] is True
    elsewhere = dict(again, metadata={"name": "web", "namespace": "other"})
    result = _decide(cluster, "n1", elsewhere)
    assert [r.get("resource", r["reason"]) for r in result["reasons"]] == [
        "pods",
        "cpu",
        "HostPort",
    ]


def test_unknown_node():
    with pytest.raises(DecisionInputError) as err:
        _decide(_cluster(_node()), "nope", _pod("new", node=""))
    assert err.value.path == "nodeName"


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"pod": {"metadata": {"name": "x"}}}, id="nodeName missing"),
        pytest.param({"nodeName": "n1"}, id="pod missing"),
        pytest.param(
            {"nodeName": "n1", "pod": {"metadata": {"name": "x"}}, "extra": 1}, id="unknown field"
        ),
        pytest.param({"nodeName": "n1", "pod": "not a pod"}, id="pod not an object"),
        pytest.param(
            {
                "nodeName": "n1",
                "pod": {
                    "metadata": {"name": "x"},
                    "spec": {
                        "containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]
                    },
                },
            },
            id="bad quantity",
        ),
    ],
)
def test_schema_rejects(params):
    with pytest.raises(ValidationError):
        AdmissionRequestSchema().load(params)


def test_subjects_name_node_pod_and_victims():
    cluster = _cluster(_node(cpu="1"), _pod("victim", cpu="1", priority=0))
    kind = KINDS["admission"]
    params = {
        "nodeName": "n1",
        "pod": _pod("dns", node="", cpu="1", ns="kube-system", priority=2_000_000_000),
    }
    outcome = compute(kind, cluster, params)
    assert outcome.subjects.node_names == ["n1"]
    assert outcome.subjects.pods == ["kube-system/dns", "default/victim"]


def test_a_critical_pod_on_a_full_110_pod_node_preempts_enough_victims():
    """The worst case of bench/bench_admission.py (which times it): 21 victims of 109."""
    objects = [_node(cpu="64", memory="256Gi", pods="110")]
    objects += [_pod(f"p{i}", cpu="500m", memory="1Gi", priority=i % 7) for i in range(109)]
    cluster = _cluster(*objects)
    pod = AdmissionRequestSchema().load(
        {
            "nodeName": "n1",
            "pod": _pod(
                "crit", node="", cpu="20", memory="2Gi", ns="kube-system", priority=2_000_000_000
            ),
        }
    ) | {"settings": DEFAULT_SETTINGS}
    result = decide(cluster, pod)
    assert result["admitted"] is True and len(result["preemption"]["victims"]) == 21
    assert decide(cluster, pod) == result  # the cluster's indexes, once built, change nothing


# --- through HTTP (POST /v1/decisions/admission, inline snapshot) ---------------------------


def _conformance_node(inp: dict) -> dict:
    node = dict(inp["node"], apiVersion="v1", kind="Node")
    return node


def _post(api, objects, node_name, pod):
    return api.post(
        "/v1/decisions/admission",
        role="decide",
        json={"snapshot": {"objects": objects}, "nodeName": node_name, "pod": pod},
    )


_GENERAL_FILTER_HTTP = {
    # case name -> API reason tokens (the pod's own name must differ from the other pods')
    "host not match": ["NodeName"],
    "hostport conflict": ["HostPort"],
    "NoSchedule taint/toleration not match": [],
    "NoExecute taint/toleration not match": ["Taint"],
    "PreferNoSchedule taint/toleration not match": [],
    "static pods ignore taints": [],
    "node affinity failure": ["NodeAffinity"],
    "node affinity failure on cached node and node name doesn't match": [
        "NodeAffinity",
        "NodeName",
    ],
    "node affinity failure on fresh node, but not the cached one (as seen by the final node object)": [],
}


def _general_filter_cases():
    from tests.engine.kubelet.helpers import conformance_cases

    return [
        pytest.param(p.values[0], p.values[1], _GENERAL_FILTER_HTTP[p.id], id=p.id)
        for p in conformance_cases("kubelet.lifecycle.generalFilter")
    ]


@pytest.mark.parametrize(("inp", "expected", "tokens"), _general_filter_cases())
def test_http_conformance_general_filter(api, inp, expected, tokens):
    assert len(tokens) == len(expected["reasons"])
    others = []
    for i, other in enumerate(inp["otherPods"]):
        body = dict(other, apiVersion="v1", kind="Pod", metadata={"name": f"other-{i}"})
        body["spec"] = dict(body["spec"], nodeName="machine1")
        for j, c in enumerate(body["spec"].get("containers", [])):
            c.setdefault("name", f"c{j}")
        others.append(body)
    pod = dict(inp["pod"], apiVersion="v1", kind="Pod")
    pod["metadata"] = dict(pod.get("metadata", {}), name="admitted")
    pod["spec"] = dict(pod.get("spec", {}))
    pod["spec"]["containers"] = [
        dict(c, name=c.get("name", f"c{j}"))
        for j, c in enumerate(pod["spec"].get("containers", []))
    ]
    response = _post(api, [_conformance_node(inp), *others], "machine1", pod)
    assert response.status_code == 201, response.get_json()
    result = response.get_json()["result"]
    assert [r["reason"] for r in result["reasons"]] == tokens
    assert result["admitted"] is (not tokens)


def test_http_critical_pod_preemption(api):
    from tests.conftest import node, pod

    objects = [
        node("n1", cpu="2"),
        pod("be", "n1", priority=0),
        pod("burst", "n1", cpu="1", priority=0),
    ]
    critical = pod("dns", cpu="1500m", namespace="kube-system", priority=2_000_000_000)
    response = _post(api, objects, "n1", critical)
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert body["kind"] == "admission"
    result = body["result"]
    assert result["admitted"] is True and result["critical"] is True
    assert [v["name"] for v in result["preemption"]["victims"]] == ["burst"]


def test_http_unknown_node_is_422_naming_the_field(api):
    from tests.conftest import node, pod

    response = _post(api, [node("n1")], "n9", pod("x"))
    assert response.status_code == 422
    assert [e["path"] for e in response.get_json()["errors"]] == ["nodeName"]


@pytest.mark.parametrize(
    ("cpu", "memory"),
    [("1E18", "8Gi"), ("9Ei", "1e40"), ("100Ei", "9223372036854775808"), ("1", "9Ei")],
)
def test_quantities_past_int64_are_stored_and_decided(api, cpu, memory):
    cluster = kube_list(
        node("n1", cpu=cpu, memory=memory),
        pod("a", "n1", cpu=cpu, memory=memory),
    )
    stored = api.post("/v1/snapshots", json=cluster, role="decide")
    assert stored.status_code == 201, stored.json
    snapshot_id = stored.json["id"]
    assert api.get(f"/v1/snapshots/{snapshot_id}/nodes", role="read").status_code == 200
    assert api.get(f"/v1/snapshots/{snapshot_id}/pods", role="read").status_code == 200
    decided = api.post(
        "/v1/decisions/admission",
        role="decide",
        json={
            "snapshotId": snapshot_id,
            "nodeName": "n1",
            "pod": pod("new", cpu=cpu, memory=memory),
        },
    )
    assert decided.status_code == 201, decided.json


def _admission(api, node_cpu: str, pods: list, cpu: str) -> dict:
    decided = api.post(
        "/v1/decisions/admission",
        role="decide",
        json={
            "snapshot": {"objects": kube_list(node("n1", cpu=node_cpu), *pods)},
            "nodeName": "n1",
            "pod": pod("new", cpu=cpu),
        },
    )
    assert decided.status_code == 201, decided.json
    return decided.json["result"]


MAX_MILLI = f"{2**63 - 1}m"  # MilliValue is exactly 2**63 - 1 (inf.Dec, scaledValue)


def test_node_sums_past_int64_wrap_around_as_in_go(api):
    """NodeInfo.Requested adds each pod's MilliValue with int64 ``+=``: three pods of
    "9223372036854775807m" cpu (each 2**63 - 1 millicores) sum to 3 * (2**63 - 1), which
    Go leaves as 2**63 - 3."""
    big = [pod(name, "n1", cpu=MAX_MILLI) for name in "abc"]
    result = _admission(api, MAX_MILLI, big, MAX_MILLI)
    assert result["admitted"] is False
    (reason,) = result["reasons"]
    assert (reason["resource"], reason["used"]) == ("cpu", 2**63 - 3)
    assert reason["requested"] == reason["capacity"] == 2**63 - 1


def test_a_wrapped_sum_can_leave_room_as_it_does_in_go(api):
    """Two pods of 2**63 - 1 millicores wrap to -2 millicores used: on a 4-cpu node a 1-cpu
    pod then fits (1000 <= 4000 - (-2)), as the kubelet's int64 arithmetic decides."""
    big = [pod(name, "n1", cpu=MAX_MILLI) for name in "ab"]
    assert _admission(api, "4", big, "1")["admitted"] is True
    assert _admission(api, MAX_MILLI, big, MAX_MILLI)["reasons"][0]["used"] == -2


@pytest.mark.parametrize(
    ("node_cpu", "capacity"),
    [
        # int64Amount{1, 18}: MilliValue is positiveScaleInt64(1, 21), whose loop returns 0
        # on overflow (v1.35 AsScaledInt64; never saturated).
        ("1E18", 0),
        ("2E18", 0),
        ("1E16", 0),
        # int64Amount{9223372036854776, 0}: int64MultiplyScale1000 returns the wrapped product.
        ("9223372036854776", 9223372036854776000 - 2**64),
    ],
)
def test_a_node_past_int64_reads_as_go_reads_it(api, node_cpu, capacity):
    """A node whose cpu MilliValue overflows has 0 or a wrapped negative capacity: a 1-cpu
    pod does not fit there, as the kubelet and scheduler (v1.35) decide."""
    result = _admission(api, node_cpu, [], "1")
    assert result["admitted"] is False
    (reason,) = result["reasons"]
    assert (reason["resource"], reason["capacity"], reason["requested"]) == ("cpu", capacity, 1000)


def test_admission_node_name_defaults_to_the_pods(api):
    snapshot_id = stored_snapshot(api)
    bound = pod("new", "n1", cpu="1", memory="64Mi")
    response = api.post("/v1/decisions/admission", json={"snapshotId": snapshot_id, "pod": bound})
    assert response.status_code == 201 and response.json["request"].get("nodeName") is None
    listed = api.get("/v1/decisions?nodeName=n1&kind=admission").json["items"]
    assert [d["id"] for d in listed] == [response.json["id"]]
    unbound = pod("new", cpu="1")
    response = api.post("/v1/decisions/admission", json={"snapshotId": snapshot_id, "pod": unbound})
    assert response.status_code == 422
    assert response.json["errors"][0]["path"] == "nodeName"
