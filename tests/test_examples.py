"""examples/: every example request, run as the README runs them, against a real
`verdict serve` (so that they cannot rot)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import orjson
import yaml

from tests.fake_kubectl import BIN_DIR
from tests.serve.helpers import VERDICT, server  # noqa: F401  (the real server fixture)

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


def _key(env: dict, role: str) -> str:
    done = subprocess.run(
        [VERDICT, "keys", "create", "--role", role], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_every_example_runs_against_a_real_server(server, tmp_path):  # noqa: F811
    """As the README runs it: from the repository, the verdict command named relative to it."""
    base, env = server
    run_env = {
        **env,
        "VERDICT_URL": base,
        "VERDICT_KEY": _key(env, "decide"),
        "VERDICT": os.path.relpath(VERDICT, REPO),
        "VERDICT_EXAMPLES_OUT": str(tmp_path),
    }
    done = subprocess.run(
        ["bash", "examples/run.sh"], cwd=REPO, env=run_env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # The capture lists the node that did not answer, and keeps the rest.
    assert "node node-2: stats: kubectl exited 1" in done.stderr
    # Every call ran, in order.
    calls = [line for line in done.stderr.splitlines() if line.startswith("== ")]
    assert len(calls) == 18 and calls[-1] == "== GET /v1/decisions/export?since=2026-01-01"
    assert "== POST /v1/impact" in calls
    # The eviction answer (YAML) decided with node-1's captured kubelet configuration.
    result = yaml.safe_load((tmp_path / "eviction.yaml").read_text())["result"]
    assert result["configSource"] == "snapshot" and result["nowSource"] == "capturedAt"
    assert result["nodeConditions"] == ["MemoryPressure"]
    assert '"matches":true' in done.stdout


def test_capture_posts_to_a_server(server):  # noqa: F811
    base, env = server
    capture_env = {
        **env,
        "PATH": f"{BIN_DIR}{os.pathsep}{env['PATH']}",
        "FAKE_KUBECTL_DIR": str(EXAMPLES / "kubectl" / "answers"),
        "VERDICT_KEY": _key(env, "decide"),
    }
    done = subprocess.run(
        [VERDICT, "capture", "--server", base, "--cluster", "example"],
        env=capture_env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    summary = orjson.loads(done.stdout)
    assert summary["cluster"] == "example" and summary["counts"]["stats"] == 1
    assert summary["capturedAt"] is not None
    capture_env["VERDICT_KEY"] = "vk_wrong"
    done = subprocess.run(
        [VERDICT, "capture", "--server", base], env=capture_env, capture_output=True, text=True
    )
    assert done.returncode == 1 and "answered 401" in done.stderr and "Traceback" not in done.stderr


DECISION_KINDS = (
    "admission",
    "placement",
    "preemption",
    "eviction",
    "node-eviction-rate",
    "schedule",
    "capacity",
)


def _operation_example(spec: dict, path: str) -> dict:
    content = spec["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    ref = content["examples"]["example"]["$ref"].rsplit("/", 1)[-1]
    return spec["components"]["examples"][ref]["value"]


def test_the_openapi_examples_are_the_example_files():
    from tests.contract import load_spec

    spec = load_spec()
    cluster = yaml.safe_load((EXAMPLES / "cluster.yaml").read_text())
    assert _operation_example(spec, "/v1/snapshots") == cluster
    for kind in DECISION_KINDS:
        request = yaml.safe_load((EXAMPLES / f"{kind}.yaml").read_text())
        assert request.pop("snapshotId") == "SNAPSHOT_ID"
        assert _operation_example(spec, f"/v1/decisions/{kind}") == {"snapshot": cluster, **request}


def test_the_openapi_examples_work_as_they_are(api):
    """What the docs page's "Try it out" sends: the example body, unchanged."""
    from tests.contract import load_spec

    spec = load_spec()
    response = api.post("/v1/snapshots", json=_operation_example(spec, "/v1/snapshots"))
    assert response.status_code == 201, response.json
    for kind in DECISION_KINDS:
        path = f"/v1/decisions/{kind}"
        response = api.post(path, json=_operation_example(spec, path), role="decide")
        assert response.status_code == 201, (kind, response.json)


def test_capture_quiet_prints_only_the_id(server):  # noqa: F811
    base, env = server
    capture_env = {
        **env,
        "PATH": f"{BIN_DIR}{os.pathsep}{env['PATH']}",
        "FAKE_KUBECTL_DIR": str(EXAMPLES / "kubectl" / "answers"),
    }
    done = subprocess.run(
        [VERDICT, "capture", "-q", "--server", base, "--key", _key(env, "decide")],
        env=capture_env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    snapshot_id = done.stdout.strip()
    assert len(snapshot_id) == 36 and "kubelet stats" not in done.stderr
