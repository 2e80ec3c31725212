"""Decision kind "schedule" (service.decisions.schedule): the queue through the API, its
defaults, the answer's shape, bad input naming the field, the run limit, replay and export."""

from __future__ import annotations

import json

import pytest
from marshmallow import ValidationError

from service.decisions import KINDS
from service.decisions.base import DecisionInputError
from service.decisions.run import compute
from service.decisions.simulation import SimulationLimits
from service.engine.objects import Cluster
from tests.conftest import kube_list, node, pod, snapshot_from_objects


def _finished(name: str) -> dict:
    body = pod(name, cpu="1")
    body["status"] = {"phase": "Succeeded"}
    return body


OBJECTS = [
    node("a", cpu="2"),
    node("b", cpu="2"),
    pod("low-a", "a", cpu="1500m", priority=0),
    pod("low-b", "b", cpu="1500m", priority=0),
    pod("small", cpu="300m"),
    pod("hi", cpu="1500m", priority=100),
    _finished("done"),
    pod("other", cpu="1", schedulerName="another-scheduler"),
]


def _cluster(objects=OBJECTS) -> Cluster:
    return Cluster(snapshot_from_objects(list(objects)))


def _decide(params: dict, objects=OBJECTS, limits=None):
    return compute(KINDS["schedule"], _cluster(objects), params, limits=limits)


def test_the_pending_pods_by_default_through_preemption_and_retry():
    out = _decide({})
    steps = [(s["pod"]["name"], s["outcome"], s["nodeName"], s["attempt"]) for s in
             out.result["steps"]]  # fmt: skip
    # "done" is terminal and "other" has no profile: neither is queued
    assert steps == [
        ("hi", "nominated", "a", 1),
        ("small", "bound", "a", 1),
        ("hi", "bound", "a", 2),
    ]
    first = out.result["steps"][0]
    assert [v["name"] for v in first["victims"]] == ["low-a"]
    assert first["nodeCounts"] == {"Insufficient cpu": 2}
    assert out.result["counts"] == {
        "pods": 2, "steps": 3, "bound": 2, "nominated": 0, "unschedulable": 0,
        "preempted": 1, "pending": 0,
    }  # fmt: skip
    (usage,) = out.result["nodes"]
    assert usage == {
        "nodeName": "a",
        "allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"},
        "requestedBefore": {"cpu": "1500m"},
        "requestedAfter": {"cpu": "1800m"},
        "podsBefore": 1,
        "podsAfter": 2,
    }
    assert out.result["truncated"] is False
    assert out.subjects.node_names == ["a"]
    assert set(out.subjects.pods) == {"default/hi", "default/small", "default/low-a"}


def test_given_pods_without_preemption():
    out = _decide({"pods": [pod("x", cpu="1"), pod("y", cpu="1", priority=5)],
                   "preemption": False})  # fmt: skip
    steps = [(s["pod"]["name"], s["outcome"]) for s in out.result["steps"]]
    assert steps == [("y", "unschedulable"), ("x", "unschedulable")]
    assert out.result["steps"][0]["message"] == "0/2 nodes are available: 2 Insufficient cpu."


def test_ties_are_said_in_the_step_and_a_seed_picks_among_them():
    objects = [node("a"), node("b"), node("c")]
    fixed = _decide({"pods": [pod("p", cpu="100m")]}, objects).result
    (step,) = fixed["steps"]
    assert step["nodeName"] == "a" and step["ties"] == ["a", "b", "c"]
    assert "Verdict takes the first in snapshot order" in step["message"]
    assert fixed["tieBreak"] == "snapshotOrder"
    picks = {
        _decide({"pods": [pod("p", cpu="100m")], "tieBreak": {"seed": s}}, objects).result[
            "steps"][0]["nodeName"]
        for s in range(30)
    }  # fmt: skip
    assert picks == {"a", "b", "c"}
    seeded = _decide({"pods": [pod("p", cpu="100m")], "tieBreak": {"seed": 4}}, objects).result
    assert "tieBreak.seed" in seeded["steps"][0]["message"] and seeded["tieBreak"] == "seeded"


def test_a_run_past_the_limit_stops_and_says_so():
    pods = [pod(f"p{i}", cpu="10m") for i in range(5)]
    out = _decide({"pods": pods}, limits=SimulationLimits(max_steps=2)).result
    assert out["truncated"] is True and out["limit"] == "MaxSteps"
    assert len(out["steps"]) == 2
    assert out["pending"] == ["default/p2", "default/p3", "default/p4"]
    assert "stopped at its limit" in out["message"]


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"pods": []}, "pods"),
        ({"pods": [pod("x", "a", cpu="1")]}, "pods[0].spec.nodeName"),
        ({"pods": [pod("x"), pod("x")]}, "pods[1].metadata.name"),
        ({"preemption": "maybe"}, "preemption"),
        ({"tieBreak": {"seed": -1}}, "tieBreak.seed"),
        ({"tieBreak": {}}, "tieBreak.seed"),
        ({"unknown": 1}, "unknown"),
    ],
)
def test_bad_input_names_the_field(params, path):
    from service.api.errors import flatten_messages

    with pytest.raises(ValidationError) as err:
        _decide(params)
    assert path in {e["path"] for e in flatten_messages(err.value.messages)}


@pytest.mark.parametrize(
    ("params", "objects", "path"),
    [
        ({}, [node("a")], "pods"),
        ({"pods": [pod("low-a", cpu="1")]}, OBJECTS, "pods[0].metadata.name"),
        ({"pods": [pod("x", schedulerName="nobody")]}, OBJECTS, "pods[0].spec.schedulerName"),
        ({"pods": [pod("x", priorityClassName="nope")]}, OBJECTS,
         "pods[0].spec.priorityClassName"),
    ],
)  # fmt: skip
def test_input_the_snapshot_refuses_names_the_field(params, objects, path):
    with pytest.raises(DecisionInputError) as err:
        _decide(params, objects)
    assert err.value.path == path


def test_through_the_api_recorded_replayed_and_exported(api):
    body = {"snapshot": {"objects": kube_list(*OBJECTS)}}
    response = api.post("/v1/decisions/schedule", json=body)
    assert response.status_code == 201, response.json
    record = response.json
    assert record["kind"] == "schedule"
    assert record["result"]["counts"]["bound"] == 2
    replay = api.post(f"/v1/decisions/{record['id']}/replay")
    assert replay.status_code == 200, replay.json
    assert replay.json["matches"] is True
    export = api.get("/v1/decisions/export")
    kinds = [json.loads(line)["kind"] for line in export.data.decode().splitlines() if line]
    assert "schedule" in kinds
    listed = api.get("/v1/decisions?kind=schedule&nodeName=a")
    assert [d["id"] for d in listed.json["items"]] == [record["id"]]


def test_yaml_and_bad_input_over_http(api):
    import yaml

    body = {"snapshot": {"objects": kube_list(*OBJECTS)}, "pods": [pod("y", "a")]}
    response = api.post(
        "/v1/decisions/schedule",
        data=yaml.safe_dump(body),
        headers={"Content-Type": "application/yaml"},
    )
    assert response.status_code == 422
    assert response.headers["Content-Type"].startswith("application/problem+json")
    assert "pods[0].spec.nodeName" in json.dumps(response.json)
    empty = api.post("/v1/decisions/schedule", json={"snapshot": {"objects": kube_list(node("a"))}})
    assert empty.status_code == 422
    assert api.get("/v1/decisions?kind=schedule").json["items"] == []
