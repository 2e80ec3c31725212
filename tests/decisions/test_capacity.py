"""Decision kind "capacity" (service.decisions.capacity): replicas until one does not fit,
the stop reason's node counts, spread and anti-affinity between the replicas, several
templates, maxReplicas, excludeNodes, bad input naming the field, replay through the API."""

from __future__ import annotations

import pytest
from marshmallow import ValidationError

from service.api.errors import flatten_messages
from service.decisions import KINDS
from service.decisions.base import DecisionInputError
from service.decisions.run import compute
from service.decisions.simulation import SimulationLimits
from service.engine.objects import Cluster
from tests.conftest import kube_list, node, pod, snapshot_from_objects

ZONES = {"a1": "za", "a2": "za", "b1": "zb"}
OBJECTS = [
    *(node(n, cpu="2", memory="4Gi", labels={"topology.kubernetes.io/zone": z})
      for n, z in ZONES.items()),
    node("t", cpu="8", spec={"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]}),
    pod("busy", "a1", cpu="1"),
]  # fmt: skip


def _decide(params: dict, objects=OBJECTS, limits=None):
    return compute(
        KINDS["capacity"], Cluster(snapshot_from_objects(list(objects))), params, limits=limits
    )


def _web(**spec) -> dict:
    body = pod("web", cpu="500m", memory="1Gi", **spec)
    body["metadata"]["labels"] = {"app": "web"}
    return body


def test_replicas_until_one_does_not_fit_with_the_stop_reason():
    out = _decide({"pod": _web()})
    r = out.result
    # a1 has 1 cpu free (2 replicas), a2 and b1 2 cpu (4 each); t is tainted
    assert r["replicas"] == 10
    assert r["templates"][0]["nodes"] == {"a1": 2, "a2": 4, "b1": 4}
    assert r["stopReason"] == {
        "reason": "Unschedulable",
        "message": "0/4 nodes are available: 1 node(s) had untolerated taint(s), "
        "2 Insufficient memory, 3 Insufficient cpu.",
        "nodeCounts": {
            "Insufficient cpu": 3,
            "Insufficient memory": 2,  # a2 and b1 hold 4 x 1Gi of their 4Gi
            "node(s) had untolerated taint(s)": 1,
        },
    }
    assert [p["name"] for p in r["placements"][:2]] == ["web-1", "web-2"]
    assert len(r["placements"]) == 10
    usage = {n["nodeName"]: n for n in r["nodes"]}
    assert usage["a1"]["requestedBefore"] == {"cpu": "1"}
    assert usage["a1"]["requestedAfter"] == {"cpu": "2", "memory": "2Gi"}
    assert "t" not in usage
    assert out.subjects.pods == ["default/web"]


def test_zone_spread_between_the_replicas_counts():
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
               "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]  # fmt: skip
    r = _decide({"pod": _web(topologySpreadConstraints=spread)}).result
    per_zone: dict[str, int] = {}
    for p in r["placements"]:
        zone = ZONES[p["nodeName"]]
        per_zone[zone] = per_zone.get(zone, 0) + 1
        assert abs(per_zone.get("za", 0) - per_zone.get("zb", 0)) <= 1
    # zb holds 4 at most, so za stops at 5
    assert per_zone == {"za": 5, "zb": 4}
    assert "didn't match pod topology spread constraints" in r["stopReason"]["message"]


def test_anti_affinity_between_the_replicas_counts():
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "topologyKey": "kubernetes.io/hostname",
        "labelSelector": {"matchLabels": {"app": "web"}}}]}}  # fmt: skip
    r = _decide({"pod": _web(affinity=anti)}).result
    assert r["replicas"] == 3
    assert r["templates"][0]["nodes"] == {"a1": 1, "a2": 1, "b1": 1}
    assert r["stopReason"]["nodeCounts"]["node(s) didn't match pod anti-affinity rules"] == 3


def test_templates_in_turn_max_replicas_and_excluded_nodes():
    db = pod("db", cpu="1")
    r = _decide({"pods": [_web(), db], "maxReplicas": 3, "excludeNodes": ["a2"]}).result
    web, dbt = r["templates"]
    assert web["replicas"] == 3 and web["stopReason"]["reason"] == "MaxReplicas"
    assert "a2" not in web["nodes"] and "a2" not in dbt["nodes"]
    # after 3 web replicas (1.5 cpu), db gets what is left: b1 or a1 whole cpus
    assert dbt["replicas"] == sum(dbt["nodes"].values())
    assert [p["template"] for p in r["placements"]] == [0] * 3 + [1] * dbt["replicas"]
    assert r["stopReason"] == dbt["stopReason"]


def test_a_run_limit_truncates():
    r = _decide({"pod": _web()}, limits=SimulationLimits(max_steps=4)).result
    assert r["truncated"] is True and r["replicas"] == 4
    assert r["stopReason"]["reason"] == "MaxSteps"


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({}, "pod"),
        ({"pod": _web(), "pods": [_web()]}, "pod"),
        ({"pods": []}, "pods"),
        ({"pod": pod("x", "a1")}, "pod.spec.nodeName"),
        ({"pods": [_web(), _web()]}, "pods[1].metadata.name"),
        ({"pod": _web(), "maxReplicas": 0}, "maxReplicas"),
        ({"pod": _web(), "maxReplicas": 100_001}, "maxReplicas"),
        ({"pod": _web(), "maxReplicas": "3"}, "maxReplicas"),
        ({"pod": _web(), "excludeNodes": "a1"}, "excludeNodes"),
        ({"pod": _web(), "tieBreak": {"seed": "x"}}, "tieBreak.seed"),
    ],
)
def test_bad_input_names_the_field(params, path):
    with pytest.raises(ValidationError) as err:
        _decide(params)
    assert path in {e["path"] for e in flatten_messages(err.value.messages)}


def test_an_unknown_node_to_exclude_names_it():
    with pytest.raises(DecisionInputError) as err:
        _decide({"pod": _web(), "excludeNodes": ["a1", "nope"]})
    assert err.value.path == "excludeNodes[1]"


def test_through_the_api_with_replay(api):
    body = {"snapshot": {"objects": kube_list(*OBJECTS)}, "pod": _web(), "maxReplicas": 5,
            "tieBreak": {"seed": 3}}  # fmt: skip
    response = api.post("/v1/decisions/capacity", json=body)
    assert response.status_code == 201, response.json
    assert response.json["result"]["replicas"] == 5
    replay = api.post(f"/v1/decisions/{response.json['id']}/replay")
    assert replay.status_code == 200 and replay.json["matches"] is True
    bad = api.post("/v1/decisions/capacity", json={**body, "maxReplicas": 0})
    assert bad.status_code == 422
    assert bad.headers["Content-Type"].startswith("application/problem+json")
    assert "maxReplicas" in str(bad.json)
