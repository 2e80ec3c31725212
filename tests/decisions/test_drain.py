"""Decision kind "drain" (service.decisions.drain) through the API: the answer per pod, node
and budget, the recreated pods placed by the queue on the cordoned cluster, bad input as a
422 naming the field, replay and export."""

from __future__ import annotations

import json

import pytest

from tests.conftest import kube_list, node
from tests.engine.drain.helpers import owned, pdb

WEB = {"matchLabels": {"app": "web"}}


def _cluster(*extra):
    """n1 and n2 to drain, n3 with room for one 1-cpu pod, n4 full; web pods under a budget
    allowing one disruption."""
    return kube_list(
        node("n1", cpu="4"),
        node("n2", cpu="4"),
        node("n3", cpu="2"),
        owned("web-a", "n1", "ReplicaSet", "web", cpu="1"),
        owned("web-b", "n2", "ReplicaSet", "web", cpu="1"),
        owned("db-0", "n1", "StatefulSet", "db", cpu="1"),
        owned("filler", "n3", "ReplicaSet", "fill", cpu="1"),
        pdb("web-pdb", WEB, 1, desiredHealthy=1, currentHealthy=2),
        *extra,
    )


def _snapshot(api, *extra) -> str:
    response = api.post(
        "/v1/snapshots",
        json={"objects": _cluster(*extra), "capturedAt": "2026-11-20T10:00:00Z"},
    )
    assert response.status_code == 201, response.json
    return response.json["id"]


def _drain(api, snapshot_id, **params):
    response = api.post("/v1/decisions/drain", json={"snapshotId": snapshot_id, **params})
    assert response.status_code == 201, response.json
    return response.json


def _by_pod(result):
    return {p["pod"]["name"]: p for p in result["pods"]}


def test_a_budget_lets_one_pod_go_and_blocks_the_next(api):
    sid = _snapshot(api)
    result = _drain(api, sid, nodes=["n1", "n2"], options={"ignoreErrors": True})["result"]
    pods = _by_pod(result)
    assert pods["web-a"]["outcome"] == "evicted"
    assert pods["web-a"]["pdb"] == {"name": "web-pdb", "disruptionsAllowed": 1}
    assert pods["web-b"]["outcome"] == "blocked"
    assert pods["web-b"]["reason"] == "DisruptionBudget"
    assert pods["web-b"]["evictionStatus"] == 429
    assert (
        "The disruption budget web-pdb needs 1 healthy pods and has 2 currently"
        in (pods["web-b"]["message"])
    )
    assert result["budgets"] == [
        {"namespace": "default", "name": "web-pdb", "disruptionsAllowedBefore": 1,
         "disruptionsAllowedAfter": 0},
    ]  # fmt: skip
    # Two recreated pods, one cpu each; only n3 (1 cpu free) is schedulable.
    copies = {p["pod"]["name"]: p["recreated"] for p in result["pods"] if p.get("recreated")}
    assert copies["db-0"]["name"] == "db-0"
    placed = [c for c in copies.values() if c["outcome"] == "bound"]
    assert [c["node"] for c in placed] == ["n3"]
    assert len(copies) == 2 and result["counts"]["pending"] == 1
    nodes = {n["nodeName"]: n for n in result["nodes"]}
    assert nodes["n1"]["drained"] and not nodes["n1"]["drainable"]
    assert not nodes["n2"]["drained"] and not nodes["n2"]["drainable"]
    assert result["stoppedAt"] is None


def test_recreated_pods_never_land_on_the_cordoned_nodes(api):
    sid = _snapshot(api)
    result = _drain(api, sid, nodes=["n2"])["result"]
    pods = _by_pod(result)
    copy = pods["web-b"]["recreated"]
    assert pods["web-b"]["outcome"] == "evicted" and copy["outcome"] == "bound"
    assert copy["node"] in ("n1", "n3") and copy["name"].startswith("web-")
    assert result["nodes"][0]["drainable"]
    step = result["queue"]["steps"][0]
    assert step["outcome"] == "bound" and step["node"] == copy["node"]


def test_defaults_are_kubectls_a_daemonset_pod_fails_the_node(api):
    sid = _snapshot(api, owned("agent-x", "n1", "DaemonSet", "agent"))
    result = _drain(api, sid, nodes=["n1"])["result"]
    pods = _by_pod(result)
    assert pods["agent-x"]["outcome"] == "kept" and pods["agent-x"]["reason"] == "DaemonSet"
    assert pods["web-a"]["reason"] == "NodeNotDrained"
    node_answer = result["nodes"][0]
    assert not node_answer["drained"] and not node_answer["drainable"]
    assert "use --ignore-daemonsets to ignore" in node_answer["reasons"][0]
    result = _drain(api, sid, nodes=["n1"], options={"ignoreDaemonSets": True})["result"]
    assert _by_pod(result)["agent-x"]["reason"] == "DaemonSet"
    assert result["nodes"][0]["drained"]


def test_disable_eviction_deletes_through_the_budget(api):
    sid = _snapshot(api)
    result = _drain(api, sid, nodes=["n1", "n2"], options={"disableEviction": True})["result"]
    assert {p["outcome"] for p in result["pods"]} == {"evicted"}
    assert {p["reason"] for p in result["pods"]} == {"Deleted"}
    assert result["budgets"] == []
    result = _drain(api, sid, nodes=["n1", "n2"], options={"respectPodDisruptionBudgets": False})[
        "result"
    ]
    assert {p["reason"] for p in result["pods"]} == {"Deleted"}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"nodes": []}, "nodes"),
        ({}, "nodes"),
        ({"nodes": ["nope"]}, "nodes[0]"),
        ({"nodes": ["n1", "n1"]}, "nodes.1"),
        (
            {
                "nodes": ["n1"],
                "options": {"disableEviction": True, "respectPodDisruptionBudgets": True},
            },
            "options.respectPodDisruptionBudgets",
        ),
        ({"nodes": ["n1"], "options": {"force": "yes"}}, "options.force"),
        ({"nodes": ["n1"], "options": {"drainEverything": True}}, "options.drainEverything"),
        ({"nodes": ["n1"], "tieBreak": {"seed": "x"}}, "tieBreak.seed"),
        ({"nodes": ["n1"], "schedulerConfiguration": {"kind": "Nope"}}, "schedulerConfiguration"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(api, params, field):
    sid = _snapshot(api)
    before = api.get("/v1/decisions").json["items"]
    response = api.post("/v1/decisions/drain", json={"snapshotId": sid, **params})
    assert response.status_code == 422, response.json
    assert response.headers["Content-Type"].startswith("application/problem+json")
    named = json.dumps(response.json)
    assert field.split(".")[0] in named and field.split(".")[-1].split("[")[0] in named
    assert api.get("/v1/decisions").json["items"] == before  # nothing stored


def test_yaml_and_json_requests_decide_alike(api):
    import yaml

    sid = _snapshot(api)
    body = {"snapshotId": sid, "nodes": ["n2"]}
    as_yaml = api.post(
        "/v1/decisions/drain", data=yaml.safe_dump(body), content_type="application/yaml"
    )
    assert as_yaml.status_code == 201, as_yaml.json
    assert as_yaml.json["result"] == _drain(api, sid, nodes=["n2"])["result"]


def test_a_drain_is_stored_replayed_exported_and_verified(api):
    sid = _snapshot(api)
    record = _drain(api, sid, nodes=["n1", "n2"], options={"ignoreErrors": True})
    replay = api.post(f"/v1/decisions/{record['id']}/replay", json={})
    assert replay.status_code == 200, replay.json
    assert replay.json["differences"] == []
    listed = api.get("/v1/decisions?nodeName=n2").json["items"]
    assert [item["id"] for item in listed] == [record["id"]]
    exported = api.get("/v1/decisions/export")
    assert exported.status_code == 200
    assert record["id"] in exported.get_data(as_text=True)
    verified = api.get("/v1/audit/verify", role="read").json
    assert verified["ok"] is True and verified["records"] >= 1


def test_a_queue_past_its_limit_stops_and_says_so():
    from service.decisions import KINDS
    from service.decisions.run import compute
    from service.decisions.simulation import SimulationLimits
    from service.engine.objects import Cluster
    from tests.conftest import snapshot_from_objects

    cluster = Cluster(snapshot_from_objects(_cluster()["items"]))
    outcome = compute(
        KINDS["drain"], cluster, {"nodes": ["n1"]}, limits=SimulationLimits(max_steps=1)
    )
    queue = outcome.result["queue"]
    assert queue["truncated"] and queue["limit"] == "MaxSteps" and len(queue["steps"]) == 1
    assert len(queue["pending"]) == 1
    assert "stopped at its limit (MaxSteps) after 1 cycles" in outcome.result["message"]
    copies = [p["recreated"] for p in outcome.result["pods"] if p.get("recreated")]
    assert sorted(c["outcome"] for c in copies) == ["bound", "unschedulable"]


def test_a_tie_break_seed_is_reproducible_and_named(api):
    sid = _snapshot(api, node("n5", cpu="8"), node("n6", cpu="8"))  # empty twins tie
    first = _drain(api, sid, nodes=["n1"], tieBreak={"seed": 3})["result"]
    again = _drain(api, sid, nodes=["n1"], tieBreak={"seed": 3})["result"]
    assert first["queue"] == again["queue"]
    tied = [s for s in first["queue"]["steps"] if len(s["ties"]) > 1]
    assert tied and all("reservoir sampling from tieBreak.seed" in s["message"] for s in tied)


def test_skip_wait_for_delete_timeout_reads_the_snapshots_time(api):
    """A pod deleted at 09:00 in a snapshot captured at 10:00: past a 60 s timeout it is
    skipped (the node can go); without the option kubectl waits for it (deleted, no
    budget, not recreated by its ReplicaSet, which replaced it when deletion began)."""
    gone = owned("old", "n2", "ReplicaSet", "web")
    gone["metadata"]["deletionTimestamp"] = "2026-11-20T09:00:00Z"
    sid = _snapshot(api, gone)
    result = _drain(api, sid, nodes=["n2"], options={"skipWaitForDeleteTimeout": 60})["result"]
    old = _by_pod(result)["old"]
    assert (old["outcome"], old["reason"]) == ("kept", "SkipDeleted")
    assert result["nodes"][0]["drainable"]
    result = _drain(api, sid, nodes=["n2"])["result"]
    old = _by_pod(result)["old"]
    assert (old["outcome"], old["recreated"]) == ("evicted", None)
    assert "pdb" not in old  # a pod being deleted ignores budgets
