"""Random GPU clusters for the DynamicResources differential tests (resource.k8s.io/v1).

What varies: one or two drivers (GPUs, and NICs on some nodes), a pool per node and driver
(one ResourceSlice each; rarely a pool announcing two slices with one missing, a stale
slice of an older generation, or two slices repeating a device name); devices with string,
int, bool and version attributes (model, index, healthy, driverVersion, a qualified
pcieRoot shared by a GPU and a NIC) and memory capacity; DeviceClasses with selectors;
claims already allocated (node-local allocation selectors, reserved for a bound pod, some
with admin access) whose devices are in use; and an incoming pod asking one or two claims,
named directly or generated from a template (named in status.resourceClaimStatuses and
owned by the pod), with requests for one or several devices (ExactCount, All,
firstAvailable), CEL selectors on attributes, capacity (quantity comparisons) and versions
(semver), matchAttribute constraints; rarely a claim or class that does not exist, a claim
made for another pod, a claim allocated elsewhere. Nodes are small in cpu and full of
lower-priority pods for preemption cases.
"""

from __future__ import annotations

import random

GPU = "gpu.example.com"
NIC = "nic.example.com"
PCIE = "resource.kubernetes.io/pcieRoot"
MODELS = ("a100", "h100", "l4")
VERSIONS = ("1.2.3", "2.0.0", "2.1.0-rc.1", "10.0.1")
MEMORY = ("16Gi", "40Gi", "80Gi", "81920Mi")
SELECTORS = (
    'device.attributes["gpu.example.com"].model == "h100"',
    'device.attributes["gpu.example.com"].model != "l4"',
    'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
    'device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("80Gi"))',
    'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("2.0.0"))',
    'device.attributes["gpu.example.com"].index < 2',
    'device.attributes["gpu.example.com"].healthy',
    '"gpu.example.com" in device.attributes && device.driver == "gpu.example.com"',
    'device.attributes["other.example.com"].size() == 0',
)


def _node(rng: random.Random, i: int, preemption: bool) -> dict:
    name = f"n{i}"
    cpu = rng.choice(("2", "4")) if preemption else rng.choice(("8", "16"))
    alloc = {"cpu": cpu, "memory": "32Gi", "pods": "110"}
    labels = {"kubernetes.io/hostname": name, "gpu": rng.choice(("yes", "yes", "no"))}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"node-{name}", "labels": labels},
        "status": {"capacity": dict(alloc), "allocatable": alloc},
    }


def _gpu(rng: random.Random, node: str, j: int) -> dict:
    attributes: dict = {
        "model": {"string": rng.choice(MODELS)},
        "index": {"int": j},
        "healthy": {"bool": rng.random() < 0.85},
        "driverVersion": {"version": rng.choice(VERSIONS)},
        PCIE: {"string": f"{node}-pci{j % 2}"},
    }
    return {
        "name": f"gpu-{j}",
        "attributes": attributes,
        "capacity": {"memory": {"value": rng.choice(MEMORY)}},
    }


def _nic(node: str, j: int) -> dict:
    return {
        "name": f"nic-{j}",
        "attributes": {"speed": {"int": 100}, PCIE: {"string": f"{node}-pci{j % 2}"}},
    }


def _slice(
    name: str, driver: str, node: str, devices: list[dict], gen: int = 1, count: int = 1
) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": driver,
            "pool": {"name": node, "generation": gen, "resourceSliceCount": count},
            "nodeName": node,
            "devices": devices,
        },
    }


def _class(name: str, selectors: list[str]) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in selectors]},
    }


CLASSES = (
    _class("gpu", [f'device.driver == "{GPU}"']),
    _class("gpu-big", [f'device.driver == "{GPU}"', SELECTORS[2]]),
    _class("nic", [f'device.driver == "{NIC}"']),
    _class("any", []),
)


def _exact(rng: random.Random, cls: str | None = None) -> dict:
    spec: dict = {"deviceClassName": cls or rng.choice(("gpu", "gpu", "gpu-big", "any"))}
    r = rng.random()
    if r < 0.12:
        spec["allocationMode"] = "All"
    else:
        spec["allocationMode"] = "ExactCount"
        spec["count"] = rng.choice((1, 1, 2, 2, 3, 4))
    if rng.random() < 0.5 and spec["deviceClassName"] != "nic":
        spec["selectors"] = [
            {"cel": {"expression": e}} for e in rng.sample(SELECTORS, rng.choice((1, 1, 2)))
        ]
    return spec


def _claim_spec(rng: random.Random, simple: bool = False) -> dict:
    """A claim's spec; ``simple``: one request for one or two GPUs, mostly without
    selectors (preemption cases, where the devices must fit for the CPU to matter)."""
    if simple and rng.random() < 0.7:
        exact: dict = {"deviceClassName": "gpu", "allocationMode": "ExactCount"}
        exact["count"] = rng.choice((1, 1, 2))
        if rng.random() < 0.3:
            exact["selectors"] = [{"cel": {"expression": rng.choice(SELECTORS)}}]
        return {"devices": {"requests": [{"name": "r0", "exactly": exact}]}}
    requests = []
    for k in range(rng.choice((1, 1, 1, 2))):
        name = f"r{k}"
        if rng.random() < 0.2:
            subs = []
            for s in range(rng.choice((2, 3))):
                sub = _exact(rng)
                sub["name"] = f"s{s}"
                subs.append(sub)
            requests.append({"name": name, "firstAvailable": subs})
        else:
            exact = _exact(rng, "nic" if k == 1 and rng.random() < 0.5 else None)
            if rng.random() < 0.05:
                exact["adminAccess"] = True
            requests.append({"name": name, "exactly": exact})
    devices: dict = {"requests": requests}
    if rng.random() < 0.3:
        attr = rng.choice((PCIE, f"{GPU}/model", PCIE))
        constraint: dict = {"matchAttribute": attr}
        if len(requests) > 1 and rng.random() < 0.5:
            constraint["requests"] = [r["name"] for r in requests]
        devices["constraints"] = [constraint]
    return {"devices": devices}


def _claim(name: str, spec: dict, owner_uid: str | None = None) -> dict:
    meta: dict = {"name": name, "namespace": "default", "uid": f"uid-claim-{name}"}
    if owner_uid:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "x", "uid": owner_uid, "controller": True}
        ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": spec,
    }


def _allocated(
    name: str, node: str, devices: list[tuple[str, str]], pod_uid: str, admin: bool
) -> dict:
    claim = _claim(
        name,
        {
            "devices": {
                "requests": [
                    {"name": "r", "exactly": {"deviceClassName": "any", "count": len(devices)}}
                ]
            }
        },
    )
    results = []
    for driver, device in devices:
        row = {"request": "r", "driver": driver, "pool": node, "device": device}
        if admin:
            row["adminAccess"] = True
        results.append(row)
    if admin:
        claim["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    claim["status"] = {
        "allocation": {
            "devices": {"results": results},
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                ]
            },
        },
        "reservedFor": [{"resource": "pods", "name": "x", "uid": pod_uid}],
    }
    return claim


def _pod(name: str, node: str, cpu: str, priority: int, start: str) -> dict:
    spec: dict = {
        "containers": [
            {"name": "c", "image": "cuda", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}
        ],
        "priority": priority,
        "schedulerName": "default-scheduler",
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": spec,
        "status": {"phase": "Running", "startTime": start} if node else {"phase": "Pending"},
    }


def random_dra_case(seed: int, kind: str = "placement") -> dict:
    """A case in the oracle's input format, the same for the same seed."""
    rng = random.Random(seed)
    preemption = kind == "preemption"
    nodes = [_node(rng, i, preemption) for i in range(rng.randint(1, 6))]
    objects: list[dict] = [*nodes, *CLASSES]
    two_drivers = rng.random() < 0.5
    device_names: dict[str, list[tuple[str, str]]] = {}
    for n in nodes:
        name = n["metadata"]["name"]
        if n["metadata"]["labels"]["gpu"] == "no" and rng.random() < 0.7:
            continue
        gpus = [_gpu(rng, name, j) for j in range(rng.choice((1, 2, 4, 8)))]
        roll = rng.random()
        if roll < 0.05:  # a pool announcing two slices, one of them missing
            objects.append(_slice(f"{name}-gpu", GPU, name, gpus, count=2))
        elif roll < 0.10 and len(gpus) > 1:  # two slices of the pool repeat a device name
            half = len(gpus) // 2
            dup = dict(gpus[0])
            objects.append(_slice(f"{name}-gpu-a", GPU, name, gpus[:half], count=2))
            objects.append(_slice(f"{name}-gpu-b", GPU, name, [dup, *gpus[half:]][:128], count=2))
        elif roll < 0.15:  # a stale slice of an older generation
            objects.append(_slice(f"{name}-gpu-old", GPU, name, gpus[:1], gen=1))
            objects.append(_slice(f"{name}-gpu", GPU, name, gpus, gen=2))
        else:
            objects.append(_slice(f"{name}-gpu", GPU, name, gpus))
        device_names[name] = [(GPU, g["name"]) for g in gpus]
        if two_drivers and rng.random() < 0.7:
            nics = [_nic(name, j) for j in range(rng.choice((1, 2)))]
            objects.append(_slice(f"{name}-nic", NIC, name, nics))
            device_names[name] += [(NIC, d["name"]) for d in nics]
    # pods already running, some holding allocated claims
    count = 0
    for n in nodes:
        name = n["metadata"]["name"]
        free = list(device_names.get(name, ()))
        rng.shuffle(free)
        # preemption: about as many 1-cpu pods as the node has cpus, so that it is full
        cpus = int(n["status"]["allocatable"]["cpu"])
        for _ in range(rng.randint(cpus - 1, cpus) if preemption else rng.randint(0, 2)):
            pod = _pod(
                f"p{count}",
                name,
                rng.choice(("500m", "1", "1"))
                if preemption
                else rng.choice(("500m", "1", "1500m")),
                rng.choice((0, 10, 100, 1000)),
                f"2026-11-20T{rng.randint(0, 11):02}:{rng.randint(0, 59):02}:00Z",
            )
            if free and rng.random() < (0.3 if preemption else 0.6):
                take = [free.pop() for _ in range(min(len(free), rng.choice((1, 1, 2))))]
                admin = rng.random() < 0.1
                if admin:
                    free.extend(take)
                claim = f"held-{count}"
                objects.append(_allocated(claim, name, take, pod["metadata"]["uid"], admin))
                pod["spec"]["resourceClaims"] = [{"name": "dev", "resourceClaimName": claim}]
            objects.append(pod)
            count += 1
    # the incoming pod
    priority = rng.choice((0, 10, 500)) if not preemption else rng.choice((500, 2000))
    incoming = _pod(
        "incoming",
        "",
        rng.choice(("100m", "1")) if not preemption else rng.choice(("1", "1500m")),
        priority,
        "",
    )
    incoming["metadata"]["uid"] = "uid-incoming"
    claims = []
    statuses = []
    for k in range(rng.choice((1, 1, 1, 2))):
        roll = rng.random()
        cname = f"want-{k}"
        if roll < 0.03:
            claims.append({"name": f"c{k}", "resourceClaimName": "missing"})
            continue
        if roll < 0.06:
            spec = _claim_spec(rng)
            spec["devices"]["requests"][0].setdefault("exactly", {})["deviceClassName"] = "nope"
            spec["devices"]["requests"][0].pop("firstAvailable", None)
            spec["devices"]["requests"][0]["exactly"].update(allocationMode="ExactCount", count=1)
            objects.append(_claim(cname, spec))
            claims.append({"name": f"c{k}", "resourceClaimName": cname})
            continue
        if roll < 0.12:
            held = [o for o in objects if o["kind"] == "ResourceClaim" and "status" in o]
            if held:  # share a claim already allocated on some node
                claims.append(
                    {"name": f"c{k}", "resourceClaimName": rng.choice(held)["metadata"]["name"]}
                )
                continue
        if roll < 0.45:
            owner = "uid-incoming" if rng.random() < 0.95 else "uid-someone"
            objects.append(_claim(cname, _claim_spec(rng, preemption), owner))
            claims.append({"name": f"c{k}", "resourceClaimTemplateName": "tmpl"})
            if rng.random() < 0.95:
                statuses.append({"name": f"c{k}", "resourceClaimName": cname})
            continue
        objects.append(_claim(cname, _claim_spec(rng, preemption)))
        claims.append({"name": f"c{k}", "resourceClaimName": cname})
    incoming["spec"]["resourceClaims"] = claims
    if statuses:
        incoming["status"]["resourceClaimStatuses"] = statuses
    if any("resourceClaimTemplateName" in c for c in claims):
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": "tmpl", "namespace": "default"},
                "spec": {"spec": _claim_spec(rng)},
            }
        )
    return {"kind": kind, "objects": objects, "pod": incoming}
