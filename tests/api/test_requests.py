"""Queries that say what is wrong (issue 15): unknown parameters, one name for nodes, times
as dates, and malformed times that say how to write one."""

from __future__ import annotations

import pytest

from tests.conftest import kube_list, node, pod


@pytest.fixture
def snapshot_id(api):
    body = kube_list(node("n1"), node("n2"), pod("a", "n1"), pod("b", "n2"))
    return api.post("/v1/snapshots", json=body).json["id"]


def test_pods_take_node_name_as_every_route_does(api, snapshot_id):
    by_new = api.get(f"/v1/snapshots/{snapshot_id}/pods?nodeName=n1").json["items"]
    by_old = api.get(f"/v1/snapshots/{snapshot_id}/pods?node=n1").json["items"]
    assert [p["name"] for p in by_new] == [p["name"] for p in by_old] == ["a"]
    clash = api.get(f"/v1/snapshots/{snapshot_id}/pods?node=n1&nodeName=n2")
    assert clash.status_code == 400 and clash.json["errors"][0]["path"] == "nodeName"


@pytest.mark.parametrize(
    "path",
    [
        "/v1/snapshots?clusterName=x",
        "/v1/snapshots/{id}/nodes?node=n1",
        "/v1/snapshots/{id}/pods?nodename=n1",
        "/v1/decisions/export?until=2026-11-20",
        "/v1/decisions?node=n1",
    ],
)
def test_a_parameter_the_route_does_not_take_is_named(api, snapshot_id, path):
    response = api.get(path.format(id=snapshot_id))
    assert response.status_code == 400
    name = path.split("?")[1].split("=")[0]
    assert response.json["errors"][0]["path"] == name


def test_since_and_until_take_a_date(api):
    api.post("/v1/snapshots", json=kube_list(node("n1")))
    assert api.get("/v1/decisions?since=2020-01-01&until=2999-12-31").status_code == 200
    assert api.get("/v1/decisions/export?since=2020-01-01").status_code == 200


@pytest.mark.parametrize(
    ("raw", "hint"),
    [
        ("yesterday", "not an RFC 3339 time"),
        ("2026-11-20T10:00:00", "missing time zone"),
        ("2026-11-20T10:00:00+01:00", "send %2B"),  # the '+' unescaped arrives as a space
    ],
)
def test_a_malformed_time_says_how_to_write_one(api, raw, hint):
    response = api.get(f"/v1/decisions?since={raw}")
    assert response.status_code == 400
    message = response.json["errors"][0]["message"]
    assert hint in message and "2026-11-20T10:00:00Z" in message and "%2B" in message
