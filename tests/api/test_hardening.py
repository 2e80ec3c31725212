"""Issue 14: inputs a careless or hostile client sends answer 4xx, never 500, and the two
databases answer them the same way (run this file on SQLite and on PostgreSQL)."""

from __future__ import annotations

import pytest

from tests.conftest import kube_list, node, pod

# --- quantities at the int64 edges ---------------------------------------------------------


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


# --- duplicate keys: strict decoding, never last-one-wins ----------------------------------

_DUPLICATE_POD = (
    b'{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n1"}},'
    b' {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": {'
    b'"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "cpu": "100"}}}]}}]}'
)


def test_a_repeated_json_key_is_a_400_naming_its_path(api):
    response = api.post(
        "/v1/snapshots", data=_DUPLICATE_POD, content_type="application/json", role="decide"
    )
    assert response.status_code == 400
    assert response.json["errors"][0]["path"] == (
        "items[1].spec.containers[0].resources.requests.cpu"
    )
    assert api.get("/v1/snapshots", role="read").json["items"] == []


def test_a_repeated_key_in_a_decision_body_is_a_400(api):
    body = (
        b'{"nodeName": "n1", "nodeName": "n2", "snapshot": {"objects": '
        + _DUPLICATE_POD.replace(b', "cpu": "100"', b"")
        + b'}, "pod": {"metadata": {"name": "x"}, "spec": {"containers": []}}}'
    )
    response = api.post(
        "/v1/decisions/admission", data=body, content_type="application/json", role="decide"
    )
    assert response.status_code == 400
    assert response.json["errors"][0]["path"] == "nodeName"


def test_an_object_of_more_keys_than_the_scanner_holds_is_a_413(api):
    labels = ",".join(f'"k{i}":"v"' for i in range((1 << 20) + 1))
    body = (
        b'{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n1", "labels": {'
        + labels.encode()
        + b"}}}]}"
    )
    response = api.post("/v1/snapshots", data=body, content_type="application/json", role="decide")
    assert response.status_code == 413
    assert response.json["errors"][0]["path"] == "items[0].metadata.labels"
    assert api.get("/v1/snapshots", role="read").json["items"] == []


def test_a_repeated_yaml_key_is_a_400_naming_its_path(api):
    body = b"kind: List\nitems:\n- kind: Node\n  metadata:\n    name: n1\n    name: n2\n"
    response = api.post("/v1/snapshots", data=body, content_type="application/yaml", role="decide")
    assert response.status_code == 400
    assert response.json["errors"][0]["path"] == "items[0].metadata.name"
    assert api.get("/v1/snapshots", role="read").json["items"] == []


# --- strings: names, labels and NUL, the same answer on both databases -----------------------

_LONG = "a" * 65536


def _with(item: dict, **metadata) -> dict:
    item["metadata"].update(metadata)
    return item


@pytest.mark.parametrize(
    ("item", "path"),
    [
        (_with(pod("p", "n1"), name=_LONG), "items[1].metadata.name"),
        (_with(pod("p", "n1"), name="Upper"), "items[1].metadata.name"),
        (_with(pod("p", "n1"), name="a_b"), "items[1].metadata.name"),
        (_with(pod("p", "n1"), namespace="a.b"), "items[1].metadata.namespace"),
        (_with(pod("p", "n1"), namespace="x" * 64), "items[1].metadata.namespace"),
        (_with(pod("p", "n1"), labels={"app": "-bad"}), "items[1].metadata.labels.app"),
        (_with(pod("p", "n1"), labels={"app": "v" * 64}), "items[1].metadata.labels.app"),
        (_with(pod("p", "n1"), labels={"a/b/c": "v"}), "items[1].metadata.labels['a/b/c']"),
        (_with(pod("p", "n1"), labels={"/app": "v"}), "items[1].metadata.labels['/app']"),
        (_with(pod("p", "n1"), labels={_LONG: "v"}), f"items[1].metadata.labels[{_LONG[:80]!r}]"),
        (
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}},
            "items[1].metadata.name",
        ),
        (
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1svc"}},
            "items[1].metadata.name",
        ),
    ],
)
def test_names_and_labels_the_api_server_refuses_are_a_422(api, item, path):
    response = api.post("/v1/snapshots", json=kube_list(node("n1"), item), role="decide")
    assert response.status_code == 422, response.json
    assert path in [e["path"] for e in response.json["errors"]]
    assert api.get("/v1/snapshots", role="read").json["items"] == []


def test_names_and_labels_the_api_server_accepts_are_stored(api):
    accepted = _with(
        pod("p-1.x", "n1", namespace="team-a"),
        labels={"example.com/app": "web_1.2-x", "empty": "", "a" * 63: "b" * 63},
    )
    cluster = kube_list(node("ip-10-0-0-1.eu-west-1.compute.internal"), accepted)
    assert api.post("/v1/snapshots", json=cluster, role="decide").status_code == 201


@pytest.mark.parametrize(
    ("envelope", "path"),
    [
        ({"cluster": _LONG}, "cluster"),
        ({"name": _LONG}, "name"),
        ({"labels": {"change": "CHG 1"}}, "labels.change"),
    ],
)
def test_envelope_fields_past_what_is_stored_are_a_422(api, envelope, path):
    body = {"objects": kube_list(node("n1")), **envelope}
    response = api.post("/v1/snapshots", json=body, role="decide")
    assert response.status_code == 422
    assert [e["path"] for e in response.json["errors"]] == [path]


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (kube_list(_with(node("n1"), name="n\x001")), "items[0].metadata.name"),
        ({"objects": kube_list(node("n1")), "cluster": "prod\x00"}, "cluster"),
        ({"objects": kube_list(node("n1")), "labels": {"a\x00": "b"}}, "labels.a\x00"),
    ],
)
def test_a_nul_in_a_body_is_a_400_naming_the_field(api, body, path):
    response = api.post("/v1/snapshots", json=body, role="decide", validate=False)
    assert response.status_code == 400
    assert response.json["errors"][0]["path"] == path
    assert api.get("/v1/snapshots", role="read").json["items"] == []


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
        f"/v1/snapshots?cluster={_LONG}",
        f"/v1/snapshots?label=a%3D{_LONG}",
        f"/v1/decisions?node={_LONG}",
        f"/v1/decisions?pod=default/{_LONG}",
        f"/v1/decisions?snapshotId={_LONG}",
    ],
)
def test_a_64_kib_query_value_finds_nothing_on_both_databases(api, url):
    response = api.get(url, role="read", validate=False)
    assert response.status_code in (200, 400), response.get_data()[:300]
    if response.status_code == 200:
        assert response.json["items"] == []


@pytest.mark.parametrize(
    ("metadata", "path"),
    [
        ({"name": _LONG, "namespace": "default"}, "pod.metadata.name"),
        ({"name": "x", "namespace": _LONG}, "pod.metadata.namespace"),
        ({"name": "x", "labels": {"k": "not a value"}}, "pod.metadata.labels.k"),
    ],
)
def test_a_decision_pod_named_as_no_cluster_could_name_it_is_a_422(api, metadata, path):
    request_pod = pod("x")
    request_pod["metadata"] = metadata
    response = api.post(
        "/v1/decisions/admission",
        role="decide",
        json={"snapshot": {"objects": kube_list(node("n1"))}, "nodeName": "n1", "pod": request_pod},
    )
    assert response.status_code == 422
    assert [e["path"] for e in response.json["errors"]] == [path]


# --- what the contract fuzzer found ------------------------------------------------------------


def test_a_request_id_past_its_max_length_is_a_400_and_one_at_it_is_echoed(api):
    refused = api.get("/healthz", headers={"X-Request-ID": "r" * 201}, role=None, validate=False)
    assert refused.status_code == 400
    assert refused.json["errors"][0]["path"] == "X-Request-ID"
    echoed = api.get("/healthz", headers={"X-Request-ID": "r" * 200}, role=None)
    assert echoed.headers["X-Request-ID"] == "r" * 200


def test_a_405_names_the_allowed_methods(api):
    response = api.request("PUT", "/v1/snapshots", role="admin", validate=False)
    assert response.status_code == 405
    assert set(response.headers["Allow"].split(", ")) >= {"GET", "POST"}


@pytest.mark.parametrize("query", ["snapshotId=", "snapshotId=abc", "since=", "until="])
def test_list_filters_the_spec_forbids_are_a_400(api, query):
    assert api.get(f"/v1/decisions?{query}", role="read").status_code == 400


def test_a_list_without_an_items_array_is_a_422(api):
    body = {"objects": {"apiVersion": "v1", "kind": "List", "items": None}}
    response = api.post("/v1/snapshots", json=body, role="decide", validate=False)
    assert response.status_code == 422
    assert response.json["errors"][0]["path"] == "objects.items"


def test_a_bare_list_without_an_items_array_is_a_422(api):
    body = {"apiVersion": "v1", "kind": "List", "items": None}
    response = api.post("/v1/snapshots", json=body, role="decide", validate=False)
    assert response.status_code == 422
    assert response.json["errors"][0]["path"] == "items"


def test_an_inline_list_without_an_items_array_is_a_422_and_records_nothing(api):
    body = {"snapshot": {"apiVersion": "v1", "kind": "List", "items": None}}
    response = api.post(
        "/v1/decisions/node-eviction-rate", json=body, role="decide", validate=False
    )
    assert response.status_code == 422
    assert response.json["errors"][0]["path"] == "snapshot.items"
    assert api.get("/v1/decisions", role="read").json["items"] == []


@pytest.mark.parametrize("field", ["snapshotId", "snapshot"])
def test_a_null_snapshot_reference_is_a_422_naming_it(api, field):
    body = {"snapshot": {"apiVersion": "v1", "kind": "List", "items": []}, "snapshotId": None}
    if field == "snapshot":
        body = {"snapshotId": "00000000-0000-0000-0000-000000000000", "snapshot": None}
    response = api.post(
        "/v1/decisions/node-eviction-rate", json=body, role="decide", validate=False
    )
    assert response.status_code == 422
    assert response.json["errors"][0]["path"] == field
