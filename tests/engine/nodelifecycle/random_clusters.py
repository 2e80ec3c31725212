"""Random node lifecycle states for the differential tests against nodelifecycle-oracle:
1-100 nodes over 1-5 zones (and unlabelled ones), Ready conditions of every kind and age,
nodes that never posted status, leases, existing lifecycle taints, user NoExecute taints,
pods with and without NoExecute tolerations, rates and large-cluster thresholds.

Two states are left out because the oracle's warm start differs from a long-running
controller there (docs/fidelity.md): a lifecycle taint that contradicts the node's posted
status, and pods created after their node's taint."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"

# Heartbeat and lease ages (seconds before now) around the 50 s grace and the 60 s startup
# grace, and far beyond them.
AGES = (0, 3, 20, 45, 49, 50, 51, 55, 60, 61, 90, 300, 3600)


def _time(seconds_before: float) -> str:
    moment = NOW - timedelta(seconds=seconds_before)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _toleration(rng: random.Random) -> list[dict]:
    kind = rng.randrange(8)
    if kind == 0:
        return []
    if kind == 1:
        return [{"operator": "Exists"}]  # tolerates everything for ever
    keys = [NOT_READY, UNREACHABLE]
    rng.shuffle(keys)
    result = []
    for key in keys[: rng.randint(1, 2)]:
        tol = {"key": key, "operator": "Exists", "effect": "NoExecute"}
        seconds = rng.choice((None, 0, 5, 30, 60, 120, 300, 600, -1))
        if seconds is not None:
            tol["tolerationSeconds"] = seconds
        result.append(tol)
    if rng.random() < 0.1:
        result.append({"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoExecute"})
    return result


def _lifecycle_taint(rng: random.Random, conditions: list[dict]) -> str:
    """A lifecycle taint the controller could have left on a node with this posted status: a
    node that posted False carries not-ready, one that posted Unknown (or nothing) carries
    unreachable (docs/fidelity.md: the oracle seeds its de-duplication set only with nodes
    whose taint matches their posted status); a Ready node may carry either."""
    status = conditions[0]["status"] if conditions else "Unknown"
    if status == "False":
        return NOT_READY
    if status == "Unknown":
        return UNREACHABLE
    return rng.choice((NOT_READY, UNREACHABLE))


def _alive(node: dict, lease: dict | None) -> bool:
    """Whether the node's kubelet is still posting: its last sign of life (heartbeat or
    lease; creation for a node without Ready) is within its grace period at now, which is
    Verdict's reading of a snapshot (the oracle's kubeletAlive)."""
    conditions = node["status"]["conditions"]
    probes = [conditions[0]["lastHeartbeatTime"]] if conditions else [
        node["metadata"]["creationTimestamp"]
    ]
    if lease is not None:
        probes.append(lease["spec"]["renewTime"].replace(".000000Z", "Z"))
    grace = 50 if conditions else 60
    newest = max(datetime.strptime(p, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) for p in probes)
    return (NOW - newest).total_seconds() <= grace


def _node(rng: random.Random, name: str, zone: str | None, region: str) -> tuple[dict, dict | None]:
    labels = {"kubernetes.io/hostname": name}
    if zone is not None:
        labels["topology.kubernetes.io/region"] = region
        labels["topology.kubernetes.io/zone"] = zone
    created_age = rng.choice((10, 30, 59, 61, 90, 86400))
    meta = {
        "name": name,
        "uid": f"uid-{name}",
        "creationTimestamp": _time(created_age),
        "labels": labels,
    }
    conditions = []
    if rng.random() < 0.9:
        status = rng.choices(("True", "False", "Unknown"), weights=(6, 2, 1))[0]
        beat = min(rng.choice(AGES), created_age)
        transition = rng.choice((beat, min(created_age, beat + rng.choice((0, 10, 100, 1000)))))
        conditions.append(
            {
                "type": "Ready",
                "status": status,
                "lastHeartbeatTime": _time(beat),
                "lastTransitionTime": _time(max(transition, beat)),
            }
        )
    taints = []
    if rng.random() < 0.25:
        key = _lifecycle_taint(rng, conditions)
        added = rng.choice((0, 10, 60, 200, 299, 300, 301, 900))
        taints.append({"key": key, "effect": "NoExecute", "timeAdded": _time(added)})
    if rng.random() < 0.05:
        taints.append({"key": "dedicated", "value": "x", "effect": "NoExecute", "timeAdded": _time(30)})
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta,
        "spec": {"taints": taints} if taints else {},
        "status": {"conditions": conditions},
    }
    lease = None
    if rng.random() < 0.5:
        renewed = rng.choice(AGES)
        lease = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"namespace": "kube-node-lease", "name": name},
            "spec": {"holderIdentity": name, "renewTime": _time(renewed).replace("Z", ".000000Z")},
        }
    return node, lease


def _pod(rng: random.Random, name: str, node: str) -> dict:
    meta = {"namespace": "default", "name": name, "uid": f"uid-{name}"}
    meta["creationTimestamp"] = _time(3600)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "nodeName": node,
            "tolerations": _toleration(rng),
            "containers": [{"name": "c", "image": "i"}],
        },
        "status": {"phase": "Running"},
    }


def random_case(seed: int) -> dict:
    """One nodelifecycle-oracle input (its README's format) from ``seed``."""
    rng = random.Random(seed)
    size = rng.choice((1, 2, 3, 5, 8, 12, 20, 30, 50, 60, 100))
    size = rng.randint(1, size)
    zones = [f"z{i}" for i in range(rng.randint(1, 5))]
    unlabelled = rng.random() < 0.15
    nodes, leases, pods = [], [], []
    alive = {}
    for i in range(size):
        zone = None if unlabelled and rng.random() < 0.3 else rng.choice(zones)
        node, lease = _node(rng, f"n{i:03d}", zone, "r1")
        nodes.append(node)
        alive[node["metadata"]["name"]] = _alive(node, lease)
        if lease is not None:
            leases.append(lease)
        for j in range(rng.choice((0, 1, 1, 2, 3))):
            pods.append(_pod(rng, f"p{i:03d}-{j}", node["metadata"]["name"]))
    settings = {
        "largeClusterSizeThreshold": rng.choice((50, 50, 3, 10)),
        "unhealthyZoneThreshold": rng.choice((0.55, 0.55, 0.3)),
        "nodeEvictionRate": rng.choice((0.1, 0.1, 0.5, 1)),
        "secondaryNodeEvictionRate": rng.choice((0.01, 0.05)),
    }
    return {
        "nodes": nodes,
        "leases": leases,
        "pods": pods,
        "now": _time(0),
        "horizon": "2m",
        "settings": settings,
        "applyDefaultTolerations": rng.random() < 0.5,
        "kubeletAlive": alive,
    }
