"""What the console's tests share: one snapshot (with kubelet stats) and one decision of each
kind, posted through the API; and the Chromium the browser tests drive (tests/api's docs page
test drives it too)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import kube_list, node, pod

ZONE_LABELS = {"topology.kubernetes.io/region": "eu-1", "topology.kubernetes.io/zone": "z1"}


def envelope() -> dict:
    not_ready = node(
        "n2",
        cpu="1",
        labels=ZONE_LABELS,
        status={
            "conditions": [
                {
                    "type": "Ready",
                    "status": "False",
                    "lastHeartbeatTime": "2026-11-20T09:50:00Z",
                    "lastTransitionTime": "2026-11-20T09:50:00Z",
                }
            ]
        },
    )
    return {
        "name": "console test",
        "cluster": "test-cluster",
        "capturedAt": "2026-11-20T10:00:00Z",
        "objects": kube_list(
            node("n1", cpu="2", labels=ZONE_LABELS),
            not_ready,
            pod("busy", "n1", cpu="1500m", memory="1Gi", priority=0),
            pod("stranded", "n2", cpu="100m", memory="64Mi", priority=0),
        ),
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


def requests(snapshot_id: str) -> dict[str, dict]:
    pending = pod("pending", cpu="1", memory="64Mi", priority=100)
    del pending["metadata"]["uid"]  # a pod asked about before it exists has no uid yet
    return {
        "admission": {
            "snapshotId": snapshot_id,
            "nodeName": "n1",
            "pod": pod("new", cpu="1", memory="64Mi"),
        },
        "preemption": {"snapshotId": snapshot_id, "pod": pending},
        "placement": {"snapshotId": snapshot_id, "pod": pod("small", cpu="100m", memory="64Mi")},
        "eviction": {"snapshotId": snapshot_id, "nodeName": "n1"},
        "node-eviction-rate": {"snapshotId": snapshot_id, "now": "2026-11-20T10:00:30Z"},
    }


def seed(post) -> tuple[str, dict[str, str]]:
    """``post(path, body) -> (status, json)``; returns the snapshot id and a decision id per kind."""
    status, snap = post("/v1/snapshots", envelope())
    assert status == 201, snap
    ids = {}
    for kind, body in requests(snap["id"]).items():
        status, record = post(f"/v1/decisions/{kind}", body)
        assert status == 201, (kind, record)
        ids[kind] = record["id"]
    return snap["id"], ids


CHROMIUM = (
    os.environ.get("VERDICT_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
)


def require_chromium():
    """Playwright's sync API, or skip the calling module when no Chromium is installed and CI
    is not set: in CI a missing browser or Playwright fails instead of skipping."""
    if not Path(CHROMIUM).exists() and not os.environ.get("CI"):
        pytest.skip(f"no Chromium at {CHROMIUM} (CI not set)", allow_module_level=True)
    if os.environ.get("CI"):
        import playwright.sync_api as sync_api

        return sync_api
    return pytest.importorskip("playwright.sync_api")
