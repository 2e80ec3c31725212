"""`verdict capture` against a fake kubectl on PATH that serves recorded answers."""

from __future__ import annotations

import copy
import gzip
import os

import orjson
import pytest

from service.capture import KINDS, RESOURCE_KINDS, STORAGE_KINDS
from service.cli import main
from service.ingest.body import parse_snapshot
from tests.conftest import kube_list, node, pod
from tests.fake_kubectl import BIN_DIR, node_answer, record
from tests.ingest.kube.test_resource import CLAIM, CLASS, SLICE, TEMPLATE
from tests.ingest.kube.test_storage import ALL, STORAGE_COUNTS

DRA = (CLASS, SLICE, CLAIM, TEMPLATE)
DRA_COUNTS = ("deviceClasses", "resourceSlices", "resourceClaims", "resourceClaimTemplates")

SUMMARY = {
    "node": {"nodeName": "any", "memory": {"availableBytes": 50 * 2**20, "workingSetBytes": 2**30}},
    "pods": [],
}
CONFIGZ = {
    "kind": "KubeletConfiguration",
    "apiVersion": "kubelet.config.k8s.io/v1beta1",
    "evictionHard": {"memory.available": "100Mi"},
    "maxPods": 110,
}


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    """Five nodes: n1 answers, n2 fails, n3 hangs, n4's configz is not JSON, n5's Summary is
    JSON but not an object."""
    objects = kube_list(
        node("n1", cpu="2"),
        node("n2", cpu="2"),
        node("n3", cpu="2"),
        node("n4", cpu="2"),
        node("n5", cpu="2"),
        pod("busy", "n1", cpu="1", memory="1Gi"),
    )
    answers = record(tmp_path / "answers", objects, SUMMARY, CONFIGZ)
    node_answer(answers, "n2", "fail", "")
    node_answer(answers, "n3", "sleep", "5")
    node_answer(answers, "n4", "configz", "<html>502 Bad Gateway</html>")
    node_answer(answers, "n5", "summary", "[1, 2]")
    monkeypatch.setenv("FAKE_KUBECTL_DIR", str(answers))
    monkeypatch.setenv("PATH", f"{BIN_DIR}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    return tmp_path


def _capture(capsys, *argv):
    code = main(["capture", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_capture_lists_the_nodes_that_fail_and_keeps_the_rest(cluster, capsys):
    target = cluster / "cluster.json.gz"
    code, _, err = _capture(capsys, "--output", str(target), "--timeout", "1", "--name", "prod")
    assert code == 0, err
    assert "node n2: stats: kubectl exited 1: Error from server (ServiceUnavailable)" in err
    assert "node n3: stats: kubectl timed out after 1s" in err
    assert "node n4: configz: not JSON" in err
    assert "node n5: stats: not JSON: Expected `object`, got `array`" in err
    assert "node n1" not in err
    envelope = orjson.loads(gzip.decompress(target.read_bytes()))
    assert envelope["name"] == "prod" and envelope["capturedAt"].endswith("Z")
    assert sorted(envelope["stats"]) == ["n1", "n4"]
    assert sorted(envelope["kubeletConfigs"]) == ["n1", "n5"]
    assert envelope["kubeletConfigs"]["n1"] == CONFIGZ  # unwrapped from {"kubeletconfig": ...}
    parsed = parse_snapshot(gzip.decompress(target.read_bytes()))
    assert [n.name for n in parsed.snapshot.nodes] == ["n1", "n2", "n3", "n4", "n5"]
    assert parsed.snapshot.kubelet_configs == {"n1": CONFIGZ, "n5": CONFIGZ}
    assert parsed.captured_at is not None


def test_a_kubeconfig_that_does_not_exist_is_named(cluster, capsys):
    code, _, err = _capture(capsys, "--output", "-", "--kubeconfig", str(cluster / "nope"))
    assert code == 2 and "'--kubeconfig'" in err and "nope" in err and "does not exist" in err


def test_a_kubeconfig_from_the_environment_that_does_not_exist(cluster, capsys, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(cluster / "gone.yaml"))
    code, out, err = _capture(capsys, "--output", str(cluster / "x.gz"))
    assert code == 1 and out == ""
    assert "listing the cluster's objects" in err and "gone.yaml" in err
    assert not (cluster / "x.gz").exists()


def test_kubectl_missing_or_printing_garbage(cluster, capsys):
    code, _, err = _capture(capsys, "--output", "-", "--kubectl", "no-such-kubectl")
    assert code == 1 and "no-such-kubectl: not found on PATH" in err
    (cluster / "answers" / "objects.json").write_text("Unable to connect to the server")
    code, _, err = _capture(capsys, "--output", "-")
    assert code == 1 and "kubectl printed no List" in err


def test_output_or_server_exactly_one(cluster, capsys):
    code, _, err = _capture(capsys)
    assert code == 2 and "--output FILE or --server URL" in err
    code, _, err = _capture(capsys, "--server", "http://127.0.0.1:9")
    assert code == 2 and "--key: required with --server" in err


@pytest.fixture
def storage_cluster(tmp_path, monkeypatch):
    """Two nodes, a pod, and one object of each storage kind the volume plugins read and of
    each resource.k8s.io kind DynamicResources reads."""
    objects = kube_list(
        node("n1", cpu="2"),
        node("n2", cpu="2"),
        pod("busy", "n1"),
        *copy.deepcopy(ALL),
        *copy.deepcopy(DRA),
    )
    answers = record(tmp_path / "answers", objects, SUMMARY, CONFIGZ)
    monkeypatch.setenv("FAKE_KUBECTL_DIR", str(answers))
    monkeypatch.setenv("PATH", f"{BIN_DIR}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    return answers


def test_capture_lists_the_storage_kinds_by_their_api_names():
    # What kubectl resolves through discovery: the core group's plurals, and storage.k8s.io's
    # named with their group so that a custom resource of the same plural cannot answer.
    assert STORAGE_KINDS == (
        "persistentvolumes",
        "persistentvolumeclaims",
        "storageclasses.storage.k8s.io",
        "csinodes.storage.k8s.io",
        "csidrivers.storage.k8s.io",
        "csistoragecapacities.storage.k8s.io",
        "volumeattachments.storage.k8s.io",
    )
    assert KINDS[-11:] == STORAGE_KINDS + RESOURCE_KINDS
    assert all(kind.endswith(".resource.k8s.io") for kind in RESOURCE_KINDS)


def test_captured_storage_objects_round_trip_into_the_summary(storage_cluster, api, capsys):
    target = storage_cluster.parent / "cluster.json.gz"
    code, _, err = _capture(capsys, "--output", str(target))
    assert code == 0, err
    assert "captured 14 objects, 2 nodes" in err and "0 errors" in err
    response = api.post(
        "/v1/snapshots",
        data=target.read_bytes(),
        content_type="application/json",
        headers={"Content-Encoding": "gzip"},
        role="decide",
    )
    assert response.status_code == 201, response.json
    counts = response.json["counts"]
    assert {key: counts[key] for key in STORAGE_COUNTS} == dict.fromkeys(STORAGE_COUNTS, 1)
    assert {key: counts[key] for key in DRA_COUNTS} == dict.fromkeys(DRA_COUNTS, 1)
    assert (counts["nodes"], counts["pods"]) == (2, 1)


def test_a_storage_kind_rbac_forbids_is_left_out_and_named(storage_cluster, api, capsys):
    (storage_cluster / "forbidden").write_text("persistentvolumes\nvolumeattachments\n")
    target = storage_cluster.parent / "cluster.json.gz"
    code, _, err = _capture(capsys, "--output", str(target))
    assert code == 0, err
    assert (
        "verdict: persistentvolumes: kubectl exited 1: Error from server (Forbidden): "
        'persistentvolumes is forbidden: User "alice" cannot list resource "persistentvolumes"'
    ) in err
    assert "verdict: volumeattachments: kubectl exited 1: Error from server (Forbidden)" in err
    assert "captured 12 objects, 2 nodes" in err and "2 errors" in err
    response = api.post(
        "/v1/snapshots",
        data=target.read_bytes(),
        content_type="application/json",
        headers={"Content-Encoding": "gzip"},
        role="decide",
    )
    assert response.status_code == 201, response.json
    counts = response.json["counts"]
    assert counts["persistentVolumes"] == counts["volumeAttachments"] == 0
    assert counts["persistentVolumeClaims"] == counts["csiNodes"] == 1


def test_a_storage_kind_the_server_does_not_serve_is_left_out(storage_cluster, capsys):
    (storage_cluster / "missing").write_text("csistoragecapacities\n")
    target = storage_cluster.parent / "cluster.json.gz"
    code, _, err = _capture(capsys, "--output", str(target))
    assert code == 0, err
    assert (
        "verdict: csistoragecapacities: kubectl exited 1: error: the server doesn't have a "
        'resource type "csistoragecapacities.storage.k8s.io"'
    ) in err
    parsed = parse_snapshot(gzip.decompress(target.read_bytes()))
    assert parsed.snapshot.csi_storage_capacities == ()
    assert len(parsed.snapshot.persistent_volume_claims) == 1


def test_a_cluster_without_the_resource_api_is_captured_without_it(storage_cluster, capsys):
    """A server that does not serve resource.k8s.io (DRA off, or before 1.34 without its
    beta API): those kinds are left out and named, the rest is captured."""
    (storage_cluster / "missing").write_text("resourceslices\nresourceclaims\n")
    target = storage_cluster.parent / "cluster.json.gz"
    code, _, err = _capture(capsys, "--output", str(target))
    assert code == 0, err
    assert 'the server doesn\'t have a resource type "resourceslices.resource.k8s.io"' in err
    parsed = parse_snapshot(gzip.decompress(target.read_bytes())).snapshot
    assert (parsed.resource_slices, parsed.resource_claims) == ((), ())
    assert [c.name for c in parsed.device_classes] == ["gpu"]


def test_a_required_kind_rbac_forbids_stops_the_capture(storage_cluster, capsys):
    (storage_cluster / "forbidden").write_text("leases\n")
    target = storage_cluster.parent / "cluster.json.gz"
    code, out, err = _capture(capsys, "--output", str(target))
    assert code == 1 and out == ""
    assert "listing the cluster's objects: kubectl exited 1: Error from server (Forbidden)" in err
    assert "leases" in err
    assert not target.exists()
