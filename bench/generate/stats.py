"""Stats: each answering kubelet's Summary API (stats/v1alpha1) object, from the same plan
as the List, so usage agrees with the pods the node runs.

A Summary is drawn in steps on one random stream, in a fixed order: each running container's
working set and CPU, the memory settled to what the node's state says (pressure or not), the
disk's usage (rootfs, logs, volumes), each pod's stats, then the node's.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from bench.generate.common import GI, K8S_VERSION, KI, MI, fmt_time, image_size
from bench.generate.records import NodePlan, PodPlan
from bench.generate.state import ClusterState


@dataclass(frozen=True, slots=True)
class _Disk:
    """The node's one filesystem (nodefs, imagefs and every volume share it, as on a node with
    a single disk): the Summary's FsStats differ only in what they say is used."""

    ts: str
    capacity: int
    available: int
    inodes: int
    inodes_used: int

    def stats(self, used: int, inodes_used: int) -> dict:
        """An FsStats of ``used`` bytes and ``inodes_used`` inodes on this filesystem."""
        return {
            "time": self.ts,
            "availableBytes": self.available,
            "capacityBytes": self.capacity,
            "usedBytes": used,
            "inodesFree": self.inodes - self.inodes_used,
            "inodes": self.inodes,
            "inodesUsed": inodes_used,
        }


class Stats(ClusterState):
    """Renders the kubelet Summary of every node."""

    def stats(self) -> Iterator[tuple[str, dict]]:
        """(node name, Summary) for every node whose kubelet answers (all but Unknown ones)."""
        rng = random.Random(f"bench.generate/{self.seed}/stats")
        for nd in self.nodes:
            if nd.state == "Unknown":
                continue
            yield nd.name, self._summary(nd, rng)

    def _summary(self, nd: NodePlan, rng: random.Random) -> dict:
        """One node's Summary: its pods' stats, then the node's own (system containers, the
        node totals, network, filesystems, process limit)."""
        t = self.now - rng.randrange(1, 12)
        ts = fmt_time(t)
        uniform = rng.uniform
        cap_mem = nd.mem_cap_ki * KI
        pods_limit = _pods_limit(nd)
        entries = _container_usage(nd, rng)
        kubelet_ws = int(uniform(60, 180) * MI)
        runtime_ws = int(uniform(80, 400) * MI)
        os_ws = int(uniform(300, 900) * MI)
        os_ws = _settle_memory(nd, entries, kubelet_ws + runtime_ws, os_ws, rng)
        disk, node_fs, image_fs, pod_fs_rows = _filesystems(nd, entries, ts, rng)
        pod_entries = [
            _pod_stats(pod, rows, vols, disk, t, ts, rng) for pod, rows, vols in pod_fs_rows
        ]
        pod_cpu_total = sum(e["cpu"]["usageNanoCores"] for e in pod_entries)
        pod_mem_total = sum(e["memory"]["workingSetBytes"] for e in pod_entries)
        procs_total = sum(e["process_stats"]["process_count"] for e in pod_entries)

        kubelet_cpu = int(uniform(20, 120) * 1e6)
        runtime_cpu = int(uniform(10, 200) * 1e6)
        node_cpu = pod_cpu_total + kubelet_cpu + runtime_cpu + int(uniform(20, 200) * 1e6)
        node_ws = pod_mem_total + kubelet_ws + runtime_ws + os_ws
        uptime = max(1, t - nd.created)
        boot = fmt_time(nd.created + 30)

        def memory(ws: int, available: int | None) -> dict:
            m: dict = {"time": ts}
            if available is not None:
                m["availableBytes"] = max(0, available)
            m.update(
                usageBytes=ws + int(ws * uniform(0.05, 0.35)),
                workingSetBytes=ws,
                rssBytes=int(ws * uniform(0.5, 0.9)),
                pageFaults=rng.randrange(10**6, 10**10),
                majorPageFaults=rng.randrange(0, 100_000),
            )
            return m

        def cpu_stats(nanocores: int) -> dict:
            return {
                "time": ts,
                "usageNanoCores": nanocores,
                "usageCoreNanoSeconds": nanocores * uptime,
            }

        runtime: dict = {"imageFs": image_fs}
        if nd.kubelet == K8S_VERSION:
            runtime["containerFs"] = dict(image_fs)
        rx, tx = rng.randrange(10**10, 10**13), rng.randrange(10**10, 10**13)
        interface = {"name": "eth0", "rxBytes": rx, "rxErrors": 0, "txBytes": tx, "txErrors": 0}
        return {
            "node": {
                "nodeName": nd.name,
                "systemContainers": [
                    {
                        "name": "kubelet",
                        "startTime": boot,
                        "cpu": cpu_stats(kubelet_cpu),
                        "memory": memory(kubelet_ws, None),
                    },
                    {
                        "name": "runtime",
                        "startTime": boot,
                        "cpu": cpu_stats(runtime_cpu),
                        "memory": memory(runtime_ws, None),
                    },
                    {
                        "name": "pods",
                        "startTime": boot,
                        "cpu": cpu_stats(pod_cpu_total),
                        "memory": memory(pod_mem_total, pods_limit - pod_mem_total),
                    },
                ],
                "startTime": fmt_time(nd.created),
                "cpu": cpu_stats(node_cpu),
                "memory": memory(node_ws, cap_mem - node_ws),
                "network": {"time": ts, **interface, "interfaces": [interface]},
                "fs": node_fs,
                "runtime": runtime,
                "rlimit": {
                    "time": ts,
                    "maxpid": 4194304,
                    "curproc": procs_total + rng.randrange(180, 600),
                },
            },
            "pods": pod_entries,
        }


def _container_usage(nd: NodePlan, rng: random.Random) -> list[tuple[PodPlan, list]]:
    """Each running pod with its running containers' [container, working set, nanocores]:
    around the limit or request when one is set, a plausible range otherwise."""
    uniform = rng.uniform
    entries = []
    for pod in nd.pods:
        if pod.state not in ("Running", "CrashLoop"):
            continue
        wl = pod.wl
        ctrs = []
        for i, c in enumerate((*wl.containers, *(c for c in wl.inits if c.sidecar))):
            if pod.state == "CrashLoop" and i == 0:
                continue
            if c.mem_lim:
                ws = int(c.mem_lim * uniform(0.2, 0.8))
            elif c.mem_req:
                ws = int(c.mem_req * uniform(0.4, 1.25))
            else:
                ws = int(uniform(12, 320) * MI)
            if c.cpu_lim:
                cpu = int(c.cpu_lim * uniform(0.02, 0.9) * 1e6)
            elif c.cpu_req:
                cpu = int(c.cpu_req * uniform(0.05, 1.6) * 1e6)
            else:
                cpu = int(uniform(1, 150) * 1e6)
            ctrs.append([c, ws, cpu])
        entries.append((pod, ctrs))
    return entries


def _settle_memory(
    nd: NodePlan, entries: list, system_ws: int, os_ws: int, rng: random.Random
) -> int:
    """Bring the containers' working sets to what the node's state says, and return the OS's.

    Under memory pressure application containers grow until memory.available is 15-90 MiB:
    limited ones towards their limits first, the rest in containers without a memory limit
    (those the eviction manager ranks first), and the OS takes up what is left; otherwise
    pods stay under 80 % of their cgroup. ``system_ws`` is the kubelet's and the runtime's.
    """
    uniform = rng.uniform
    cap_mem = nd.mem_cap_ki * KI
    pods_limit = _pods_limit(nd)
    pods_ws = sum(x[1] for _, ctrs in entries for x in ctrs)
    if nd.pressure.startswith("memory"):
        avail_target = int(uniform(15, 90) * MI)
        pods_target = min(
            pods_limit - int(uniform(10, 80) * MI),
            cap_mem - avail_target - system_ws - os_ws,
        )
        need = pods_target - pods_ws
        if need > 0:
            # First fill limited containers towards their limits, the rest goes to containers
            # without a memory limit (these are what the eviction manager ranks first).
            # Only application pods grow: system daemons keep their usual footprint.
            apps = [(p, ctrs) for p, ctrs in entries if p.wl.kind not in ("Node", "DaemonSet")]
            for _, ctrs in apps:
                for x in ctrs:
                    if need <= 0:
                        break
                    if x[0].mem_lim:
                        add = min(need, int(x[0].mem_lim * 0.95) - x[1])
                        if add > 0:
                            x[1] += add
                            need -= add
            unlimited = [x for _, ctrs in apps for x in ctrs if not x[0].mem_lim]
            if unlimited and need > 0:
                weights = [uniform(0.2, 3.0) for _ in unlimited]
                total_w = sum(weights)
                for x, w in zip(unlimited, weights, strict=True):
                    x[1] += int(need * w / total_w)
                need = 0
            pods_ws = sum(x[1] for _, ctrs in entries for x in ctrs)
        return max(os_ws, cap_mem - avail_target - system_ws - pods_ws)
    ceiling = int(min(pods_limit, cap_mem) * 0.8)
    if pods_ws > ceiling:
        factor = ceiling / pods_ws
        for _, ctrs in entries:
            for x in ctrs:
                x[1] = int(x[1] * factor)
    return os_ws


def _filesystems(
    nd: NodePlan, entries: list, ts: str, rng: random.Random
) -> tuple[_Disk, dict, dict, list]:
    """The disk's usage: the OS, the images, each container's rootfs and logs, each pod's
    volumes; a node under disk pressure has one or two pods writing most of it. Returns the
    disk, the node's and the images' FsStats, and (pod, container rows, volume rows) per pod."""
    uniform = rng.uniform
    fs_cap = nd.eph_cap_ki * KI
    fs_inodes = fs_cap // 16384
    images_bytes = sum(
        image_size(c.image)
        for c in {c.image: c for p in nd.pods for c in (*p.wl.inits, *p.wl.containers)}.values()
    )
    os_disk = int(uniform(3, 7) * GI)
    pod_disk_total = 0
    pod_inodes_total = 0
    disk_pressure = nd.pressure == "disk"
    fs_used_target = int(fs_cap * uniform(0.92, 0.965)) if disk_pressure else 0
    # When the node is under disk pressure, one or two pods write a lot of logs / emptyDir.
    apps = [e for e in entries if e[0].wl.kind not in ("Node", "DaemonSet")] or entries
    heavy = {id(e[0]) for e in apps[:2]} if disk_pressure else set()
    heavy_budget = max(0, fs_used_target - os_disk - images_bytes - len(entries) * 60 * MI)
    pod_fs_rows = []
    for pod, ctrs in entries:
        wl = pod.wl
        rows = []
        for c, ws, cpu in ctrs:
            rootfs = int(uniform(0.01, 40) * MI)
            logs = int(uniform(0.01, 60) * MI)
            if id(pod) in heavy:
                logs += heavy_budget // max(1, len(heavy)) // max(1, len(ctrs))
            rows.append((c, ws, cpu, rootfs, logs, rng.randrange(3, 400), rng.randrange(1, 30)))
        vols = []
        for v in wl.volumes:
            if "emptyDir" in v:
                used = (
                    int(uniform(0, 900) * MI) if v["name"] == "tmp" else int(uniform(0, 200) * MI)
                )
                vols.append((v["name"], used, rng.randrange(1, 2000), None))
            elif "configMap" in v:
                vols.append((v["name"], 8192 + rng.randrange(40000), rng.randrange(3, 12), None))
        if wl.kind == "StatefulSet":
            vols.append(
                (
                    "data",
                    int(uniform(1, 80) * GI),
                    rng.randrange(100, 100000),
                    f"{wl.hash}-{pod.name}",
                )
            )
        if pod.sa_volume:
            vols.append((pod.sa_volume, 12288, 9, None))
        pod_fs_rows.append((pod, rows, vols))
        pod_disk_total += sum(r[3] + r[4] for r in rows) + sum(
            v[1] for v in vols if v[3] is None and v[0] != pod.sa_volume
        )
        pod_inodes_total += sum(r[5] for r in rows) + sum(v[2] for v in vols if v[3] is None)
    fs_used = os_disk + images_bytes + pod_disk_total
    fs_avail = max(fs_cap // 100, fs_cap - fs_used)
    fs_inodes_used = 180_000 + images_bytes // (64 * KI) + pod_inodes_total
    disk = _Disk(ts, fs_cap, fs_avail, fs_inodes, fs_inodes_used)
    node_fs = disk.stats(fs_used, fs_inodes_used)
    image_fs = {**node_fs, "usedBytes": images_bytes, "inodesUsed": images_bytes // (64 * KI)}
    return disk, node_fs, image_fs, pod_fs_rows


def _pod_stats(
    pod: PodPlan, rows: list, vols: list, disk: _Disk, t: int, ts: str, rng: random.Random
) -> dict:
    """A PodStats: its containers' CPU, memory and filesystems, its volumes (a claim's on a
    volume of its own), its ephemeral storage (rootfs, logs and emptyDirs) and processes."""
    uniform = rng.uniform
    wl = pod.wl
    wl_empty_dirs = {v["name"] for v in wl.volumes if "emptyDir" in v}
    start = fmt_time(pod.started)
    containers = []
    mem_sum = 300 * KI  # the pause container
    cpu_sum = 0
    eph_used = 0
    eph_inodes = 0
    procs = 0
    for c, ws, cpu, rootfs, logs, inodes, nproc in rows:
        usage = ws + int(ws * uniform(0.02, 0.3))
        memory = {"time": ts}
        if c.mem_lim:
            memory["availableBytes"] = max(0, c.mem_lim - ws)
        memory.update(
            usageBytes=usage,
            workingSetBytes=ws,
            rssBytes=int(ws * uniform(0.55, 0.95)),
            pageFaults=rng.randrange(10_000, 90_000_000),
            majorPageFaults=rng.randrange(0, 400),
        )
        c_start = (
            pod.last_restart + 1 if pod.restarts and c is wl.containers[0] else pod.started + 2
        )
        containers.append(
            {
                "name": c.name,
                "startTime": fmt_time(c_start),
                "cpu": {
                    "time": ts,
                    "usageNanoCores": cpu,
                    "usageCoreNanoSeconds": cpu * max(1, t - c_start),
                },
                "memory": memory,
                "rootfs": disk.stats(rootfs, inodes),
                "logs": disk.stats(logs, 1 + inodes // 50),
            }
        )
        mem_sum += ws
        cpu_sum += cpu
        eph_used += rootfs + logs
        eph_inodes += inodes + 1 + inodes // 50
        procs += nproc
    volume = []
    for name, used, inodes, claim in vols:
        entry = {**disk.stats(used, inodes), "name": name}
        if claim:
            pvc_cap = 100 * GI
            entry.update(
                availableBytes=pvc_cap - used,
                capacityBytes=pvc_cap,
                inodesFree=6_553_600 - inodes,
                inodes=6_553_600,
            )
            entry["pvcRef"] = {"name": claim, "namespace": wl.ns}
        elif name in wl_empty_dirs:
            eph_used += used
            eph_inodes += inodes
        volume.append(entry)
    pod_memory = {"time": ts}
    if all(c.mem_lim for c in (*wl.containers, *wl.inits)):
        limit = sum(c.mem_lim for c in wl.containers) + sum(
            c.mem_lim for c in wl.inits if c.sidecar
        )
        pod_memory["availableBytes"] = max(
            0, limit + (wl.overhead[1] if wl.overhead else 0) - mem_sum
        )
    pod_memory.update(
        usageBytes=mem_sum + int(mem_sum * uniform(0.02, 0.25)),
        workingSetBytes=mem_sum,
        rssBytes=int(mem_sum * uniform(0.55, 0.95)),
        pageFaults=rng.randrange(10_000, 90_000_000),
        majorPageFaults=rng.randrange(0, 400),
    )
    entry = {
        "podRef": {"name": pod.name, "namespace": wl.ns, "uid": pod.static_uid or pod.uid},
        "startTime": start,
        "containers": containers,
        "cpu": {
            "time": ts,
            "usageNanoCores": cpu_sum,
            "usageCoreNanoSeconds": cpu_sum * max(1, t - pod.started),
        },
        "memory": pod_memory,
    }
    if volume:
        entry["volume"] = volume
    entry["ephemeral-storage"] = disk.stats(eph_used, eph_inodes)
    entry["process_stats"] = {"process_count": procs}
    return entry


def _pods_limit(nd: NodePlan) -> int:
    """The kubepods cgroup's memory limit: allocatable plus the hard eviction threshold."""
    return nd.mem_alloc_ki * KI + 100 * MI
