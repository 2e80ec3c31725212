"""API 1.1 defaults of decision requests: nodeName from the pod, now from the snapshot, the
node's captured kubelet configuration, whole KubeletConfigurations, YAML in and out."""

from __future__ import annotations

import orjson
import yaml

from tests.conftest import kube_list, node, pod

MI = 2**20
SUMMARY = {
    "node": {
        "nodeName": "n1",
        "memory": {"availableBytes": 300 * MI, "workingSetBytes": 7 * 2**30},
    },
    "pods": [
        {
            "podRef": {"name": "busy", "namespace": "default", "uid": "uid-default-busy"},
            "memory": {"workingSetBytes": 2**30},
        }
    ],
}
# What configz prints for a kubelet with a 500Mi hard memory threshold: a whole
# KubeletConfiguration, most of it irrelevant to eviction (and without kind/apiVersion).
CONFIGZ = {
    "enableServer": True,
    "syncFrequency": "1m0s",
    "evictionHard": {"memory.available": "500Mi"},
    "evictionPressureTransitionPeriod": "5m0s",
    "maxPods": 110,
}


def _snapshot(api, *, captured_at="2026-11-20T10:00:00Z", configs=None) -> str:
    envelope = {
        "objects": kube_list(node("n1"), pod("busy", "n1", cpu="1", memory="1Gi")),
        "stats": {"n1": SUMMARY},
    }
    if captured_at:
        envelope["capturedAt"] = captured_at
    if configs is not None:
        envelope["kubeletConfigs"] = configs
    response = api.post("/v1/snapshots", json=envelope)
    assert response.status_code == 201, response.json
    return response.json["id"]


def _evict(api, snapshot_id, **params):
    response = api.post(
        "/v1/decisions/eviction", json={"snapshotId": snapshot_id, "nodeName": "n1", **params}
    )
    assert response.status_code == 201, response.json
    return response.json["result"]


def test_eviction_uses_the_nodes_captured_configuration(api):
    snapshot_id = _snapshot(api, configs={"n1": {"kubeletconfig": CONFIGZ}})
    captured = _evict(api, snapshot_id)
    assert captured["configSource"] == "snapshot"
    assert captured["ignoredConfigFields"] == ["enableServer", "maxPods", "syncFrequency"]
    assert captured["nodeConditions"] == ["MemoryPressure"]  # 300Mi < 500Mi
    assert captured["thresholdsMet"][0]["value"] == "500Mi"
    default = _evict(api, _snapshot(api))
    assert default["configSource"] == "default" and default["nodeConditions"] == []
    given = _evict(api, snapshot_id, config={"evictionHard": {"memory.available": "100Mi"}})
    assert given["configSource"] == "request" and given["nodeConditions"] == []


def test_a_captured_configuration_the_kubelet_would_refuse_names_the_node(api):
    snapshot_id = _snapshot(api, configs={"n1": {"evictionHard": {"memory.available": "-1"}}})
    response = api.post(
        "/v1/decisions/eviction", json={"snapshotId": snapshot_id, "nodeName": "n1"}
    )
    assert response.status_code == 422
    assert response.json["errors"][0]["path"].startswith("kubeletConfigs.n1")


def test_a_whole_kubelet_configuration_is_accepted_and_its_unused_fields_listed(api):
    config = {
        "kind": "KubeletConfiguration",
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        **CONFIGZ,
    }
    result = _evict(api, _snapshot(api), config=config)
    assert result["ignoredConfigFields"] == ["enableServer", "maxPods", "syncFrequency"]
    assert result["nodeConditions"] == ["MemoryPressure"]
    # Without kind/apiVersion the object holds eviction settings only: a typo is refused.
    response = api.post(
        "/v1/decisions/eviction",
        json={"snapshotId": _snapshot(api), "nodeName": "n1", "config": {"evictionHrad": {}}},
    )
    assert response.status_code == 422 and "evictionHrad" in response.json["errors"][0]["path"]
    wrong = {**config, "apiVersion": "kubelet.config.k8s.io/v1alpha1"}
    response = api.post(
        "/v1/decisions/eviction",
        json={"snapshotId": _snapshot(api), "nodeName": "n1", "config": wrong},
    )
    assert response.status_code == 422 and "apiVersion" in response.json["errors"][0]["path"]


def test_now_defaults_to_captured_at_then_to_when_the_snapshot_was_stored(api):
    assert _evict(api, _snapshot(api))["nowSource"] == "capturedAt"
    assert _evict(api, _snapshot(api), now="2026-11-20T11:00:00Z")["nowSource"] == "request"
    snapshot_id = _snapshot(api, captured_at=None)
    stored = api.get(f"/v1/snapshots/{snapshot_id}").json["createdAt"]
    result = _evict(api, snapshot_id)
    assert result["nowSource"] == "createdAt"
    assert result["now"][:19] == stored[:19]
    rate = api.post("/v1/decisions/node-eviction-rate", json={"snapshotId": snapshot_id})
    assert rate.status_code == 201 and rate.json["result"]["nowSource"] == "createdAt"
    # A replay decides at the same stored time.
    decision_id = api.post(
        "/v1/decisions/eviction", json={"snapshotId": snapshot_id, "nodeName": "n1"}
    ).json["id"]
    assert api.post(f"/v1/decisions/{decision_id}/replay").json["matches"] is True


def test_admission_node_name_defaults_to_the_pods(api):
    snapshot_id = _snapshot(api)
    bound = pod("new", "n1", cpu="1", memory="64Mi")
    response = api.post("/v1/decisions/admission", json={"snapshotId": snapshot_id, "pod": bound})
    assert response.status_code == 201 and response.json["request"].get("nodeName") is None
    listed = api.get("/v1/decisions?nodeName=n1&kind=admission").json["items"]
    assert [d["id"] for d in listed] == [response.json["id"]]
    unbound = pod("new", cpu="1")
    response = api.post("/v1/decisions/admission", json={"snapshotId": snapshot_id, "pod": unbound})
    assert response.status_code == 422
    assert response.json["errors"][0]["path"] == "nodeName"


def test_yaml_request_and_yaml_answer(api):
    snapshot_id = _snapshot(api)
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
