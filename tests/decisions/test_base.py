"""What the decision kinds share (decisions/base.py): ``now`` defaults to the snapshot's
capturedAt, then to when the snapshot was stored; ``"now": null`` is no ``now``."""

from __future__ import annotations

from tests.decisions.helpers import evict, stored_snapshot


def test_now_defaults_to_captured_at_then_to_when_the_snapshot_was_stored(api):
    assert evict(api, stored_snapshot(api))["nowSource"] == "capturedAt"
    assert evict(api, stored_snapshot(api), now="2026-11-20T11:00:00Z")["nowSource"] == "request"
    snapshot_id = stored_snapshot(api, captured_at=None)
    stored = api.get(f"/v1/snapshots/{snapshot_id}").json["createdAt"]
    result = evict(api, snapshot_id)
    assert result["nowSource"] == "createdAt"
    assert result["now"][:19] == stored[:19]
    rate = api.post("/v1/decisions/node-eviction-rate", json={"snapshotId": snapshot_id})
    assert rate.status_code == 201 and rate.json["result"]["nowSource"] == "createdAt"
    # A replay decides at the same stored time.
    decision_id = api.post(
        "/v1/decisions/eviction", json={"snapshotId": snapshot_id, "nodeName": "n1"}
    ).json["id"]
    assert api.post(f"/v1/decisions/{decision_id}/replay").json["matches"] is True


def test_now_null_is_read_as_absent_and_not_stored(api):
    """It was stored as sent, and a node-eviction-rate record holding it broke the response
    schema of every history page (issue 24)."""
    snapshot_id = stored_snapshot(api)
    for kind, extra in (("eviction", {"nodeName": "n1"}), ("node-eviction-rate", {})):
        response = api.post(
            f"/v1/decisions/{kind}", json={"snapshotId": snapshot_id, "now": None, **extra}
        )
        assert response.status_code == 201, response.json
        assert response.json["result"]["nowSource"] == "capturedAt"
        assert "now" not in response.json["request"]
    page = api.get("/v1/decisions")  # checked against the response schema by the client
    assert page.status_code == 200 and len(page.json["items"]) == 2
