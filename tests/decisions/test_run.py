"""Validate and decide (decisions/run.py), over HTTP: ``kubernetesVersion`` (every release
1.32 to 1.37 on every decision kind; unknown releases are refused and record nothing; the
record names the release used, and a replay decides as that release did), a null snapshot
reference is a 422 naming it, and a request pod is checked as the API server would, however
it is decided."""

from __future__ import annotations

import pytest
from marshmallow import ValidationError

from service.decisions import KINDS as DECISION_KINDS
from service.decisions.run import compute
from service.engine.objects import Cluster
from tests.conftest import kube_list, node, pod, snapshot_from_objects

# scheduler-oracle.json "nodeResourcesFit-score-pod-level-resources": containers 1500m/128Mi
# and 1500m/1G with pod-level requests 200m/256Mi on a node of 8 cpu, 1Gi: v1.35's
# NodeResourcesFit score ignores the pod-level requests (31), the newest reads them (86).
INCOMING = pod(
    "incoming",
    resources={"requests": {"cpu": "200m", "memory": "256Mi"}},
    containers=[
        {"name": "c0", "resources": {"requests": {"cpu": "1.5", "memory": "128Mi"}}},
        {"name": "c1", "resources": {"requests": {"cpu": "1500m", "memory": "1G"}}},
    ],
)


def _snapshot(api) -> str:
    cluster = kube_list(node("n7", cpu="8", memory="1Gi", pods="4"))
    return api.post("/v1/snapshots", json=cluster, role="decide").json["id"]


@pytest.mark.parametrize("version", ["1.31", "1.38", "latest", 1.35, "", "v1.35"])
def test_unknown_version_is_refused_and_records_nothing(api, version):
    snap = _snapshot(api)
    body = {"snapshotId": snap, "pod": INCOMING, "kubernetesVersion": version}
    response = api.post("/v1/decisions/placement", json=body, role="decide", validate=False)
    assert response.status_code == 422, response.json
    assert [e["path"] for e in response.json["errors"]] == ["kubernetesVersion"]
    assert "1.35" in response.json["errors"][0]["message"]
    assert api.get("/v1/decisions", role="read").json["items"] == []


def test_the_record_names_the_release_and_replays_it(api):
    snap = _snapshot(api)
    old = api.post(
        "/v1/decisions/placement",
        json={"snapshotId": snap, "pod": INCOMING, "kubernetesVersion": "1.35"},
        role="decide",
    ).json
    new = api.post(
        "/v1/decisions/placement", json={"snapshotId": snap, "pod": INCOMING}, role="decide"
    ).json
    assert old["request"]["kubernetesVersion"] == "1.35"
    assert new["request"]["kubernetesVersion"] == "1.37"
    assert old["result"]["nodes"][0]["scores"]["NodeResourcesFit"] == 31
    assert new["result"]["nodes"][0]["scores"]["NodeResourcesFit"] == 86
    for record in (old, new):
        replay = api.post(f"/v1/decisions/{record['id']}/replay", role="decide").json
        assert replay["matches"] is True, replay["differences"]


KINDS = {
    "placement": {"pod": INCOMING},
    "preemption": {"pod": INCOMING},
    "admission": {"nodeName": "n7", "pod": INCOMING},
    "node-eviction-rate": {},
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", ["1.32", "1.33", "1.34", "1.35", "1.36", "1.37"])
def test_every_release_on_every_kind(api, kind, version):
    snap = _snapshot(api)
    body = {"snapshotId": snap, "kubernetesVersion": version, **KINDS[kind]}
    record = api.post(f"/v1/decisions/{kind}", json=body, role="decide").json
    assert record["request"]["kubernetesVersion"] == version


def test_pod_level_resources_count_from_1_34(api):
    """PodLevelResources is on by default from 1.34 (kubernetes#132999): before, the
    scheduler reads the containers' requests (1Gi and more of memory on a 1Gi node)."""
    snap = _snapshot(api)
    feasible = {}
    for version in ("1.33", "1.34"):
        body = {"snapshotId": snap, "pod": INCOMING, "kubernetesVersion": version}
        record = api.post("/v1/decisions/placement", json=body, role="decide").json
        feasible[version] = record["result"]["nodes"][0]["feasible"]
        assert api.post(f"/v1/decisions/{record['id']}/replay", role="read").json["matches"]
    assert feasible == {"1.33": False, "1.34": True}


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


@pytest.mark.parametrize(
    ("metadata", "path"),
    [
        ({"name": "Not_A_Name", "namespace": "default"}, "metadata.name"),
        ({"name": "x", "namespace": "Not_A_Namespace"}, "metadata.namespace"),
        ({"name": "x", "labels": {"k": "not a value"}}, "metadata.labels.k"),
    ],
)
def test_a_request_pod_is_checked_as_the_api_server_would_wherever_it_is_decided(metadata, path):
    """compute, which the API, `verdict decide` and replay all decide through, refuses a
    request pod named as no cluster could name it, naming the field."""
    request_pod = pod("x") | {"metadata": metadata}
    cluster = Cluster(snapshot_from_objects([node("n1")]))
    with pytest.raises(ValidationError) as refused:
        compute(DECISION_KINDS["admission"], cluster, {"nodeName": "n1", "pod": request_pod})
    assert list(refused.value.messages["pod"]) == [path]


def test_a_configuration_is_read_as_its_release_reads_it(api):
    """DynamicResources has a Score step only from 1.35 (kubernetes#134711): enabling it
    at score is refused under 1.34, as that release's scheduler would refuse to start."""
    snap = _snapshot(api)
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"score": {"enabled": [{"name": "DynamicResources"}]}}}],
    }
    body = {"snapshotId": snap, "pod": INCOMING, "schedulerConfiguration": config}
    refused = api.post(
        "/v1/decisions/placement",
        json={**body, "kubernetesVersion": "1.34"},
        role="decide",
        validate=False,
    )
    assert refused.status_code == 422, refused.json
    assert [e["path"] for e in refused.json["errors"]] == [
        "schedulerConfiguration.profiles[0].plugins.score.enabled[0]"
    ]
    assert "does not extend ScorePlugin" in refused.json["errors"][0]["message"]
    accepted = api.post(
        "/v1/decisions/placement", json={**body, "kubernetesVersion": "1.35"}, role="decide"
    )
    assert accepted.status_code == 201
    assert len(api.get("/v1/decisions", role="read").json["items"]) == 1
