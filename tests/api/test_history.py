"""Decision records over HTTP (api/history.py): recording, filters (and those the contract
forbids), replay, verify, export, inline snapshots."""

from __future__ import annotations

from urllib.parse import quote

import orjson
import pytest
from sqlalchemy import update

from service.store.models import DecisionRow
from tests.api.helpers import busy_node_snapshot
from tests.conftest import kube_list, node, pod
from tests.store.helpers import HOURS, OFFSET_TIMES, at_hours


def _admit(api, snapshot_id: str, name: str, node_name: str = "n1", cpu: str = "1"):
    return api.post(
        "/v1/decisions/admission",
        json={
            "snapshotId": snapshot_id,
            "nodeName": node_name,
            "pod": pod(name, cpu=cpu, memory="64Mi"),
        },
        role="decide",
    )


def test_decision_is_recorded_and_listed_with_filters(api):
    snap = busy_node_snapshot(api)
    first = _admit(api, snap, "a")
    assert first.status_code == 201, first.json
    record = first.json
    assert first.headers["X-Decision-ID"] == record["id"]
    assert record["kind"] == "admission" and record["snapshotId"] == snap
    assert record["result"]["admitted"] is False  # 1500m used of 2 cores, 1 more asked
    assert record["request"]["snapshotId"] == snap and "snapshot" not in record["request"]
    _admit(api, snap, "b", node_name="n2")
    assert api.get(f"/v1/decisions/{record['id']}", role="read").json == record
    by_node = api.get("/v1/decisions?nodeName=n2", role="read").json["items"]
    assert [r["request"]["pod"]["metadata"]["name"] for r in by_node] == ["b"]
    by_pod = api.get("/v1/decisions?pod=default/a", role="read").json["items"]
    assert [r["id"] for r in by_pod] == [record["id"]]
    page = api.get("/v1/decisions?limit=1", role="read").json
    older = api.get(f"/v1/decisions?limit=1&cursor={page['nextCursor']}", role="read").json
    assert older["items"][0]["id"] == record["id"] and older["nextCursor"] is None
    # A snapshot referred to by a decision cannot be deleted.
    assert api.delete(f"/v1/snapshots/{snap}", role="admin").status_code == 409


def test_inline_snapshot_is_stored_with_the_decision(api):
    cluster = kube_list(node("n1"))
    response = api.post(
        "/v1/decisions/admission",
        json={"snapshot": cluster, "nodeName": "n1", "pod": pod("x", cpu="100m")},
        role="decide",
    )
    assert response.status_code == 201, response.json
    snap = response.json["snapshotId"]
    assert api.get(f"/v1/snapshots/{snap}", role="read").json["counts"]["nodes"] == 1


def test_bad_requests_record_nothing(api):
    snap = busy_node_snapshot(api)
    cases = [
        ({"nodeName": "n1", "pod": pod("x")}, "snapshotId"),
        (
            {"snapshotId": snap, "snapshot": kube_list(), "nodeName": "n1", "pod": pod("x")},
            "snapshotId",
        ),
        ({"snapshotId": "missing", "nodeName": "n1", "pod": pod("x")}, "snapshotId"),
        ({"snapshotId": snap, "nodeName": "nope", "pod": pod("x")}, "nodeName"),
        ({"snapshotId": snap, "pod": pod("x")}, "nodeName"),
        (
            {
                "snapshotId": snap,
                "nodeName": "n1",
                "pod": {"kind": "Node", "metadata": {"name": "x"}},
            },
            "pod",
        ),
        (
            {
                "snapshot": {"kind": "List", "items": [{"kind": "Pod", "metadata": {}}]},
                "nodeName": "n1",
                "pod": pod("x"),
            },
            "snapshot.items[0].metadata.name",
        ),
    ]
    for body, path in cases:
        response = api.post("/v1/decisions/admission", json=body, role="decide")
        assert response.status_code == 422, (body, response.json)
        assert any(e["path"].startswith(path) for e in response.json["errors"]), (
            path,
            response.json,
        )
    deep = b'{"snapshotId":"x","pod":' + b"[" * 3000 + b"]" * 3000 + b"}"
    assert (
        api.post(
            "/v1/decisions/admission", data=deep, content_type="application/json", role="decide"
        ).status_code
        == 400
    )
    assert (
        api.post(
            "/v1/decisions/nonsense", json={"snapshotId": snap}, role="decide", validate=False
        ).status_code
        == 404
    )
    assert api.get("/v1/decisions", role="read").json["items"] == []
    assert (
        api.get("/v1/snapshots", role="read").json["items"][0]["id"] == snap
    )  # no inline snapshot stored


def test_replay_matches_and_reports_differences(api, app):
    snap = busy_node_snapshot(api)
    record = _admit(api, snap, "a").json
    replay = api.post(f"/v1/decisions/{record['id']}/replay", role="read").json
    assert replay["matches"] is True and replay["differences"] == []
    with app.extensions["verdict.db"].session(write=True) as session:
        tampered = dict(record["result"], admitted=True)
        session.execute(
            update(DecisionRow).where(DecisionRow.id == record["id"]).values(result=tampered)
        )
    replay = api.post(f"/v1/decisions/{record['id']}/replay", role="decide").json
    assert replay["matches"] is False
    assert {"path": "result.admitted", "stored": True, "replayed": False} in replay["differences"]
    verify = api.get("/v1/audit/verify", role="read").json
    assert verify == {"ok": False, "records": 1, "firstBadId": record["id"]}


def test_verify_and_export(api):
    snap = busy_node_snapshot(api)
    ids = [_admit(api, snap, f"p{i}").json["id"] for i in range(3)]
    assert api.get("/v1/audit/verify", role="read").json == {
        "ok": True,
        "records": 3,
        "firstBadId": None,
    }
    export = api.get("/v1/decisions/export", role="read")
    assert export.headers["Content-Type"].startswith("application/x-ndjson")
    lines = [orjson.loads(line) for line in export.get_data().splitlines()]
    assert [r["id"] for r in lines] == ids
    later = api.get("/v1/decisions/export?since=2999-01-01T00:00:00Z", role="read").get_data()
    assert later == b""


def test_unknown_filters_and_kinds_are_400(api):
    response = api.get("/v1/decisions?nodename=n1", role="read")
    assert response.status_code == 400
    assert response.json["errors"] == [{"path": "nodename", "message": "unknown filter"}]
    response = api.get("/v1/decisions?kind=admision", role="read")
    assert response.status_code == 400 and response.json["errors"][0]["path"] == "kind"
    assert api.get("/v1/decisions?kind=prune", role="read").status_code == 200


@pytest.mark.parametrize("query", ["snapshotId=", "snapshotId=abc", "since=", "until="])
def test_list_filters_the_spec_forbids_are_a_400(api, query):
    assert api.get(f"/v1/decisions?{query}", role="read").status_code == 400


@pytest.mark.parametrize(("moment", "before"), OFFSET_TIMES)
def test_since_and_until_compare_instants(api, app, moment, before):
    """`since`/`until` in any offset select by the instant, on both databases (issue 24)."""
    snap = busy_node_snapshot(api)
    ids = [_admit(api, snap, f"p{i}").json["id"] for i in range(len(HOURS))]
    at_hours(app.extensions["verdict.db"], ids)
    query = quote(moment)
    until = api.get(f"/v1/decisions?until={query}", role="read").json["items"]
    since = api.get(f"/v1/decisions?since={query}", role="read").json["items"]
    export = api.get(f"/v1/decisions/export?since={query}", role="read").get_data()
    assert [r["id"] for r in until] == ids[:before][::-1]
    assert [r["id"] for r in since] == ids[before:][::-1]
    assert [orjson.loads(line)["id"] for line in export.splitlines()] == ids[before:]
