"""Shared helpers for the decision tests through the API: a stored snapshot of one node under
memory pressure, with its kubelet's configuration when given, and an eviction on it."""

from __future__ import annotations

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


def stored_snapshot(api, *, captured_at="2026-11-20T10:00:00Z", configs=None) -> str:
    """A stored snapshot of n1 (300Mi of memory available) running pod busy, captured at
    ``captured_at`` when given, with ``configs`` as its kubelets' configurations."""
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


def evict(api, snapshot_id, **params):
    """The result of an eviction decision on n1 of ``snapshot_id`` (201 asserted)."""
    response = api.post(
        "/v1/decisions/eviction", json={"snapshotId": snapshot_id, "nodeName": "n1", **params}
    )
    assert response.status_code == 201, response.json
    return response.json["result"]


def releases_apart_snapshot(api) -> str:
    """A stored snapshot where releases 1.35 and 1.37 place ``pod_level_pod`` on different
    nodes: n1 (2 cpu, empty) and n2 (10 cpu, 4 requested by pod hog)."""
    body = kube_list(
        node("n1", cpu="2", memory="8Gi"),
        node("n2", cpu="10", memory="8Gi"),
        pod("hog", "n2", cpu="4", memory="1Gi"),
    )
    response = api.post("/v1/snapshots", json=body, role="decide")
    assert response.status_code == 201, response.json
    return response.json["id"]


def pod_level_pod(name: str = "web", **spec) -> dict:
    """A pod whose pod-level request (1500m) is far above its container's (100m): v1.35's
    NodeResourcesFit scores it by its containers, v1.37's by the pod (README, "Kubernetes
    versions"), so on ``releases_apart_snapshot`` 1.35 selects n1 and 1.37 selects n2."""
    body = pod(name, cpu="100m", memory="64Mi", **spec)
    body["spec"]["resources"] = {"requests": {"cpu": "1500m", "memory": "64Mi"}}
    return body


def place(api, snapshot_id: str, version: str, body: dict | None = None, **params) -> dict:
    """A placement of ``body`` (default ``pod_level_pod()``) recorded under ``version``."""
    response = api.post(
        "/v1/decisions/placement",
        json={
            "snapshotId": snapshot_id,
            "pod": body or pod_level_pod(),
            "kubernetesVersion": version,
            **params,
        },
        role="decide",
    )
    assert response.status_code == 201, response.json
    return response.json


# The default profile, written out as an operator keeps it.
SCHEDULER_CONFIGURATION = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler"}],
}
