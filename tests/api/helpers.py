"""Shared helpers for the API tests: snapshots stored to read back, and bodies at the edges of
what the API takes."""

from __future__ import annotations

from tests.conftest import kube_list, node, pod

SUMMARY = {
    "node": {"nodeName": "n1", "memory": {"availableBytes": 50 * 2**20, "workingSetBytes": 2**30}},
    "pods": [],
}


def snapshot_with_stats(api) -> str:
    """A stored snapshot of node n1 (Summary stats included) running pod a."""
    body = {
        "objects": kube_list(node("n1"), pod("a", "n1", memory="1Gi")),
        "stats": {"n1": SUMMARY},
    }
    return api.post("/v1/snapshots", json=body).json["id"]


def busy_node_snapshot(api) -> str:
    """A stored snapshot: n1 (2 cpu) with 1500m requested by pod busy, and an empty n2."""
    cluster = kube_list(
        node("n1", cpu="2"), node("n2"), pod("busy", "n1", cpu="1500m", memory="1Gi")
    )
    return api.post("/v1/snapshots", json=cluster, role="decide").json["id"]


def two_node_snapshot(api) -> str:
    """A stored snapshot: nodes n1 and n2, pod a on n1 and pod b on n2."""
    body = kube_list(node("n1"), node("n2"), pod("a", "n1"), pod("b", "n2"))
    return api.post("/v1/snapshots", json=body).json["id"]


# A value past every length the API server or a column allows (64 KiB).
LONG = "a" * 65536


def with_metadata(item: dict, **metadata) -> dict:
    """``item`` with ``metadata`` merged into its own."""
    item["metadata"].update(metadata)
    return item


# A List whose pod repeats a key (requests.cpu): strict decoding refuses it, never last-one-wins.
DUPLICATE_POD = (
    b'{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n1"}},'
    b' {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": {'
    b'"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "cpu": "100"}}}]}}]}'
)
