"""Shared helpers for the engine tests at this level (the model, quantities, resources)."""

from __future__ import annotations

import orjson

from service.engine.quantity import MAX_INT64
from service.ingest.body import parse_snapshot
from tests.conftest import kube_list, node, pod


def parsed_pod(*cpus: str, limits: bool = False):
    """Pod p on n1 as ingest reads it: one container per cpu request (and limit, with
    ``limits``), so sums of exact quantities are read as Kubernetes reads them."""
    body = pod("p", "n1")
    body["spec"]["containers"] = [
        {
            "name": f"c{i}",
            "image": "nginx",
            "resources": {"requests": {"cpu": cpu}} | ({"limits": {"cpu": cpu}} if limits else {}),
        }
        for i, cpu in enumerate(cpus)
    ]
    snapshot = parse_snapshot(orjson.dumps(kube_list(node("n1"), body))).snapshot
    return snapshot.pods[0]


# The largest cpu whose MilliValue fits in int64 (2**63 - 1 millicores).
MAX_MILLI = f"{MAX_INT64}m"
