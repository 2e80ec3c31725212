"""Two Verdict hosts on one PostgreSQL (issue 14): two `verdict serve` processes on their own
ports, recorded decisions sent to both at once, one unbroken chain and nothing lost."""

from __future__ import annotations

import os
import subprocess
import threading

import orjson
import pytest

from tests.conftest import TEST_DATABASE_URL, kube_list, node, pod
from tests.serve.helpers import VERDICT, call, start, stop, wait_until_up

pytestmark = pytest.mark.skipif(
    not TEST_DATABASE_URL, reason="several hosts share a PostgreSQL; SQLite is one host's file"
)
PER_CLIENT = 25
CLIENTS_PER_HOST = 3


@pytest.fixture
def two_hosts(app, database_url, tmp_path):
    """Two hosts of one worker each; ``app`` empties the shared database first."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VERDICT_")},
        "VERDICT_DATABASE_URL": database_url,
        "VERDICT_LOG_LEVEL": "ERROR",
        "VERDICT_PRELOAD_SNAPSHOTS": "0",
        # Every request must be served here, not shed (tests/serve/test_bounds.py sheds).
        "VERDICT_MAX_IN_FLIGHT": "0",
    }
    hosts = [
        start({**env, "VERDICT_INSTANCE_PATH": str(tmp_path / name)}, "--workers", "1")
        for name in ("host-a", "host-b")
    ]
    try:
        for served in hosts:
            wait_until_up(served)
        done = subprocess.run(
            [VERDICT, "keys", "create", "--role", "admin"],
            env={**env, "VERDICT_INSTANCE_PATH": str(tmp_path / "host-a")},
            capture_output=True,
            text=True,
            check=True,
        )
        yield [served.base for served in hosts], done.stdout.strip().splitlines()[-1]
    finally:
        for served in hosts:
            stop(served)


def test_two_hosts_keep_one_chain_and_lose_nothing(two_hosts):
    (host_a, host_b), secret = two_hosts
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    cluster = kube_list(node("n1"), pod("a", "n1", cpu="1"))
    status, body, _ = call(f"{host_a}/v1/snapshots", "POST", orjson.dumps(cluster), headers)
    assert status == 201
    request = orjson.dumps(
        {"snapshotId": orjson.loads(body)["id"], "nodeName": "n1", "pod": pod("new", cpu="1")}
    )
    created: list[str] = []
    failures: list = []
    lock = threading.Lock()

    def client(base: str) -> None:
        for _ in range(PER_CLIENT):
            try:
                status, body, _ = call(f"{base}/v1/decisions/admission", "POST", request, headers)
            except OSError as exc:  # a dropped connection is a failure to report, not a dead thread
                with lock:
                    failures.append(f"{base}: {exc!r}")
                continue
            with lock:
                if status == 201:
                    created.append(orjson.loads(body)["id"])
                else:
                    failures.append(status)

    threads = [
        threading.Thread(target=client, args=(base,))
        for base in (host_a, host_b)
        for _ in range(CLIENTS_PER_HOST)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert len(created) == 2 * CLIENTS_PER_HOST * PER_CLIENT == len(set(created))
    for base in (host_a, host_b):  # either host sees the same, whole chain
        status, body, _ = call(f"{base}/v1/audit/verify", headers=headers)
        verified = orjson.loads(body)
        assert status == 200 and verified["ok"] is True, verified
        assert verified["records"] == len(created)
        for decision_id in created[:: len(created) // 10]:
            assert call(f"{base}/v1/decisions/{decision_id}", headers=headers)[0] == 200
