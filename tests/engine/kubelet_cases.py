"""Shared helpers for the kubelet-side engine tests: conformance cases and Kubernetes JSON
turned into model objects through the real ingest code (service.ingest.kube).

The conformance pods come from Kubernetes' own unit tests, which build pods WITHOUT API
defaulting; ``k8s_pod`` therefore undoes the ingest's "limit without a request gets the
request" defaulting unless ``defaulted=True``.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path

import msgspec
import pytest

from service.engine.objects import Node, Pod
from service.engine.quantity import parse_quantity, to_base_units
from service.ingest.kube import node_from_object, pod_from_object

CONFORMANCE_DIR = Path(__file__).resolve().parents[1] / "conformance"


@cache
def _groups(file: str) -> dict[str, dict]:
    data = json.loads((CONFORMANCE_DIR / file).read_text())
    return {g["function"]: g for g in data["groups"]}


def conformance_cases(function: str, file: str = "kubelet.json") -> list:
    """Every case of one conformance group as pytest params (id = case name)."""
    group = _groups(file)[function]
    assert group["cases"], function
    return [pytest.param(c["input"], c["expected"], id=c["name"]) for c in group["cases"]]


def base_units(resources: dict) -> dict[str, int]:
    return {name: to_base_units(name, parse_quantity(q)) for name, q in resources.items()}


def _named(obj: dict) -> dict:
    obj = copy.deepcopy(obj)
    meta = obj.setdefault("metadata", {})
    if not meta.get("name"):
        meta["name"] = meta.get("generateName") or "pod"
    spec = obj.setdefault("spec", {})
    for key in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(key) or ()):
            c.setdefault("name", f"{key}-{i}")
    return obj


def _raw_keys(resources: dict | None, part: str) -> set[str]:
    return set(((resources or {}).get(part)) or {})


def k8s_pod(obj: dict, *, defaulted: bool = False) -> Pod:
    """A Pod from Kubernetes JSON (missing names filled in)."""
    obj = _named(obj)
    pod = pod_from_object(obj)
    if defaulted:
        return pod
    spec = obj["spec"]

    def undo(containers, raws):
        out = []
        for c, raw in zip(containers, raws or (), strict=True):
            keep = _raw_keys(raw.get("resources"), "requests")
            out.append(
                msgspec.structs.replace(
                    c, requests={k: v for k, v in c.requests.items() if k in keep}
                )
            )
        return tuple(out)

    changes = {
        "containers": undo(pod.containers, spec.get("containers")),
        "init_containers": undo(pod.init_containers, spec.get("initContainers")),
    }
    if pod.resources is not None:
        keep = _raw_keys(spec.get("resources"), "requests")
        changes["resources"] = msgspec.structs.replace(
            pod.resources,
            requests={k: v for k, v in pod.resources.requests.items() if k in keep},
        )
    return msgspec.structs.replace(pod, **changes)


def k8s_node(obj: dict) -> Node:
    return node_from_object(_named(obj))
