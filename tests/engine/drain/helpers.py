"""Builders the drain engine's tests share: pods with owners, volumes, phases and
readiness, PDBs with status, read through ingest as a snapshot would be."""

from __future__ import annotations

from service.engine.objects import Cluster
from tests.conftest import node, pod, snapshot_from_objects


def owned(name: str, node_name: str, kind: str | None, owner: str = "app", **kw) -> dict:
    """A running, Ready pod on ``node_name`` controlled by ``kind``/``owner`` (None: bare)."""
    labels = kw.pop("labels", {"app": owner})
    ready = kw.pop("ready", True)
    phase = kw.pop("phase", "Running")
    obj = pod(name, node_name, cpu=kw.pop("cpu", "100m"), **kw)
    obj["metadata"]["labels"] = labels
    if kind is not None:
        obj["metadata"]["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": kind, "name": owner, "uid": f"u-{owner}",
             "controller": True}
        ]  # fmt: skip
    obj["status"] = {
        "phase": phase,
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
    }
    return obj


def pdb(name: str, selector: dict | None, allowed: int, *, namespace: str = "default", **st):
    """A PodDisruptionBudget with its status (desiredHealthy, currentHealthy, ...)."""
    spec: dict = {}
    if selector is not None:
        spec["selector"] = selector
    if "policy" in st:
        spec["unhealthyPodEvictionPolicy"] = st.pop("policy")
    generation = st.pop("generation", 1)
    status = {"disruptionsAllowed": allowed, "observedGeneration": 1, **st}
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace, "generation": generation},
        "spec": spec,
        "status": status,
    }


def cluster_of(*objects: dict, nodes: tuple[str, ...] = ("n1", "n2", "n3")) -> Cluster:
    return Cluster(snapshot_from_objects([node(n) for n in nodes] + list(objects)))
