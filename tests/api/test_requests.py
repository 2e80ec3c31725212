"""Reading requests (api/requests.py): queries that say what is wrong (unknown parameters,
times as dates, malformed times that say how to write one, cursors this API did not issue),
NUL and 64 KiB values in the query or path, and decision bodies with a repeated key or a NUL.
Each answers 4xx, never 500, and the same way on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from tests.api.helpers import DUPLICATE_POD, LONG, busy_node_snapshot, two_node_snapshot
from tests.conftest import kube_list, node, pod


@pytest.fixture
def snapshot_id(api):
    return two_node_snapshot(api)


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


@pytest.mark.parametrize("name", ["since", "until"])
@pytest.mark.parametrize("raw", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00%2B14:00"])
def test_a_time_whose_instant_is_out_of_range_is_named(api, name, raw):
    """Past the year 9999 (or before the year 1) in UTC: no database holds it (issue 24)."""
    for path in ("/v1/decisions", "/v1/decisions/export")[: 2 if name == "since" else 1]:
        response = api.get(f"{path}?{name}={raw}")
        assert response.status_code == 400, response.json
        assert response.json["errors"][0]["path"] == name
        assert "out of range" in response.json["errors"][0]["message"]


def test_forged_or_garbage_cursors_are_400(api):
    from service.api.requests import encode_cursor

    snap = busy_node_snapshot(api)
    for path in (
        "/v1/decisions",
        f"/v1/snapshots/{snap}/pods",
        f"/v1/snapshots/{snap}/nodes",
        "/v1/snapshots",
    ):
        for cursor in (
            encode_cursor("-5"),
            encode_cursor("abc"),
            "%%%",
            encode_cursor(str(2**63)),  # past the databases' BIGINT: was a 500
            encode_cursor("12345678901234567890123"),
            encode_cursor("\u00b2"),  # a digit to str.isdigit
            encode_cursor("+5"),
            encode_cursor("9999-12-31T23:59:59-14:00|x"),  # out of range in UTC
            encode_cursor("2026-11-20T10:00:00|x"),  # no offset
        ):
            response = api.get(f"{path}?cursor={cursor}", role="read")
            assert response.status_code == 400, (path, cursor)
            assert response.json["errors"] == [
                {"path": "cursor", "message": "not a cursor this API issued"}
            ]


def test_a_repeated_key_in_a_decision_body_is_a_400(api):
    body = (
        b'{"nodeName": "n1", "nodeName": "n2", "snapshot": {"objects": '
        + DUPLICATE_POD.replace(b', "cpu": "100"', b"")
        + b'}, "pod": {"metadata": {"name": "x"}, "spec": {"containers": []}}}'
    )
    response = api.post(
        "/v1/decisions/admission", data=body, content_type="application/json", role="decide"
    )
    assert response.status_code == 400
    assert response.json["errors"][0]["path"] == "nodeName"


def test_a_nul_in_a_decision_body_is_a_400(api):
    response = api.post(
        "/v1/decisions/admission",
        role="decide",
        json={
            "snapshot": {"objects": kube_list(node("n1"))},
            "nodeName": "n1\x00",
            "pod": pod("x"),
        },
    )
    assert response.status_code == 400
    assert response.json["errors"][0]["path"] == "nodeName"


@pytest.mark.parametrize(
    "url",
    [
        "/v1/snapshots?cluster=a%00b",
        "/v1/snapshots?label=a%3Db%00",
        "/v1/snapshots?cursor=%00",
        "/v1/decisions?node=n%001",
        "/v1/decisions?pod=default/p%00",
        "/v1/decisions?kind=%00",
        "/v1/decisions?snapshotId=%00",
        "/v1/snapshots/abc%00",
        "/v1/decisions/abc%00",
    ],
)
def test_a_nul_in_the_query_or_path_is_a_400(api, url):
    response = api.get(url, role="read", validate=False)
    assert response.status_code == 400
    assert response.headers["Content-Type"] == "application/problem+json"


@pytest.mark.parametrize(
    "url",
    [
        f"/v1/snapshots?cluster={LONG}",
        f"/v1/snapshots?label=a%3D{LONG}",
        f"/v1/decisions?node={LONG}",
        f"/v1/decisions?pod=default/{LONG}",
        f"/v1/decisions?snapshotId={LONG}",
    ],
)
def test_a_64_kib_query_value_finds_nothing_on_both_databases(api, url):
    response = api.get(url, role="read", validate=False)
    assert response.status_code in (200, 400), response.get_data()[:300]
    if response.status_code == 200:
        assert response.json["items"] == []
