"""Random kubelet states for the differential tests against kubelet-oracle: a node and its
pods for admission (QoS classes, critical pods by priority and by static annotation,
extended resources, host ports, node affinity and selectors, NoExecute taints, pod-level
resources, sidecars, overhead), and a node, its pods, a Summary and a kubelet
configuration for one eviction pass (hard and soft thresholds, percentages, allocatable
enforcement, the three filesystem layouts, grace periods, minimum reclaim, tied pods)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

from service.engine.quantity import parse_quantity

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
MI = 1024 * 1024
GI = 1024 * MI
EXTENDED = "example.com/gpu"


def _time(seconds_before: float) -> str:
    return (NOW - timedelta(seconds=seconds_before)).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- pods --------------------------------------------------------------------------------------


def _resources(rng: random.Random, qos: str, gpu: bool) -> dict:
    cpu = rng.choice((0, 50, 100, 250, 500, 1000, 1500))
    mem = rng.choice((0, 64, 128, 256, 512, 1024, 2048)) * MI
    if qos == "BestEffort":
        return {}
    requests = {}
    if cpu:
        requests["cpu"] = f"{cpu}m"
    if mem:
        requests["memory"] = str(mem)
    if not requests:
        requests["cpu"] = "100m"
    if gpu:
        requests[EXTENDED] = str(rng.randint(1, 2))
    if qos == "Guaranteed":
        requests.setdefault("cpu", "100m")
        requests.setdefault("memory", str(128 * MI))
        return {"requests": dict(requests), "limits": dict(requests)}
    out = {"requests": requests}
    if rng.random() < 0.4:
        out["limits"] = {"memory": str(int(requests.get("memory", str(64 * MI))) * 2)}
    if gpu:
        out.setdefault("limits", {})[EXTENDED] = requests[EXTENDED]
    return out


def _container(rng: random.Random, name: str, qos: str, gpu: bool = False) -> dict:
    container = {"name": name, "image": "registry.example/app:1"}
    resources = _resources(rng, qos, gpu)
    if resources:
        container["resources"] = resources
    return container


def random_pod(
    rng: random.Random,
    name: str,
    namespace: str = "default",
    *,
    node: str | None = "n",
    extras: bool = True,
) -> dict:
    """A pod with a random QoS class and, with ``extras``, the admission features."""
    qos = rng.choice(("BestEffort", "Burstable", "Burstable", "Guaranteed"))
    gpu = extras and rng.random() < 0.1
    spec: dict = {"containers": [_container(rng, "main", qos, gpu)]}
    if rng.random() < 0.2:
        spec["containers"].append(_container(rng, "side", qos))
    meta: dict = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    meta["creationTimestamp"] = _time(rng.choice((60, 600, 3600)))
    priority = rng.choice((0, 0, 0, 100, 1000, -5))
    if extras:
        if rng.random() < 0.15:
            priority = rng.choice((2000000000, 2000001000))
            spec["priorityClassName"] = (
                "system-cluster-critical" if priority == 2000000000 else "system-node-critical"
            )
        if rng.random() < 0.07:
            meta["annotations"] = {"kubernetes.io/config.source": "file"}
            meta["namespace"] = "kube-system"
        if rng.random() < 0.15:
            sidecar = {**_container(rng, "sidecar", qos), "restartPolicy": "Always"}
            if rng.random() < 0.3:  # counted by admission since v1.34 (kubernetes#132040)
                sidecar["ports"] = [
                    {"containerPort": 81, "hostPort": rng.choice((80, 8080)), "protocol": "TCP"}
                ]
            spec["initContainers"] = [sidecar]
        if rng.random() < 0.1:
            spec["initContainers"] = [*spec.get("initContainers", []), _container(rng, "init", qos)]
        if rng.random() < 0.1:
            spec["overhead"] = {"cpu": "50m", "memory": str(32 * MI)}
        if rng.random() < 0.08 and qos != "BestEffort":
            total_cpu = rng.choice((500, 1000, 2000))
            spec["resources"] = {"requests": {"cpu": f"{total_cpu}m", "memory": str(GI)}}
            if qos == "Guaranteed":
                spec["resources"]["limits"] = dict(spec["resources"]["requests"])
                for c in spec["containers"]:
                    c.pop("resources", None)
        if rng.random() < 0.15:
            spec["containers"][0]["ports"] = [
                {"containerPort": 80, "hostPort": rng.choice((80, 8080, 9100)), "protocol": "TCP"}
            ]
        if rng.random() < 0.1:
            spec["nodeSelector"] = {"disk": rng.choice(("ssd", "hdd"))}
        if rng.random() < 0.08:
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "zone",
                                        "operator": rng.choice(("In", "NotIn")),
                                        "values": ["a"],
                                    }
                                ]
                            }
                        ]
                    }
                }
            }
        if rng.random() < 0.1:
            spec["tolerations"] = [
                {"key": "maintenance", "operator": "Exists", "effect": "NoExecute"}
            ]
    spec["priority"] = priority
    status: dict = {"phase": "Running", "startTime": meta["creationTimestamp"]}
    if node is not None:
        spec["nodeName"] = node
        _resize_status(random.Random(f"{name}/{json.dumps(spec, sort_keys=True)}"), spec, status)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _defaulted_requests(container: dict) -> dict:
    """The container's requests as the API server defaults them (a limit without a request
    sets the request): what the kubelet allocates at admission."""
    resources = container.get("resources") or {}
    return {**resources.get("limits", {}), **resources.get("requests", {})}


def _resize_status(rng: random.Random, spec: dict, status: dict) -> None:
    """One of the node's pods in six resized in place (admission counts its status from
    v1.33: engine/resize.py): its containers with a cpu request get actuated and allocated
    cpu around it, sometimes an Infeasible PodResizePending condition. Its own generator
    keeps the states of earlier seeds otherwise unchanged."""
    if rng.random() >= 1 / 6:
        return
    entries = []
    for c in spec["containers"]:
        cpu = c.get("resources", {}).get("requests", {}).get("cpu")
        if cpu is None:
            continue  # v1.33.3 panics on a resized container without requests
        milli = rng.choice((100, 250, 500, 1000))
        # The kubelet publishes every allocated and actuated request, not only the resized.
        requests = _defaulted_requests(c)
        entries.append(
            {
                "name": c["name"],
                "resources": {"requests": {**requests, "cpu": f"{milli}m"}},
                "allocatedResources": {
                    **requests,
                    "cpu": f"{milli * rng.choice((1, 2, 4))}m",
                },
            }
        )
    if entries:
        status["containerStatuses"] = entries
        if rng.random() < 0.3:
            status["conditions"] = [
                {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}
            ]


def random_node(rng: random.Random, name: str = "n") -> dict:
    cpu = rng.choice((1000, 2000, 4000))
    mem = rng.choice((2, 4, 8)) * GI
    allocatable = {"cpu": f"{cpu}m", "memory": str(mem), "pods": str(rng.choice((4, 10, 110)))}
    if rng.random() < 0.3:
        allocatable[EXTENDED] = str(rng.randint(0, 2))
    labels = {"kubernetes.io/os": "linux", "kubernetes.io/hostname": name}
    if rng.random() < 0.5:
        labels["disk"] = rng.choice(("ssd", "hdd"))
    if rng.random() < 0.5:
        labels["zone"] = rng.choice(("a", "b"))
    spec: dict = {}
    if rng.random() < 0.15:
        spec["taints"] = [{"key": "maintenance", "effect": "NoExecute"}]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {"allocatable": allocatable, "capacity": dict(allocatable)},
    }


def admission_case(seed: int) -> dict:
    """One kubelet-oracle ``admit`` input."""
    rng = random.Random(seed)
    node = random_node(rng)
    pods = [random_pod(rng, f"p{i:02d}") for i in range(rng.randint(0, 8))]
    pod = random_pod(rng, "incoming", rng.choice(("default", "kube-system")))
    return {"mode": "admit", "node": node, "pods": pods, "pod": pod}


def _resize_both(rng: random.Random, pod: dict) -> None:
    """Resize ``pod`` in place: each container with requests gets allocated and actuated
    cpu and memory of its own, so that the spec (the desired requests), the allocation and
    what runs differ: a pending upsize (spec above the allocation), a downsize not yet
    actuated (allocation above what runs), or one the kubelet found Infeasible."""
    entries = []
    for c in pod["spec"]["containers"]:
        requests = _defaulted_requests(c)
        if not requests:
            continue
        allocated, actuated = dict(requests), dict(requests)
        for name, unit in (("cpu", "m"), ("memory", "")):
            if name not in requests:
                continue
            base = parse_quantity(requests[name]).value
            scale = 1000 if name == "cpu" else 1
            allocated[name] = f"{int(base * scale * rng.choice((0.25, 0.5, 2, 4)))}{unit}"
            actuated[name] = rng.choice((allocated[name], requests[name]))
        entries.append(
            {
                "name": c["name"],
                "resources": {"requests": actuated},
                "allocatedResources": allocated,
            }
        )
    if not entries:
        return
    pod["status"]["containerStatuses"] = entries
    if rng.random() < 0.2:
        pod["status"]["conditions"] = [
            {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}
        ]


def critical_preemption_case(seed: int) -> dict:
    """A kubelet-oracle ``admit`` input where a critical pod fails admission for lack of cpu
    or memory on a node full of pods, half of them resized in place: the victims the
    kubelet picks depend on what it counts for each resized pod."""
    rng = random.Random(seed)
    node = random_node(rng)
    pods = []
    for i in range(rng.randint(3, 9)):
        pod = random_pod(rng, f"r{i:02d}", extras=False)
        if rng.random() < 0.5:
            _resize_both(rng, pod)
        pods.append(pod)
    cpu = int(parse_quantity(node["status"]["allocatable"]["cpu"]).value * 1000)
    mem = int(parse_quantity(node["status"]["allocatable"]["memory"]).value)
    requests = {
        "cpu": f"{int(cpu * rng.choice((0.3, 0.6, 0.9)))}m",
        "memory": str(int(mem * rng.choice((0.1, 0.5, 0.8)))),
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "critical", "namespace": "kube-system", "uid": "uid-critical"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.example/app:1",
                    "resources": {"requests": requests},
                }
            ],
            "priorityClassName": "system-node-critical",
            "priority": 2000001000,
        },
    }
    return {"mode": "admit", "node": node, "pods": pods, "pod": pod}


# --- eviction ----------------------------------------------------------------------------------

LAYOUTS = ("single", "dedicatedImageFs", "split")


def _fs(rng: random.Random, capacity: int) -> dict:
    available = int(capacity * rng.choice((0.01, 0.04, 0.08, 0.12, 0.2, 0.5)))
    inodes = rng.choice((1_000_000, 4_000_000))
    free = int(inodes * rng.choice((0.02, 0.04, 0.3, 0.9)))
    return {
        "time": _time(0),
        "availableBytes": available,
        "capacityBytes": capacity,
        "usedBytes": capacity - available,
        "inodesFree": free,
        "inodes": inodes,
        "inodesUsed": inodes - free,
    }


def _pod_stats(rng: random.Random, pod: dict, tied: tuple[int, int] | None) -> dict:
    meta = pod["metadata"]
    working_set = tied[1] if tied else rng.choice((0, 10, 90, 100, 150, 200, 400, 900)) * MI
    containers = []
    for c in pod["spec"]["containers"]:
        root = rng.choice((0, 1, 50, 500)) * MI
        logs = rng.choice((0, 1, 20)) * MI
        containers.append(
            {
                "name": c["name"],
                "memory": {"time": _time(0), "workingSetBytes": working_set},
                "rootfs": {"time": _time(0), "usedBytes": root, "inodesUsed": root // 4096},
                "logs": {"time": _time(0), "usedBytes": logs, "inodesUsed": logs // 4096},
            }
        )
    return {
        "podRef": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]},
        "memory": {"time": _time(0), "workingSetBytes": working_set},
        "containers": containers,
        "process_stats": {"process_count": rng.choice((1, 5, 20, 100))},
    }


def _threshold_map(rng: random.Random, layout: str) -> dict:
    signals = ["memory.available", "nodefs.available", "nodefs.inodesFree", "pid.available"]
    if layout != "single":
        signals += ["imagefs.available", "imagefs.inodesFree"]
    if layout == "split":
        signals += ["containerfs.available"]
    if rng.random() < 0.2:
        signals.append("allocatableMemory.available")
    chosen = rng.sample(signals, rng.randint(1, min(4, len(signals))))
    out = {}
    for signal in chosen:
        if signal.startswith(("memory", "allocatableMemory")):
            out[signal] = rng.choice(("100Mi", "500Mi", "1Gi", "5%", "10%"))
        elif signal == "pid.available":
            out[signal] = rng.choice(("10%", "1000", "5%"))
        else:
            out[signal] = rng.choice(("5%", "10%", "15%", "1Gi"))
    return out


def eviction_case(seed: int, *, ties: bool = False, resized: bool = False) -> dict:
    """One kubelet-oracle ``evict-rank`` input; with ``ties``, pods that the kubelet's
    comparison cannot order (the same priority, exceeds-requests and usage minus request);
    with ``resized``, half the pods resized in place (their spec, allocated and actuated
    cpu and memory differ)."""
    rng = random.Random(seed)
    node = random_node(rng)
    node["status"]["capacity"]["ephemeral-storage"] = str(100 * GI)
    node["status"]["allocatable"]["ephemeral-storage"] = str(90 * GI)
    count = rng.randint(13, 16) if ties else rng.randint(0, 10)
    pods, pod_stats = [], []
    for i in range(count):
        pod = random_pod(rng, f"m{i:02d}", extras=False)
        tied = None
        if ties:
            request = 100 * MI
            pod["spec"]["priority"] = (i % 3) * 10 if rng.random() < 0.7 else 0
            pod["spec"]["containers"] = [
                {
                    "name": "main",
                    "image": "registry.example/app:1",
                    "resources": {"requests": {"cpu": "100m", "memory": str(request)}},
                }
            ]
            tied = (request, rng.choice((150, 200)) * MI)
        if resized and rng.random() < 0.5:
            _resize_both(rng, pod)
        pods.append(pod)
        pod_stats.append(_pod_stats(rng, pod, tied))
    layout = rng.choice(LAYOUTS)
    memory_capacity = int(node["status"]["capacity"]["memory"])
    available = int(memory_capacity * rng.choice((0.01, 0.03, 0.08, 0.2, 0.6)))
    summary: dict = {
        "node": {
            "nodeName": "n",
            "memory": {
                "time": _time(0),
                "availableBytes": available,
                "workingSetBytes": memory_capacity - available,
            },
            "fs": _fs(rng, 100 * GI),
            "rlimit": {
                "time": _time(0),
                "maxpid": 32768,
                "curproc": rng.choice((100, 30000, 32000)),
            },
            "systemContainers": [
                {
                    "name": "pods",
                    "memory": {
                        "time": _time(0),
                        "availableBytes": available // 2,
                        "workingSetBytes": memory_capacity // 2,
                    },
                }
            ],
        },
        "pods": pod_stats,
    }
    if layout != "single":
        summary["node"]["runtime"] = {"imageFs": _fs(rng, 200 * GI)}
        if layout == "split":
            summary["node"]["runtime"]["containerFs"] = summary["node"]["fs"]
    case: dict = {
        "mode": "evict-rank",
        "node": node,
        "pods": pods,
        "summary": summary,
        "filesystemLayout": layout,
        "now": _time(0),
    }
    hard = rng.random()
    if hard < 0.3:
        pass  # the Linux defaults
    elif hard < 0.4:
        case["evictionHard"] = {}
    elif hard < 0.55:
        mapping = _threshold_map(rng, layout)
        case["evictionHard"] = ",".join(f"{k}<{v}" for k, v in mapping.items())
    else:
        case["evictionHard"] = _threshold_map(rng, layout)
    if rng.random() < 0.35:
        soft = _threshold_map(rng, layout)
        case["evictionSoft"] = soft
        case["evictionSoftGracePeriod"] = {k: rng.choice(("30s", "1m30s", "5m")) for k in soft}
        case["evictionMaxPodGracePeriod"] = rng.choice((0, 30, 90))
        first = {}
        for signal in soft:
            if rng.random() < 0.6:
                first[signal] = _time(rng.choice((10, 60, 120, 600)))
        if first:
            case["firstObserved"] = first
    if rng.random() < 0.3:
        case["evictionMinimumReclaim"] = {
            "memory.available": rng.choice(("0Mi", "100Mi", "500Mi")),
            "nodefs.available": rng.choice(("1Gi", "5%")),
        }
        # A signal first observed long enough ago was met in the previous pass, and a
        # minimum reclaim keeps it met (min-reclaim stickiness): the oracle carries no state
        # between passes, so those two never go together here (hand-made cases cover it).
        # (allocatableMemory and containerfs thresholds carry the minimum reclaim of the
        # signal they are copied from.)
        sticky = ("memory.", "allocatableMemory.", "nodefs.", "containerfs.")
        for signal in list(case.get("firstObserved", {})):
            if signal.startswith(sticky):
                del case["firstObserved"][signal]
        if case.get("firstObserved") == {}:
            del case["firstObserved"]
    if rng.random() < 0.3:
        case["enforceNodeAllocatable"] = rng.choice(([], ["pods"]))
    return case
