"""POST /v1/decisions/<kind> (api/decisions.py): the request pod's metadata checked as the API
server would, YAML in and out."""

from __future__ import annotations

import orjson
import pytest
import yaml

from tests.api.helpers import LONG
from tests.conftest import kube_list, node, pod
from tests.decisions.helpers import stored_snapshot


@pytest.mark.parametrize(
    ("metadata", "path"),
    [
        ({"name": LONG, "namespace": "default"}, "pod.metadata.name"),
        ({"name": "x", "namespace": LONG}, "pod.metadata.namespace"),
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


def test_yaml_request_and_yaml_answer(api):
    snapshot_id = stored_snapshot(api)
    body = yaml.safe_dump({"snapshotId": snapshot_id, "nodeName": "n1"})
    as_json = api.post("/v1/decisions/eviction", data=body, content_type="application/yaml")
    assert as_json.status_code == 201 and as_json.mimetype == "application/json"
    as_yaml = api.post(
        "/v1/decisions/eviction",
        data=body,
        content_type="application/yaml",
        headers={"Accept": "application/yaml"},
        validate=False,
    )
    assert as_yaml.status_code == 201 and as_yaml.mimetype == "application/yaml"
    answer = yaml.safe_load(as_yaml.get_data())
    assert answer["result"] == as_json.json["result"] and answer["kind"] == "eviction"
    bad = api.post(
        "/v1/decisions/eviction", data=b"a: &x 1\nb: *x\n", content_type="application/yaml"
    )
    assert bad.status_code == 400
    listing = api.post("/v1/decisions/eviction", data=b"- 1\n", content_type="application/yaml")
    assert (
        listing.status_code == 400
        and orjson.loads(listing.get_data())["errors"][0]["path"] == "body"
    )


def test_a_record_is_read_back_in_yaml_when_asked(api):
    snapshot_id = stored_snapshot(api)
    created = api.post(
        "/v1/decisions/eviction", role="decide", json={"snapshotId": snapshot_id, "nodeName": "n1"}
    )
    path = f"/v1/decisions/{created.json['id']}"
    as_json = api.get(path, role="read")
    as_yaml = api.get(path, role="read", headers={"Accept": "application/yaml"}, validate=False)
    assert as_yaml.status_code == 200 and as_yaml.mimetype == "application/yaml"
    assert yaml.safe_load(as_yaml.get_data()) == as_json.json
    assert as_yaml.headers["ETag"] == as_json.headers["ETag"]


def test_an_unsupported_body_type_names_both_accepted_types(api):
    response = api.post(
        "/v1/decisions/eviction", role="decide", data=b"nodeName=n1", content_type="text/plain"
    )
    assert response.status_code == 415
    assert "application/json or application/yaml" in response.json["detail"]
