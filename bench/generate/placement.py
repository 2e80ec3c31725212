"""Placement: which pod runs on which node, respecting what the scheduler would check
(allocatable, GPUs, host ports, taints, node affinity, the workload's own hostname
anti-affinity and zone spreading), then the pods' timestamps and IPs.
"""

from __future__ import annotations

import bisect

import orjson

from bench.generate.common import KI, MAX_PODS_PER_NODE
from bench.generate.records import NodePlan, PodPlan, WorkloadPlan, node_matches
from bench.generate.state import ClusterState


class Placement(ClusterState):
    """Binds planned pods to nodes."""

    def _pick_unusual_pods(self) -> None:
        """Some application pods are pending, crash-looping or still creating: chosen before
        placement so that pending pods never take a node's room."""
        rng = self.rng
        app_pods = [
            p
            for p in self.pods
            if p.node is None and p.wl.kind == "ReplicaSet" and p.wl.flavor in ("web", "worker")
        ]
        n_pending = max(1, round(len(app_pods) * 0.01)) if len(app_pods) >= 10 else 0
        special = rng.sample(app_pods, min(len(app_pods), n_pending + 2 * (len(app_pods) // 200)))
        chosen = {id(p) for p in special}
        high = [p for p in app_pods if p.wl.priority_class == "high" and id(p) not in chosen]
        if special and n_pending and high:
            # At least one high-priority pending pod, so that there is a preemption to show.
            special[0] = rng.choice(high)
        for i, pod in enumerate(special):
            if i == 0 and pod.wl.priority_class == "high":
                pod.state = "Unschedulable"
            elif i < n_pending:
                pod.state = "Pending" if rng.random() < 0.3 else "Unschedulable"
            elif i % 2:
                pod.state = "Creating"
            else:
                pod.state = "CrashLoop"

    def _pool(self, wl: WorkloadPlan) -> tuple[list, list]:
        """The nodes ``wl``'s pods may go to (selector, affinity, taints; short tolerations keep
        them off not-ready nodes, a zone spread constraint off nodes without the zone label)
        with cumulative weights, cached per distinct requirement."""
        key = (
            tuple(sorted((wl.node_selector or {}).items())),
            orjson.dumps(wl.affinity or {}, option=orjson.OPT_SORT_KEYS),
            orjson.dumps(wl.tolerations, option=orjson.OPT_SORT_KEYS),
            wl.min_toleration < 300,
            wl.zone_skew > 0,
        )
        pool = self._pools.get(key)
        if pool is None:
            short = wl.min_toleration < 300
            # A zone spread constraint that must hold rules out nodes without the zone label.
            zoned = wl.zone_skew > 0
            nodes = [
                nd
                for nd in self.nodes
                if node_matches(nd, wl)
                and not (short and nd.state != "Ready")
                and not (zoned and nd.legacy_topology)
            ]
            cum: list[float] = []
            total = 0.0
            for nd in nodes:
                total += nd.weight
                cum.append(total)
            pool = (nodes, cum)
            self._pools[key] = pool
        return pool

    @staticmethod
    def _fits(nd: NodePlan, wl: WorkloadPlan) -> bool:
        """Room on the node, and the workload's own required anti-affinity and zone spread."""
        return (
            len(nd.pods) < MAX_PODS_PER_NODE
            and nd.cpu_used + wl.req_cpu <= nd.cpu_alloc
            and nd.mem_used + wl.req_mem <= nd.mem_alloc_ki * KI
            and nd.gpu_used + wl.req_gpu <= nd.gpus
            and not (wl.host_ports & nd.ports)
            and not (wl.anti_host and nd.idx in wl.on_nodes)
            and not (
                wl.zone_skew
                and wl.zone_counts[nd.zone] + 1 - min(wl.zone_counts.values()) > wl.zone_skew
            )
        )

    def _place(self) -> None:
        """Bind every pod still without a node, drawing nodes by weight and checking what the
        scheduler would (see ``_fits``); a pod that fits nowhere stays Unschedulable."""
        rng = self.rng
        # Constrained workloads first, so that their nodes still have room.
        order = sorted(
            (wl for wl in self.workloads if wl.kind not in ("Node", "DaemonSet")),
            key=lambda wl: (
                0 if wl.req_gpu or wl.host_ports else 1 if wl.node_selector or wl.affinity else 2
            ),
        )
        for wl in order:
            nodes, cum = self._pool(wl)
            total = cum[-1] if cum else 0.0
            if wl.zone_skew:
                wl.zone_counts = dict.fromkeys(sorted({nd.zone for nd in nodes}), 0)
            for pod in wl.pods:
                if pod.node is not None or pod.state in ("Pending", "Unschedulable"):
                    continue
                chosen = None
                if nodes:
                    for _ in range(24):
                        nd = nodes[
                            min(bisect.bisect_left(cum, rng.random() * total), len(nodes) - 1)
                        ]
                        if self._fits(nd, wl):
                            chosen = nd
                            break
                    else:
                        start = rng.randrange(len(nodes))
                        for j in range(len(nodes)):
                            nd = nodes[(start + j) % len(nodes)]
                            if self._fits(nd, wl):
                                chosen = nd
                                break
                if chosen is None:
                    pod.state = "Unschedulable"
                else:
                    self._bind(pod, chosen)

    def _bind(self, pod: PodPlan, node: NodePlan) -> None:
        """Put ``pod`` on ``node`` and count what it takes there."""
        wl = pod.wl
        pod.node = node
        node.pods.append(pod)
        node.cpu_used += wl.req_cpu
        node.mem_used += wl.req_mem
        node.gpu_used += wl.req_gpu
        node.ports.update(wl.host_ports)
        wl.on_nodes.add(node.idx)
        if wl.zone_skew:
            wl.zone_counts[node.zone] += 1

    def _stamp_pods(self) -> None:
        """Creation and start times, restarts and pod IPs, consistent with each pod's node."""
        rng, now = self.rng, self.now
        for wl in self.workloads:
            for pod in wl.pods:
                nd = pod.node
                if pod.state in ("Pending", "Unschedulable"):
                    pod.created = now - rng.randrange(5, 300)
                    continue
                if wl.kind == "Node":
                    created = nd.created + rng.randrange(20, 90)
                elif wl.kind == "DaemonSet":
                    created = max(wl.rollout, nd.created + 30) + rng.randrange(0, 600)
                elif wl.kind == "StatefulSet":
                    created = max(
                        wl.rollout + 45 * pod.ordinal, nd.created + rng.randrange(30, 300)
                    )
                else:
                    created = max(
                        wl.rollout + rng.randrange(0, 600), nd.created + rng.randrange(30, 300)
                    )
                if nd.state != "Ready":
                    created = min(created, nd.transition - 60)
                pod.created = min(created, now - rng.randrange(5, 60))
                pod.started = pod.created + rng.randrange(1, 4)
                if pod.state in ("Succeeded", "Failed"):
                    pod.finished = min(now - 1, pod.started + rng.randrange(20, 900))
                if pod.state == "Creating":
                    pod.created = pod.started = now - rng.randrange(5, 50)
                    continue
                if wl.host_network:
                    pod.ip = nd.ip
                else:
                    pod.ip = f"{nd.pod_cidr}.{nd.ip_next}"
                    nd.ip_next += 1
                if pod.state == "CrashLoop":
                    pod.restarts = rng.randint(4, 60)
                    pod.last_restart = now - rng.randrange(10, 290)
                elif rng.random() < 0.05:
                    pod.restarts = rng.randint(1, 3)
                    pod.last_restart = pod.started + (now - pod.started) // 2
