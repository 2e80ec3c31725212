"""Decision kind "preemption" (service.decisions.preemption): request validation naming the
field, the contract's result shape, holds, and the conformance cases the API can express."""

from __future__ import annotations

import pytest
from marshmallow import ValidationError

from service.api.errors import flatten_messages
from service.decisions import KINDS, DecisionInputError
from service.decisions.preemption import decide  # noqa: F401 - registers the kind
from service.decisions.run import compute
from service.engine.objects import Cluster
from service.ingest.kube import snapshot_from_objects
from tests.engine.scheduler.helpers import conformance_group


def _node(name, cpu="1", memory="1Gi", pods="110"):
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": pods},
            "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
        },
    }


def _pod(name, cpu, *, node=None, priority=0, labels=None, **spec):
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "priority": priority,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
        "status": {"phase": "Running" if node else "Pending"},
    }
    if node:
        body["spec"]["nodeName"] = node
    if labels:
        body["metadata"]["labels"] = labels
    return body


def _pdb(name, labels, allowed):
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": labels}},
        "status": {"disruptionsAllowed": allowed},
    }


def _cluster(*objects):
    return Cluster(snapshot_from_objects(list(objects)))


CLUSTER = [
    _node("n1"),
    _node("n2"),
    _pod("low", "800m", node="n1", priority=1, labels={"app": "db"}),
    _pod("mid", "800m", node="n2", priority=50),
]


def _decide(params, objects=CLUSTER):
    return compute(KINDS["preemption"], _cluster(*objects), params)


def test_result_shape_and_choice() -> None:
    out = _decide({"pod": _pod("p", "500m", priority=1000)})
    r = out.result
    assert r["eligible"] is True
    assert r["nominatedNodeName"] == "n1"
    assert [v["name"] for v in r["victims"]] == ["low"]
    assert set(r["victims"][0]) == {
        "namespace",
        "name",
        "uid",
        "nodeName",
        "priority",
        "qosClass",
        "reason",
    }
    assert r["victims"][0]["reason"].startswith(
        "default-scheduler: preempting to accommodate a higher priority pod"
    )
    assert f"on node {r['nominatedNodeName']}" in r["victims"][0]["reason"]
    assert r["numPDBViolations"] == 0
    assert [(c["nodeName"], [v["name"] for v in c["victims"]]) for c in r["candidates"]] == [
        ("n1", ["low"]),
        ("n2", ["mid"]),
    ]
    assert r["nodes"]["n1"] == {
        "status": "Unschedulable",
        "reasons": ["Insufficient cpu"],
        "preemption": "Candidate",
    }
    assert r["message"] == ""
    assert r["numCandidates"] == 2 and r["offset"] == 0
    assert out.subjects.node_names == ["n1"]
    assert out.subjects.pods == ["default/p", "default/low"]


def test_pdb_moves_the_choice() -> None:
    out = _decide(
        {"pod": _pod("p", "500m", priority=1000)}, [*CLUSTER, _pdb("db", {"app": "db"}, 0)]
    )
    assert out.result["nominatedNodeName"] == "n2"
    assert out.result["numPDBViolations"] == 0
    assert out.result["candidates"][1]["numPDBViolations"] == 1


def test_same_request_same_result() -> None:
    params = {"pod": _pod("p", "500m", priority=1000), "options": {"offset": 1}}
    assert _decide(params).result == _decide(params).result


def test_no_preemption_needed() -> None:
    r = _decide({"pod": _pod("p", "100m", priority=1000)}).result
    assert r["nominatedNodeName"] is None
    assert r["victims"] == []
    assert r["message"].startswith("preemption not needed")
    assert r["nodes"]["n1"]["status"] == "Fits"
    assert r["nodes"]["n1"]["preemption"] == "NotAttempted"


def test_not_eligible() -> None:
    r = _decide({"pod": _pod("p", "500m", priority=1000, preemptionPolicy="Never")}).result
    assert r["eligible"] is False
    assert r["nominatedNodeName"] is None
    assert r["message"] == "preemption: not eligible due to preemptionPolicy=Never."


def test_volume_filters_are_evaluated() -> None:
    """A claim missing from the snapshot rejects the pod everywhere (VolumeRestrictions'
    PreFilter, the first volume plugin), which preemption cannot help; nothing is left
    unevaluated."""
    spec = {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}
    r = _decide({"pod": _pod("p", "500m", priority=1000, **spec)}).result
    assert r["notModelled"] == []
    assert r["nodes"]["n1"]["status"] == "UnschedulableAndUnresolvable"
    assert r["nodes"]["n1"]["reasons"] == ['persistentvolumeclaim "data" not found']
    assert r["nodes"]["n1"]["preemption"] == "NotPotential"


def test_explicit_hold_through_the_api() -> None:
    objects = [_node("n1", cpu="4"), _pod("other", "2", node="n1", priority=100)]
    hold = {
        "nodeName": "n1",
        "name": "web-0",
        "ownerUid": "sts",
        "requests": {"cpu": "2"},
        "priority": 100,
    }
    params = {"pod": _pod("api", "1", priority=50), "holds": [hold]}
    r = _decide(params, objects).result
    assert r["nodes"]["n1"]["reasons"] == [
        "Insufficient cpu",
        "node(s) had resources held for default/web-0",
    ]
    assert r["nominatedNodeName"] == ""


def test_hold_on_unknown_node() -> None:
    params = {"pod": _pod("p", "500m", priority=1000), "holds": [{"nodeName": "nx", "name": "w"}]}
    with pytest.raises(DecisionInputError) as err:
        _decide(params)
    assert err.value.path == "holds[0].nodeName"


@pytest.mark.parametrize(
    ("params", "paths"),
    [
        pytest.param({"pod": _pod("p", "1", node="n1")}, ["pod.spec.nodeName"], id="already bound"),
        pytest.param(
            {"pod": _pod("p", "1"), "options": {"minCandidateNodesPercentage": 101}},
            ["options.minCandidateNodesPercentage"],
            id="percentage above 100",
        ),
        pytest.param(
            {"pod": _pod("p", "1"), "options": {"minCandidateNodesAbsolute": -1}},
            ["options.minCandidateNodesAbsolute"],
            id="negative absolute",
        ),
        pytest.param(
            {
                "pod": _pod("p", "1"),
                "options": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            },
            ["options.minCandidateNodesPercentage"],
            id="both zero",
        ),
        pytest.param(
            {"pod": _pod("p", "1"), "options": {"offset": -3}}, ["options.offset"], id="offset"
        ),
        pytest.param(
            {"pod": _pod("p", "1"), "options": {"foo": 1}}, ["options.foo"], id="unknown option"
        ),
        pytest.param(
            {
                "pod": _pod("p", "1"),
                "holds": [{"nodeName": "n1", "name": "w", "requests": {"cpu": "x"}}],
            },
            ["holds[0].requests.cpu"],
            id="hold quantity",
        ),
    ],
)
def test_validation_errors_name_the_field(params, paths) -> None:
    with pytest.raises(ValidationError) as err:
        _decide(params)
    assert [e["path"] for e in flatten_messages(err.value.messages)] == paths


# --- conformance cases the API expresses (Verdict computes the node statuses itself) ---


def _api_cases():
    out = []
    for case in conformance_group("scheduler.preemption.Evaluator.Preempt"):
        if set(case["input"].get("filters") or ()) <= {"NodeResourcesFit"}:
            out.append(pytest.param(case, id=case["name"]))
    return out


@pytest.mark.parametrize("case", _api_cases())
def test_conformance_preempt_through_the_kind(case) -> None:
    i = case["input"]
    r = _decide({"pod": i["preemptor"]}, i["nodes"] + i["pods"] + i["pdbs"]).result
    assert r["nominatedNodeName"] == case["expected"]["nominatedNodeName"]
    assert sorted(v["name"] for v in r["victims"]) == sorted(case["expected"]["victims"])
