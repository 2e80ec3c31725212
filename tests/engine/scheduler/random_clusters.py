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

``random_workload_case`` builds clusters of Deployments (ReplicaSets with pod-template-hash),
StatefulSets and ReplicationControllers, Services over some of them and labelled Namespaces;
their pods carry required and preferred pod affinity and anti-affinity on hostname and zone
(across namespaces by name or namespaceSelector, with matchLabelKeys / mismatchLabelKeys) and
spread constraints of every kind (DoNotSchedule / ScheduleAnyway, minDomains, both inclusion
policies, matchLabelKeys); the incoming pod is a new replica of one of them.
"""

from __future__ import annotations

import json
import random

from tests.engine.scheduler.random_volumes import add_volumes

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
    _resize_status(random.Random(f"{node}/{i}/{json.dumps(spec, sort_keys=True)}"), spec, status)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _resize_status(rng: random.Random, spec: dict, status: dict) -> None:
    """One bound pod in six resized in place: its containers' and sidecars' statuses carry
    actuated and allocated requests around the spec's, sometimes an Infeasible
    PodResizePending condition (counted from v1.33: engine/resize.py). Drawn from its own
    generator so that the clusters of earlier seeds are unchanged otherwise."""
    if rng.random() >= 1 / 6:
        return
    statuses: dict[str, list] = {"containerStatuses": [], "initContainerStatuses": []}
    for field, key in (
        ("containers", "containerStatuses"),
        ("initContainers", "initContainerStatuses"),
    ):
        for c in spec.get(field, ()):
            if field == "initContainers" and c.get("restartPolicy") != "Always":
                continue
            if not c["resources"].get("requests"):
                # v1.33.3's determineContainerReqs panics on a resized container without
                # requests (max() writes into the spec's nil map); resize needs requests.
                continue
            cpu = rng.choice((100, 250, 500, 1000, 2000))
            entry = {
                "name": c["name"],
                "resources": {"requests": {"cpu": f"{cpu}m"}},
                "allocatedResources": {"cpu": f"{cpu * rng.choice((1, 2, 4))}m"},
            }
            statuses[key].append(entry)
    status.update({k: v for k, v in statuses.items() if v})
    if rng.random() < 0.3:
        status["conditions"] = [
            {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}
        ]


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


def random_case(
    seed: int, kind: str = "placement", spread: bool = False, volumes: bool = False
) -> dict:
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
    if volumes:  # StatefulSets claiming zonal volumes, CSI attach limits (random_volumes.py)
        add_volumes(seed, objects, incoming)
    return {"kind": kind, "objects": objects, "pod": incoming}


# --- clusters of workloads: Deployments, StatefulSets, ReplicationControllers, Services ----

_WORKLOAD_APPS = ("web", "api", "db", "cache")


def _workload_term(rng: random.Random, app: str, ns: str) -> dict:
    """An affinity term over one workload's pods (its own or another's), by hostname or zone;
    now and then across namespaces, with matchLabelKeys / mismatchLabelKeys (which the API
    server has already merged into the selector: the scheduler reads only the selector)."""
    target = app if rng.random() < 0.6 else rng.choice(_WORKLOAD_APPS)
    term: dict = {
        "labelSelector": {"matchLabels": {"app": target}},
        "topologyKey": rng.choice(TOPOLOGY_KEYS),
    }
    r = rng.random()
    if r < 0.15:
        term["namespaces"] = ["default", "team"]
    elif r < 0.3:
        term["namespaceSelector"] = {"matchLabels": {"tier": "gold"}}
    elif r < 0.35:
        term["namespaceSelector"] = {}
    elif r < 0.4:
        term["namespaces"] = [ns]
    if rng.random() < 0.15:
        term["matchLabelKeys"] = ["pod-template-hash"]
    if rng.random() < 0.1:
        term["mismatchLabelKeys"] = ["tenant"]
    return term


def _workload_affinity(rng: random.Random, app: str, ns: str) -> dict:
    """Required and preferred pod affinity and anti-affinity over workloads."""
    out: dict = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        if rng.random() < (0.35 if kind == "podAffinity" else 0.6):
            continue
        entry: dict = {}
        if rng.random() < 0.5:
            entry["requiredDuringSchedulingIgnoredDuringExecution"] = [
                _workload_term(rng, app, ns) for _ in range(rng.choice((1, 1, 2)))
            ]
        if rng.random() < 0.7:
            entry["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": _workload_term(rng, app, ns)}
                for _ in range(rng.randint(1, 2))
            ]
        if entry:
            out[kind] = entry
    return out


def _workload_spread(rng: random.Random, app: str, hashed: bool) -> list[dict]:
    """Spread constraints of every kind over the workload's own pods."""
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
            "labelSelector": {"matchLabels": {"app": app}},
        }
        if when == "DoNotSchedule" and rng.random() < 0.35:
            c["minDomains"] = rng.choice((2, 3, 4, 6))
        if rng.random() < 0.3:
            c["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.3:
            c["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
        if hashed and rng.random() < 0.4:
            c["matchLabelKeys"] = ["pod-template-hash"]
        out.append(c)
    return out


def _workload(rng: random.Random, app: str) -> dict:
    """A workload: its controller object, the labels of its pods, its pods' scheduling spec."""
    ns = rng.choice(("default", "default", "team"))
    kind = rng.choice(("ReplicaSet", "ReplicaSet", "StatefulSet", "ReplicationController"))
    name = f"{app}-{kind.lower()}"
    labels = {"app": app}
    if kind == "ReplicaSet":
        labels["pod-template-hash"] = rng.choice(("h1", "h2"))
        selector: dict = {"matchLabels": dict(labels)}
    elif kind == "StatefulSet":
        selector = {"matchExpressions": [{"key": "app", "operator": "In", "values": [app]}]}
    else:
        selector = dict(labels)  # a ReplicationController's selector is a label map
    if rng.random() < 0.2:
        labels["tenant"] = rng.choice(("a", "b"))
    spec: dict = {}
    affinity = _workload_affinity(rng, app, ns) if rng.random() < 0.7 else {}
    if affinity:
        spec["affinity"] = affinity
    if rng.random() < 0.6:
        spec["topologySpreadConstraints"] = _workload_spread(rng, app, kind == "ReplicaSet")
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "soft", "operator": "Exists"}]
    api = "v1" if kind == "ReplicationController" else "apps/v1"
    controller = {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
        "spec": {"selector": selector},
    }
    owner = {
        "apiVersion": api,
        "kind": kind,
        "name": name,
        "uid": f"uid-{name}",
        "controller": True,
    }
    return {
        "app": app,
        "ns": ns,
        "labels": labels,
        "spec": spec,
        "object": controller,
        "owner": owner,
    }


def _workload_node(rng: random.Random, i: int, roomy: bool) -> dict:
    node = _node(rng, i)
    labels = node["metadata"]["labels"]
    if rng.random() < 0.1:
        del labels["topology.kubernetes.io/zone"]
    taints = [
        t
        for t in node["spec"].get("taints", ())
        if t["effect"] == "PreferNoSchedule" or rng.random() < 0.3
    ]
    node["spec"] = {"taints": taints} if taints else {}
    if roomy:
        node["status"]["allocatable"].update(cpu="8", memory="16Gi", pods="110")
    else:
        node["status"]["allocatable"].update(cpu=rng.choice(("1", "2")), memory="2Gi")
    return node


def random_workload_case(seed: int, kind: str = "placement") -> dict:
    """A cluster of Deployments (ReplicaSets), StatefulSets and ReplicationControllers, with
    Services over their pods, whose pods use required and preferred (anti-)affinity on
    hostname and zone and spread constraints of every kind; the incoming pod is a new replica
    of one of them (or a pod only a Service selects, for system default spreading). For
    preemption, nodes are small and the replica outranks most bound pods."""
    rng = random.Random(f"workloads/{seed}")
    preempting = kind == "preemption"
    nodes = [_workload_node(rng, i, not preempting) for i in range(rng.randint(3, 8))]
    apps = rng.sample(_WORKLOAD_APPS, rng.randint(2, 4))
    workloads = [_workload(rng, app) for app in apps]
    objects: list[dict] = [*nodes, *(w["object"] for w in workloads)]
    count = 0
    for w in workloads:
        for _ in range(rng.randint(1, 6)):
            node = rng.choice(nodes)["metadata"]["name"]
            spec = _pod_spec(rng, rng.choice((0, 10, 100) if preempting else (0,)))
            spec.update(w["spec"])
            spec["nodeName"] = node
            meta = {
                "name": f"{w['app']}-{count}",
                "namespace": w["ns"],
                "uid": f"uid-{w['app']}-{count}",
                "labels": dict(w["labels"]),
                "ownerReferences": [w["owner"]],
            }
            if w["labels"].get("pod-template-hash") and rng.random() < 0.3:
                meta["labels"]["pod-template-hash"] = "h0"  # a pod of the previous rollout
            start = f"2026-11-20T{rng.randint(0, 11):02}:{rng.randint(0, 59):02}:00Z"
            objects.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": meta,
                    "spec": spec,
                    "status": {"phase": "Running", "startTime": start},
                }
            )
            count += 1
    for w in rng.sample(workloads, rng.randint(0, len(workloads))):
        selector = {"app": w["app"]}
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": f"{w['app']}-svc", "namespace": w["ns"]},
                "spec": {"selector": selector},
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
    if preempting and rng.random() < 0.4:
        w = rng.choice(workloads)
        objects.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "pdb", "namespace": w["ns"]},
                "spec": {"selector": {"matchLabels": {"app": w["app"]}}},
                "status": {"disruptionsAllowed": rng.choice((0, 1))},
            }
        )
    w = rng.choice(workloads)
    spec = _pod_spec(rng, rng.choice((500, 2000)) if preempting else 0)
    meta: dict = {"name": "incoming", "namespace": w["ns"], "uid": "uid-incoming"}
    if rng.random() < 0.8:
        spec.update(w["spec"])
        meta["labels"] = dict(w["labels"])
        meta["ownerReferences"] = [w["owner"]]
    else:
        meta["labels"] = {"app": w["app"]}  # selected by the workload's Service, if any
    if preempting:
        spec["containers"][0]["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}}
    incoming = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": "Pending"},
    }
    return {"kind": kind, "objects": objects, "pod": incoming}
