"""Random small clusters for differential tests against the real scheduler: Kubernetes
objects as kubectl prints them (already defaulted: priorities set, requests where limits are),
and a pending pod, in the oracle's case format.

What varies: node labels (hostname, zone, disk, a numeric label), NoSchedule /
PreferNoSchedule / NoExecute taints, unschedulable nodes, node images (tagged, untagged and
fully qualified names, sizes around ImageLocality's 23 MiB / 1000 MiB thresholds), allocatable
with extended resources and hugepages; bound pods with requests, limits, init and sidecar
containers, host ports (sidecars too), priorities, start times and PDBs; nominated pods; an
incoming pod with tolerations, nodeSelector, required and preferred node affinity, images,
host ports, overhead and pod-level resources.
"""

from __future__ import annotations

import random

ZONES = ("z1", "z2", "z3")
TAINTS = (
    {"key": "dedicated", "value": "db", "effect": "NoSchedule"},
    {"key": "maint", "value": "a", "effect": "NoSchedule"},
    {"key": "soft", "value": "x", "effect": "PreferNoSchedule"},
    {"key": "spot", "value": "", "effect": "PreferNoSchedule"},
    {"key": "gpu", "value": "", "effect": "NoExecute"},
)
MB = 1024 * 1024
# (names a node reports, size, the name a pod uses)
IMAGES = (
    (["docker.io/library/nginx:1.27", "nginx:1.27"], 60 * MB, "nginx:1.27"),
    (["docker.io/library/redis:latest", "redis:latest"], 45 * MB, "redis"),
    (["example.com/big:1"], 900 * MB, "example.com/big:1"),
    (["example.com/huge:2"], 1500 * MB, "example.com/huge:2"),
    (["registry.k8s.io/pause:3.10"], 300 * 1024, "registry.k8s.io/pause:3.10"),
    (["example.com:5000/tools"], 30 * MB, "example.com:5000/tools"),
)
CPUS = ("0", "100m", "250m", "500m", "1", "1500m")
MEMORIES = ("64Mi", "128Mi", "129M", "512Mi", "1Gi")


def _node(rng: random.Random, i: int) -> dict:
    name = f"n{i}"
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "topology.kubernetes.io/zone": rng.choice(ZONES),
        "disk": rng.choice(("ssd", "hdd")),
    }
    if rng.random() < 0.5:
        labels["cores"] = str(rng.choice((4, 8, 16, 32)))
    cpu = rng.choice(("1", "2", "4", "8"))
    memory = rng.choice(("1Gi", "2Gi", "8Gi"))
    alloc = {
        "cpu": cpu,
        "memory": memory,
        "pods": rng.choice(("4", "110")),
        "ephemeral-storage": "20Gi",
    }
    if rng.random() < 0.3:
        alloc["example.com/gpu"] = str(rng.choice((1, 2)))
    if rng.random() < 0.2:
        alloc["hugepages-2Mi"] = rng.choice(("0", "128Mi"))
    spec: dict = {}
    if rng.random() < 0.4:
        spec["taints"] = rng.sample(TAINTS, rng.choice((1, 1, 2)))
    if rng.random() < 0.1:
        spec["unschedulable"] = True
    status = {
        "capacity": dict(alloc),
        "allocatable": alloc,
        "conditions": [{"type": "Ready", "status": "True"}],
    }
    if rng.random() < 0.8:
        status["images"] = [
            {"names": names, "sizeBytes": size}
            for names, size, _ in rng.sample(IMAGES, rng.randint(1, 4))
        ]
    meta = {"name": name, "uid": f"node-{name}", "labels": labels}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec, "status": status}


def _resources(rng: random.Random) -> dict:
    requests = {}
    if rng.random() < 0.8:
        requests["cpu"] = rng.choice(CPUS)
    if rng.random() < 0.8:
        requests["memory"] = rng.choice(MEMORIES)
    if rng.random() < 0.1:
        requests["example.com/gpu"] = "1"
    out: dict = {"requests": requests} if requests else {}
    if requests and rng.random() < 0.2:
        out["limits"] = dict(requests)
    return out


def _container(rng: random.Random, name: str, ports: bool) -> dict:
    c: dict = {"name": name, "image": rng.choice(IMAGES)[2], "resources": _resources(rng)}
    if ports:
        c["ports"] = [
            {"containerPort": 80, "hostPort": rng.choice((8080, 9100)), "protocol": "TCP"}
        ]
    return c


def _pod_spec(rng: random.Random, priority: int) -> dict:
    spec: dict = {
        "containers": [
            _container(rng, f"c{j}", rng.random() < 0.1) for j in range(rng.choice((1, 1, 2)))
        ],
        "priority": priority,
        "schedulerName": "default-scheduler",
    }
    if rng.random() < 0.2:
        init = [_container(rng, "i0", False)]
        if rng.random() < 0.5:
            sidecar = _container(rng, "i1", rng.random() < 0.5)
            sidecar["restartPolicy"] = "Always"
            init.append(sidecar)
        spec["initContainers"] = init
    return spec


TOPOLOGY_KEYS = ("kubernetes.io/hostname", "topology.kubernetes.io/zone")


def _affinity_term(rng: random.Random) -> dict:
    """A pod affinity term on an app label, by hostname or zone, sometimes across
    namespaces (by name or by a namespace selector)."""
    apps = rng.sample(("web", "batch", "db", "incoming"), rng.choice((1, 2)))
    if rng.random() < 0.7:
        selector = {"matchExpressions": [{"key": "app", "operator": "In", "values": apps}]}
    else:
        selector = {"matchLabels": {"app": apps[0]}}
    term: dict = {"labelSelector": selector, "topologyKey": rng.choice(TOPOLOGY_KEYS)}
    choice = rng.random()
    if choice < 0.15:
        term["namespaces"] = ["default", "team"]
    elif choice < 0.3:
        term["namespaceSelector"] = {"matchLabels": {"tier": "gold"}}
    elif choice < 0.35:
        term["namespaceSelector"] = {}
    return term


def _pod_affinity(rng: random.Random) -> dict:
    """podAffinity and/or podAntiAffinity, required and/or preferred terms."""
    out: dict = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        if rng.random() < 0.5:
            continue
        entry: dict = {}
        if rng.random() < 0.5:
            entry["requiredDuringSchedulingIgnoredDuringExecution"] = [_affinity_term(rng)]
        if rng.random() < 0.6:
            entry["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": _affinity_term(rng)}
                for _ in range(rng.randint(1, 2))
            ]
        if entry:
            out[kind] = entry
    return out


def _bound_pod(rng: random.Random, node: str, i: int) -> dict:
    meta = {
        "name": f"p{i}",
        "namespace": rng.choice(("default", "team")),
        "uid": f"uid-p{i}",
        "labels": {"app": rng.choice(("web", "batch", "db"))},
    }
    spec = _pod_spec(rng, rng.choice((-5, 0, 10, 100, 1000)))
    spec["nodeName"] = node
    if rng.random() < 0.4:
        affinity = _pod_affinity(rng)
        if affinity:
            spec["affinity"] = affinity
    status = {
        "phase": "Running",
        "startTime": f"2026-11-20T{rng.randint(0, 11):02}:{rng.randint(0, 59):02}:00Z",
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _incoming(rng: random.Random, nodes: list[dict], priority: int) -> dict:
    spec = _pod_spec(rng, priority)
    if rng.random() < 0.6:
        tolerations = []
        for taint in rng.sample(TAINTS, rng.randint(1, 3)):
            effect = rng.choice((taint["effect"], ""))
            if rng.random() < 0.5:
                tolerations.append({"key": taint["key"], "operator": "Exists", "effect": effect})
            else:
                tolerations.append(
                    {
                        "key": taint["key"],
                        "operator": "Equal",
                        "value": taint["value"],
                        "effect": effect,
                    }
                )
        spec["tolerations"] = tolerations
    if rng.random() < 0.2:
        spec["nodeSelector"] = {"disk": rng.choice(("ssd", "hdd"))}
    affinity: dict = {}
    if rng.random() < 0.2:
        term = {
            "matchExpressions": [
                {
                    "key": "topology.kubernetes.io/zone",
                    "operator": "In",
                    "values": rng.sample(ZONES, 2),
                }
            ]
        }
        if rng.random() < 0.3:
            names = [n["metadata"]["name"] for n in rng.sample(nodes, min(2, len(nodes)))]
            term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": names}]}
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
    if rng.random() < 0.5:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randint(1, 100), "preference": _preference(rng)}
            for _ in range(rng.randint(1, 3))
        ]
    if affinity:
        spec["affinity"] = {"nodeAffinity": affinity}
    if rng.random() < 0.5:
        spec.setdefault("affinity", {}).update(_pod_affinity(rng))
    if rng.random() < 0.1:
        spec["overhead"] = {"cpu": "50m", "memory": "120Mi"}
    if rng.random() < 0.15:
        spec["resources"] = {
            "requests": {"cpu": rng.choice(("200m", "1")), "memory": rng.choice(("256Mi", "1Gi"))}
        }
    meta: dict = {
        "name": "incoming",
        "namespace": "default",
        "uid": "uid-incoming",
        "labels": {"app": "incoming"},
    }
    if rng.random() < 0.4:
        meta["labels"] = {"app": "web"}
        if rng.random() < 0.6:
            meta["ownerReferences"] = [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-rs",
                    "uid": "rs",
                    "controller": True,
                }
            ]
    if rng.random() < 0.4:
        spec["topologySpreadConstraints"] = _spread_constraints(rng)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def _spread_constraints(rng: random.Random) -> list[dict]:
    """One or two constraints: by hostname, zone or a label only some nodes carry; every
    action, minDomains, inclusion policies and matchLabelKeys now and then."""
    out = []
    keys = rng.sample(
        ("kubernetes.io/hostname", "topology.kubernetes.io/zone", "cores"), rng.choice((1, 1, 2))
    )
    for key in keys:
        when = rng.choice(("DoNotSchedule", "ScheduleAnyway"))
        c: dict = {
            "maxSkew": rng.choice((1, 1, 2, 3)),
            "topologyKey": key,
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": rng.choice(("web", "batch", "incoming"))}},
        }
        if when == "DoNotSchedule" and rng.random() < 0.3:
            c["minDomains"] = rng.choice((2, 3, 5))
        if rng.random() < 0.2:
            c["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.2:
            c["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.15:
            c["matchLabelKeys"] = ["app"]
        out.append(c)
    return out


def _preference(rng: random.Random) -> dict:
    choice = rng.random()
    if choice < 0.4:
        req = {
            "key": "topology.kubernetes.io/zone",
            "operator": rng.choice(("In", "NotIn")),
            "values": [rng.choice(ZONES)],
        }
    elif choice < 0.6:
        req = {"key": "disk", "operator": rng.choice(("Exists", "DoesNotExist"))}
    elif choice < 0.8:
        req = {
            "key": "cores",
            "operator": rng.choice(("Gt", "Lt")),
            "values": [str(rng.choice((4, 8, 16)))],
        }
    else:
        req = {"key": "disk", "operator": "In", "values": ["ssd"]}
    return {"matchExpressions": [req]}


def random_case(seed: int, kind: str = "placement", spread: bool = False) -> dict:
    """A case in the oracle's input format, the same for the same seed. ``spread``: roomy,
    untainted nodes holding more pods of the default namespace, and an incoming pod with
    spread constraints, so that topology spreading and pod affinity decide."""
    rng = random.Random(seed)
    nodes = [_node(rng, i) for i in range(rng.randint(2 if spread else 1, 7))]
    if spread:
        for n in nodes:
            n["spec"] = {}
            n["status"]["allocatable"].update(cpu="16", memory="32Gi", pods="110")
    objects: list[dict] = list(nodes)
    count = 0
    for n in nodes:
        for _ in range(rng.randint(0, 5 if kind == "preemption" or spread else 3)):
            bound = _bound_pod(rng, n["metadata"]["name"], count)
            if spread:
                bound["metadata"]["namespace"] = "default"
            objects.append(bound)
            count += 1
    if rng.random() < 0.5:
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {"selector": {"app": "web"}},
            }
        )
    if rng.random() < 0.5:
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {"name": "web-rs", "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": "web"}}},
            }
        )
    for name, tier in (("default", "gold"), ("team", rng.choice(("gold", "silver")))):
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": name, "labels": {"tier": tier}},
            }
        )
    if rng.random() < 0.3:
        objects.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "pdb", "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": rng.choice(("web", "batch"))}}},
                "status": {"disruptionsAllowed": rng.choice((0, 1))},
            }
        )
    if rng.random() < 0.2:
        nominee = _bound_pod(rng, "", count)
        del nominee["spec"]["nodeName"]
        nominee["status"] = {
            "phase": "Pending",
            "nominatedNodeName": rng.choice(nodes)["metadata"]["name"],
        }
        objects.append(nominee)
    priority = rng.choice((0, 10, 500)) if kind == "placement" else rng.choice((500, 2000))
    incoming = _incoming(rng, nodes, priority)
    if spread:
        incoming["spec"]["topologySpreadConstraints"] = _spread_constraints(rng)
        incoming["spec"].pop("nodeSelector", None)
    return {"kind": kind, "objects": objects, "pod": incoming}
