"""Nodes: their plan (roles, zones, instance types, readiness, pressure, taints), the Node
objects, and the Leases their kubelets and the control plane renew.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from bench.generate.common import (
    DAY,
    GI,
    K8S_OLD_VERSION,
    K8S_VERSION,
    KI,
    MAX_PODS_PER_NODE,
    cpu_quantity,
    field_set,
    fmt_micro_time,
    fmt_time,
    image_digest,
    image_size,
    managed_field,
    new_uid,
    rand_hex,
)
from bench.generate.records import NodePlan
from bench.generate.state import ClusterState
from bench.generate.tables import (
    CP_TYPE,
    GENERAL_TYPES,
    GPU_TYPES,
    INFRA_TYPE,
    NOT_READY,
    REGIONS,
    UNREACHABLE,
)


class Nodes(ClusterState):
    """Plans and renders the nodes."""

    def _plan_nodes(self) -> None:
        """Nodes by role (control plane, GPU, infra, general) across the regions' zones, with
        instance types, ages and kubelet versions; then the few new, not-ready, cordoned,
        legacy-labelled, kata and softly tainted ones."""
        rng, n, now = self.rng, self.n_nodes, self.now
        cp = 0 if n < 3 else 1 if n < 10 else 3
        gpu = max(1, round(n * 0.02)) if n >= 5 else 0
        infra = max(2, round(n * 0.01)) if n >= 20 else 0
        roles = ["control-plane"] * cp + ["gpu"] * gpu + ["infra"] * infra
        roles += ["general"] * (n - len(roles))
        used_ips: set[str] = set()
        region_weights = [r[3] for r in REGIONS]
        for i, role in enumerate(roles):
            if role == "control-plane":
                region, zones, octet, _ = REGIONS[0]
                zi = i % 3
            else:
                region, zones, octet, _ = rng.choices(REGIONS, region_weights)[0]
                zi = rng.randrange(3)
            while True:
                ip = f"172.{octet}.{64 * zi + rng.randrange(64)}.{rng.randrange(1, 255)}"
                if ip not in used_ips:
                    used_ips.add(ip)
                    break
            gpus, product = 0, ""
            if role == "control-plane":
                itype, cores, mem = CP_TYPE
            elif role == "infra":
                itype, cores, mem = INFRA_TYPE
            elif role == "gpu":
                itype, cores, mem, gpus, product = rng.choice(GPU_TYPES)
            else:
                itype, cores, mem, _ = rng.choices(GENERAL_TYPES, [t[3] for t in GENERAL_TYPES])[0]
            node = NodePlan(
                idx=i,
                name=f"ip-{ip.replace('.', '-')}.{region}.compute.internal",
                uid=new_uid(rng),
                ip=ip,
                pod_cidr=f"10.{i >> 8}.{i & 255}",
                role=role,
                region=region,
                zone=zones[zi],
                itype=itype,
                cores=cores,
                mem_gib=mem,
                gpus=gpus,
                gpu_product=product,
                instance_id="i-0" + rand_hex(rng, 16),
            )
            if role == "control-plane":
                node.created = now - 400 * DAY + rng.randrange(3600)
            else:
                node.created = now - rng.randrange(3 * 3600, 240 * DAY)
            node.kubelet = K8S_OLD_VERSION if rng.random() < 0.15 else K8S_VERSION
            node.weight = cores * rng.uniform(0.4, 1.6)
            self.nodes.append(node)

        general = [nd for nd in self.nodes if nd.role == "general"]
        shuffled = rng.sample(general, len(general))
        n_new = round(n * 0.01) if n >= 20 else 0
        n_not_ready = max(2, round(n * 0.02)) if n >= 20 else 1 if n >= 10 else 0
        n_cordoned = (1 if n >= 10 else 0) + (1 if n >= 100 else 0)
        pos = 0
        for nd in shuffled[pos : pos + n_new]:
            nd.new = True
            nd.created = now - rng.randrange(120, 900)
            nd.weight *= 0.05
        pos += n_new
        unknown = (n_not_ready + 1) // 2
        for j, nd in enumerate(shuffled[pos : pos + n_not_ready]):
            nd.state = "Unknown" if j < unknown else "NotReady"
            # Recent enough that the default 300 s tolerations have not expired yet.
            nd.transition = now - rng.randrange(20, 240)
            if nd.state == "Unknown":
                nd.heartbeat = nd.transition - rng.randrange(40, 60)
            else:
                nd.heartbeat = now - rng.randrange(1, 50)
        pos += n_not_ready
        for nd in shuffled[pos : pos + n_cordoned]:
            nd.cordoned = True
        n_legacy = max(1, round(n * 0.01)) if n >= 10 else 0
        for nd in rng.sample(general, min(n_legacy, len(general))):
            nd.legacy_topology = True
        if n >= 10:
            for nd in rng.sample(general, round(len(general) * 0.1)):
                nd.kata = True

        for nd in self.nodes:
            if nd.state == "Ready":
                nd.heartbeat = now - rng.randrange(1, 290)
            self._finish_node(nd)
        for nd in general:
            r = self.srng.random()
            if r < 0.05:
                nd.static_taints = [{"effect": "PreferNoSchedule", "key": "spot", "value": "true"}]
            elif r < 0.06:
                nd.static_taints = [
                    {"effect": "PreferNoSchedule", "key": "maintenance", "value": "scheduled"}
                ]

    def _finish_node(self, nd: NodePlan) -> None:
        """What follows from the node's instance type and role: allocatable (kube-reserved and the
        eviction threshold taken), the labels kops and the kubelet set, the role's taints."""
        reserved = 0.0
        for core in range(nd.cores):
            reserved += 60 if core == 0 else 10 if core == 1 else 5 if core < 4 else 2.5
        nd.cpu_alloc = nd.cores * 1000 - int(reserved)
        nd.mem_cap_ki = int(nd.mem_gib * 1048576 * 0.9812) // 4 * 4
        # kube-reserved 255Mi + 11Mi per pod, plus the 100Mi hard eviction threshold.
        nd.mem_alloc_ki = nd.mem_cap_ki - (255 + 11 * MAX_PODS_PER_NODE + 100) * 1024
        disk_gib = 200 if nd.role in ("gpu", "control-plane") else 100
        nd.eph_cap_ki = disk_gib * 1048576 - 12948
        cap = nd.eph_cap_ki * KI
        nd.eph_alloc = cap - cap // 10 - GI
        labels = {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/instance-type": nd.itype,
            "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": nd.name,
            "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": nd.itype,
            "topology.ebs.csi.aws.com/zone": nd.zone,
        }
        if nd.legacy_topology:
            labels["failure-domain.beta.kubernetes.io/region"] = nd.region
            labels["failure-domain.beta.kubernetes.io/zone"] = nd.zone
        else:
            labels["topology.kubernetes.io/region"] = nd.region
            labels["topology.kubernetes.io/zone"] = nd.zone
        if nd.role == "control-plane":
            labels["kops.k8s.io/instancegroup"] = f"control-plane-{nd.zone}"
            labels["node-role.kubernetes.io/control-plane"] = ""
            labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
            nd.static_taints = [
                {"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}
            ]
        else:
            labels["node-role.kubernetes.io/node"] = ""
            labels["kops.k8s.io/instancegroup"] = (
                f"{nd.role if nd.role != 'general' else 'nodes'}-{nd.zone}"
            )
            labels["node-pool"] = nd.role
        if nd.role == "gpu":
            labels["nvidia.com/gpu.count"] = str(nd.gpus)
            labels["nvidia.com/gpu.present"] = "true"
            labels["nvidia.com/gpu.product"] = nd.gpu_product
            nd.static_taints = [{"effect": "NoSchedule", "key": "dedicated", "value": "gpu"}]
        elif nd.role == "infra":
            nd.static_taints = [{"effect": "NoExecute", "key": "dedicated", "value": "infra"}]
        if nd.kata:
            labels["katacontainers.io/kata-runtime"] = "true"
        nd.labels = labels

    def _plan_pressure(self) -> None:
        """Pick the nodes under memory or disk pressure among Ready ones whose pods may exceed their
        requests (the kubelet's eviction decisions need such nodes to exist)."""
        rng, now, n = self.rng, self.now, self.n_nodes
        # Node pressure, chosen among Ready nodes hosting pods that may exceed their requests.
        candidates = [
            nd
            for nd in self.nodes
            if nd.state == "Ready"
            and not nd.cordoned
            and nd.role == "general"
            and any(
                p.state == "Running"
                and p.wl.kind in ("ReplicaSet", "StatefulSet")
                and any(not c.mem_lim for c in p.wl.containers)
                for p in nd.pods
            )
        ]
        k_mem = max(1, min(8, n // 800)) if n >= 5 else 0
        chosen = rng.sample(candidates, min(len(candidates), k_mem + (1 if n >= 50 else 0)))
        for i, nd in enumerate(chosen):
            if i < k_mem:
                nd.pressure = "memory" if i < (k_mem + 1) // 2 else "memory-unreported"
                nd.transition = now - rng.randrange(15, 200)
            else:
                nd.pressure = "disk"
                nd.transition = now - rng.randrange(15, 200)

    def _node_conditions(self, nd: NodePlan) -> list:
        """The node's conditions as the kubelet last reported them (pressure as planned); for a
        silent kubelet, the node lifecycle controller's Unknown ones."""
        hb = fmt_time(nd.heartbeat)
        boot = fmt_time(nd.created + 40)
        since = fmt_time(nd.transition) if nd.transition else boot
        pressure = {
            "MemoryPressure": (
                "kubelet has sufficient memory available",
                "KubeletHasSufficientMemory",
            ),
            "DiskPressure": ("kubelet has no disk pressure", "KubeletHasNoDiskPressure"),
            "PIDPressure": ("kubelet has sufficient PID available", "KubeletHasSufficientPID"),
        }
        conditions = [
            {
                "lastHeartbeatTime": fmt_time(nd.created + 60),
                "lastTransitionTime": fmt_time(nd.created + 60),
                "message": "Cilium is running on this node",
                "reason": "CiliumIsUp",
                "status": "False",
                "type": "NetworkUnavailable",
            }
        ]
        for ctype, (message, reason) in pressure.items():
            status, transition = "False", boot
            if nd.state == "Unknown":
                status, reason, message = (
                    "Unknown",
                    "NodeStatusUnknown",
                    "Kubelet stopped posting node status.",
                )
                transition = since
            elif nd.pressure == "memory" and ctype == "MemoryPressure":
                status, reason, message = (
                    "True",
                    "KubeletHasInsufficientMemory",
                    "kubelet has insufficient memory available",
                )
                transition = since
            elif nd.pressure == "disk" and ctype == "DiskPressure":
                status, reason, message = (
                    "True",
                    "KubeletHasDiskPressure",
                    "kubelet has disk pressure",
                )
                transition = since
            conditions.append(
                {
                    "lastHeartbeatTime": hb,
                    "lastTransitionTime": transition,
                    "message": message,
                    "reason": reason,
                    "status": status,
                    "type": ctype,
                }
            )
        if nd.state == "Ready":
            ready = ("True", "KubeletReady", "kubelet is posting ready status", boot)
        elif nd.state == "NotReady":
            ready = (
                "False",
                "KubeletNotReady",
                "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
                since,
            )
        else:
            ready = ("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.", since)
        conditions.append(
            {
                "lastHeartbeatTime": hb,
                "lastTransitionTime": ready[3],
                "message": ready[2],
                "reason": ready[1],
                "status": ready[0],
                "type": "Ready",
            }
        )
        return conditions

    def _node_taints(self, nd: NodePlan) -> list:
        """The role's taints, and those the node lifecycle controller adds for the node's state:
        not-ready or unreachable, memory or disk pressure, cordoned."""
        taints = [dict(t) for t in nd.static_taints]
        if nd.state != "Ready":
            key = UNREACHABLE if nd.state == "Unknown" else NOT_READY
            added = fmt_time(nd.transition + 1)
            taints.append({"effect": "NoSchedule", "key": key, "timeAdded": added})
            taints.append({"effect": "NoExecute", "key": key, "timeAdded": added})
        if nd.pressure == "memory":
            taints.append(
                {
                    "effect": "NoSchedule",
                    "key": "node.kubernetes.io/memory-pressure",
                    "timeAdded": fmt_time(nd.transition + 1),
                }
            )
        elif nd.pressure == "disk":
            taints.append(
                {
                    "effect": "NoSchedule",
                    "key": "node.kubernetes.io/disk-pressure",
                    "timeAdded": fmt_time(nd.transition + 1),
                }
            )
        if nd.cordoned:
            taints.append(
                {
                    "effect": "NoSchedule",
                    "key": "node.kubernetes.io/unschedulable",
                    "timeAdded": fmt_time(self.now - 3 * 3600),
                }
            )
        return taints

    def _node_images(self, nd: NodePlan) -> list:
        """node.status.images: the images of the node's pods and the pause image, largest first,
        at most 50 (the kubelet's default nodeStatusMaxImages)."""
        images: dict[str, int] = {}
        for pod in nd.pods:
            if pod.state in ("Pending", "Unschedulable"):
                continue
            for c in (*pod.wl.inits, *pod.wl.containers):
                if c.image not in images:
                    images[c.image] = image_size(c.image)
        images["registry.k8s.io/pause:3.10"] = 320_368
        ordered = sorted(images.items(), key=lambda kv: (-kv[1], kv[0]))[:50]
        return [{"names": [image_digest(img), img], "sizeBytes": size} for img, size in ordered]

    def _render_node(self, nd: NodePlan, rng: random.Random, rv: str) -> dict:
        """The Node as the API server returns it: the kubelet's labels and status, the node
        controllers' spec and taints, and who wrote which part."""
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "annotations": {
                    "alpha.kubernetes.io/provided-node-ip": nd.ip,
                    "csi.volume.kubernetes.io/nodeid": f'{{"ebs.csi.aws.com":"{nd.instance_id}"}}',
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
                "creationTimestamp": fmt_time(nd.created),
                "labels": nd.labels,
                "managedFields": _node_managed_fields(nd),
                "name": nd.name,
                "resourceVersion": rv,
                "uid": nd.uid,
            },
            "spec": self._node_spec(nd),
            "status": _node_status(nd, self._node_conditions(nd), self._node_images(nd), rng),
        }

    def _node_spec(self, nd: NodePlan) -> dict:
        """The pod CIDR the node IPAM controller assigned, the provider ID, taints, cordon."""
        cidr = f"{nd.pod_cidr}.0/24"
        spec: dict = {
            "podCIDR": cidr,
            "podCIDRs": [cidr],
            "providerID": f"aws:///{nd.zone}/{nd.instance_id}",
        }
        taints = self._node_taints(nd)
        if taints:
            spec["taints"] = taints
        if nd.cordoned:
            spec["unschedulable"] = True
        return spec

    def _render_lease(self, nd: NodePlan, rng: random.Random, rv: str) -> dict:
        """The node's Lease in kube-node-lease, renewed recently unless its kubelet went silent."""
        if nd.state == "Unknown":
            renew = nd.heartbeat - rng.randrange(0, 10)
        else:
            renew = self.now - rng.randrange(0, 10)
        micros = rng.randrange(10**6)
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "creationTimestamp": fmt_time(nd.created + 5),
                "managedFields": [
                    managed_field(
                        "kubelet",
                        fmt_time(renew),
                        {
                            "f:metadata": {
                                "f:ownerReferences": {".": {}, f'k:{{"uid":"{nd.uid}"}}': {}}
                            },
                            "f:spec": field_set(
                                "holderIdentity", "leaseDurationSeconds", "renewTime"
                            ),
                        },
                        api="coordination.k8s.io/v1",
                    ),
                ],
                "name": nd.name,
                "namespace": "kube-node-lease",
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Node", "name": nd.name, "uid": nd.uid}
                ],
                "resourceVersion": rv,
                "uid": new_uid(rng),
            },
            "spec": {
                "holderIdentity": nd.name,
                "leaseDurationSeconds": 40,
                "renewTime": fmt_micro_time(renew, micros),
            },
        }

    def _component_leases(self, rng: random.Random, next_rv: Callable[[], str]) -> Iterator[dict]:
        """The leader-election Leases of kube-controller-manager and kube-scheduler, held by a
        control-plane node (only when the cluster runs the scheduler as a static pod)."""
        cps = [nd for nd in self.nodes if nd.role == "control-plane"]
        if cps and any(p.wl.app == "kube-scheduler" for p in cps[0].pods):
            for component in ("kube-controller-manager", "kube-scheduler"):
                holder = rng.choice(cps)
                renew = self.now - rng.randrange(0, 2)
                yield {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {
                        "creationTimestamp": fmt_time(holder.created + 120),
                        "managedFields": [
                            managed_field(
                                component,
                                fmt_time(renew),
                                {
                                    "f:spec": field_set(
                                        "acquireTime",
                                        "holderIdentity",
                                        "leaseDurationSeconds",
                                        "leaseTransitions",
                                        "renewTime",
                                    )
                                },
                                api="coordination.k8s.io/v1",
                            )
                        ],
                        "name": component,
                        "namespace": "kube-system",
                        "resourceVersion": next_rv(),
                        "uid": new_uid(rng),
                    },
                    "spec": {
                        "acquireTime": fmt_micro_time(
                            self.now - rng.randrange(DAY, 30 * DAY), rng.randrange(10**6)
                        ),
                        "holderIdentity": f"{holder.name}_{new_uid(rng)}",
                        "leaseDurationSeconds": 15,
                        "leaseTransitions": rng.randint(1, 9),
                        "renewTime": fmt_micro_time(renew, rng.randrange(10**6)),
                    },
                }


def _node_status(nd: NodePlan, conditions: list, images: list, rng: random.Random) -> dict:
    """What the kubelet reports: addresses, capacity and allocatable (kube-reserved and the
    eviction threshold taken), conditions, images, its versions and runtime handlers."""
    capacity = {
        "cpu": str(nd.cores),
        "ephemeral-storage": f"{nd.eph_cap_ki}Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": f"{nd.mem_cap_ki}Ki",
        "pods": str(MAX_PODS_PER_NODE),
    }
    allocatable = {
        "cpu": cpu_quantity(nd.cpu_alloc),
        "ephemeral-storage": str(nd.eph_alloc),
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": f"{nd.mem_alloc_ki}Ki",
        "pods": str(MAX_PODS_PER_NODE),
    }
    if nd.gpus:
        capacity["nvidia.com/gpu"] = allocatable["nvidia.com/gpu"] = str(nd.gpus)
    handlers = [
        {"features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}, "name": "runc"},
        {"features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}, "name": ""},
    ]
    if nd.kata:
        handlers.append(
            {
                "features": {"recursiveReadOnlyMounts": False, "userNamespaces": False},
                "name": "kata",
            }
        )
    return {
        "addresses": [
            {"address": nd.ip, "type": "InternalIP"},
            {"address": nd.name, "type": "InternalDNS"},
            {"address": nd.name, "type": "Hostname"},
        ],
        "allocatable": allocatable,
        "capacity": capacity,
        "conditions": conditions,
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "images": images,
        "nodeInfo": {
            "architecture": "amd64",
            "bootID": new_uid(rng),
            "containerRuntimeVersion": "containerd://1.7.23",
            "kernelVersion": "6.1.115-126.197.amzn2023.x86_64",
            "kubeProxyVersion": nd.kubelet,
            "kubeletVersion": nd.kubelet,
            "machineID": rand_hex(rng, 32),
            "operatingSystem": "linux",
            "osImage": "Amazon Linux 2023.6.20241111",
            "systemUUID": "ec2" + rand_hex(rng, 5) + "-" + new_uid(rng)[9:],
        },
        "runtimeHandlers": handlers,
    }


def _node_managed_fields(nd: NodePlan) -> list[dict]:
    """The kubelet registered the node and writes its status; the controller manager set its
    TTL, pod CIDR and taints."""
    return [
        managed_field(
            "kubelet",
            fmt_time(nd.created),
            {
                "f:metadata": {
                    "f:annotations": field_set(
                        "alpha.kubernetes.io/provided-node-ip",
                        "volumes.kubernetes.io/controller-managed-attach-detach",
                    ),
                    "f:labels": field_set(
                        "kubernetes.io/arch",
                        "kubernetes.io/hostname",
                        "kubernetes.io/os",
                        "node.kubernetes.io/instance-type",
                    ),
                },
                "f:spec": field_set("providerID"),
            },
        ),
        managed_field(
            "kube-controller-manager",
            fmt_time(nd.transition or nd.created + 30),
            {
                "f:metadata": {"f:annotations": field_set("node.alpha.kubernetes.io/ttl")},
                "f:spec": field_set("podCIDR", "podCIDRs", "taints"),
            },
        ),
        managed_field(
            "kubelet",
            fmt_time(nd.heartbeat),
            {
                "f:status": field_set(
                    "allocatable",
                    "capacity",
                    "conditions",
                    "daemonEndpoints",
                    "images",
                    "nodeInfo",
                    "runtimeHandlers",
                )
            },
            subresource="status",
        ),
    ]
