"""The `verdict` command: offline decisions (same result as the API), keys, history."""

from __future__ import annotations

import orjson
import pytest
import yaml

from service.cli import main
from tests.conftest import kube_list, node, pod


@pytest.fixture
def cluster_file(tmp_path):
    cluster = kube_list(
        node("n1", cpu="2"),
        pod("busy", "n1", cpu="1500m", memory="1Gi", priority=0),
    )
    envelope = {
        "objects": cluster,
        "capturedAt": "2026-11-20T10:00:00Z",
        "stats": {
            "n1": {
                "node": {
                    "nodeName": "n1",
                    "memory": {"availableBytes": 50 * 2**20, "workingSetBytes": 7 * 2**30},
                },
                "pods": [
                    {
                        "podRef": {
                            "name": "busy",
                            "namespace": "default",
                            "uid": "uid-default-busy",
                        },
                        "memory": {"workingSetBytes": 2**30},
                    }
                ],
            }
        },
    }
    path = tmp_path / "cluster.json"
    path.write_bytes(orjson.dumps(envelope))
    return path


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_decide_admission_offline_matches_the_api(api, cluster_file, tmp_path, capsys):
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(yaml.safe_dump(pod("new", cpu="1", memory="64Mi")))
    code, out, _ = _run(
        capsys,
        "decide",
        "admission",
        "--snapshot",
        str(cluster_file),
        "--node",
        "n1",
        "--pod",
        str(pod_file),
    )
    assert code == 0
    offline = orjson.loads(out)
    assert offline["admitted"] is False and offline["reasons"][0]["resource"] == "cpu"
    snapshot = api.post(
        "/v1/snapshots",
        data=cluster_file.read_bytes(),
        content_type="application/json",
        role="decide",
    ).json
    online = api.post(
        "/v1/decisions/admission",
        json={
            "snapshotId": snapshot["id"],
            "nodeName": "n1",
            "pod": pod("new", cpu="1", memory="64Mi"),
        },
        role="decide",
    ).json["result"]
    assert offline == online


@pytest.mark.parametrize(
    ("kind", "extra", "check"),
    [
        ("eviction", ["--node", "n1"], lambda r: r["nodeConditions"] == ["MemoryPressure"]),
        (
            "node-eviction-rate",
            ["--now", "2026-11-20T10:00:00Z"],
            lambda r: r["zones"][0]["state"] == "Normal",
        ),
        ("placement", ["--pod", "POD"], lambda r: r["selectedNode"] is None),
        ("preemption", ["--pod", "POD"], lambda r: r["nominatedNodeName"] == "n1"),
    ],
)
def test_decide_every_kind_offline(cluster_file, tmp_path, capsys, kind, extra, check):
    pod_file = tmp_path / "pending.json"
    pod_file.write_bytes(orjson.dumps(pod("pending", cpu="1", memory="64Mi", priority=100)))
    argv = [str(pod_file) if a == "POD" else a for a in extra]
    code, out, err = _run(capsys, "decide", kind, "--snapshot", str(cluster_file), *argv)
    assert code == 0, err
    assert check(orjson.loads(out))


def test_decide_reports_bad_input(cluster_file, tmp_path, capsys):
    pod_file = tmp_path / "pod.json"
    pod_file.write_bytes(orjson.dumps(pod("x", cpu="1")))
    code, out, err = _run(
        capsys,
        "decide",
        "admission",
        "--snapshot",
        str(cluster_file),
        "--node",
        "nope",
        "--pod",
        str(pod_file),
    )
    assert code == 1 and out == ""
    assert "nodeName" in err


def test_keys_and_history(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("VERDICT_DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    code, out, _ = _run(capsys, "keys", "create", "--role", "decide", "--name", "ci")
    assert code == 0 and out.strip().splitlines()[-1].startswith("vk_")
    assert _run(capsys, "keys", "list")[1].count("decide") == 1
    code, out, _ = _run(capsys, "history", "prune", "--before", "2020-01-01T00:00:00Z")
    assert code == 0 and orjson.loads(out)["kind"] == "prune"
    export = tmp_path / "out.ndjson"
    assert _run(capsys, "history", "export", "--output", str(export))[0] == 0
    lines = [orjson.loads(line) for line in export.read_bytes().splitlines()]
    assert [r["kind"] for r in lines] == ["prune"]


def test_audit_keygen_checkpoint_and_verify(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("VERDICT_DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    monkeypatch.setenv("VERDICT_INSTANCE_PATH", str(tmp_path))
    assert _run(capsys, "db", "upgrade")[0] == 0
    key_file = tmp_path / "checkpoint.pem"
    code, out, _ = _run(capsys, "audit", "keygen", "--output", str(key_file))
    assert code == 0 and out.startswith("keyId ed25519:") and "BEGIN PUBLIC KEY" in out
    assert key_file.stat().st_mode & 0o777 == 0o600
    monkeypatch.setenv("VERDICT_CHECKPOINT_KEY_FILE", str(key_file))
    assert _run(capsys, "audit", "public-key")[1] == out
    _run(capsys, "history", "prune", "--before", "2020-01-01T00:00:00Z")  # one record
    code, out, _ = _run(capsys, "audit", "checkpoint")
    cp_file = tmp_path / "cp.json"
    cp_file.write_text(out)
    assert code == 0 and orjson.loads(out)["size"] == 1
    code, out, _ = _run(capsys, "audit", "verify", "--checkpoint", str(cp_file))
    assert code == 0 and orjson.loads(out)["extendsCheckpoint"] is True
    cp_file.write_text('{"size": 1}')
    code, _, err = _run(capsys, "audit", "verify", "--checkpoint", str(cp_file))
    assert code == 2 and "checkpoint.headHash" in err
