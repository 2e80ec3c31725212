"""The cluster a decision request names (decisions/cluster.py): an inline snapshot is read as
a stored one would be, its errors named under ``snapshot``."""

from __future__ import annotations


def test_an_inline_list_without_an_items_array_is_a_422_and_records_nothing(api):
    body = {"snapshot": {"apiVersion": "v1", "kind": "List", "items": None}}
    response = api.post(
        "/v1/decisions/node-eviction-rate", json=body, role="decide", validate=False
    )
    assert response.status_code == 422
    assert response.json["errors"][0]["path"] == "snapshot.items"
    assert api.get("/v1/decisions", role="read").json["items"] == []
