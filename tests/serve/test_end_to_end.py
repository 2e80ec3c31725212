"""The real thing: `verdict serve` under gunicorn on a loopback port, driven over HTTP."""

from __future__ import annotations

import gzip
import subprocess

import orjson

from tests.conftest import kube_list, node, pod
from tests.serve.helpers import VERDICT, call, server  # noqa: F401  (the real server fixture)


def test_fresh_machine_flow(server):  # noqa: F811
    base, env = server
    created = subprocess.run(
        [VERDICT, "keys", "create", "--role", "decide"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    secret = created.stdout.strip().splitlines()[-1]
    auth = {"Authorization": f"Bearer {secret}"}

    assert call(f"{base}/v1/snapshots")[0] == 401
    assert call(f"{base}/readyz")[0] == 200

    cluster = kube_list(node("n1"), pod("web", "n1", cpu="100m", memory="64Mi"))
    status, body, _ = call(
        f"{base}/v1/snapshots",
        "POST",
        gzip.compress(orjson.dumps(cluster)),
        {**auth, "Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert status == 201, body
    snapshot = orjson.loads(body)
    # Read back through (possibly) the other worker: the stored form, not a process cache.
    for _ in range(4):
        status, body, _ = call(f"{base}/v1/snapshots/{snapshot['id']}/pods?node=n1", headers=auth)
        assert status == 200
        assert [p["name"] for p in orjson.loads(body)["items"]] == ["web"]

    status, body, _ = call(f"{base}/metrics")
    assert status == 200 and b"verdict_http_requests_total" in body
    status, body, _ = call(f"{base}/docs")
    assert status == 200 and b"cdn" not in body.lower()
