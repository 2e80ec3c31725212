"""PodDisruptionBudgets: their plan (the disruption controller's counts) and objects."""

from __future__ import annotations

import math

from bench.generate.common import field_set, fmt_time, managed_field, new_uid
from bench.generate.records import PDBPlan, WorkloadPlan
from bench.generate.state import ClusterState


class DisruptionBudgets(ClusterState):
    """Plans and renders the PodDisruptionBudgets."""

    def _plan_pdbs(self) -> None:
        """PDBs for multi-replica workloads, with one approved eviction still in flight."""
        rng, now = self.rng, self.now
        # PodDisruptionBudgets.
        for wl in self.workloads:
            if wl.kind not in ("ReplicaSet", "StatefulSet") or wl.replicas < 2:
                continue
            if wl.app == "coredns":
                self._pdb(wl, None, 1)
            elif wl.kind == "StatefulSet" or rng.random() < 0.3:
                r = rng.random()
                if r < 0.35:
                    self._pdb(wl, max(1, wl.replicas - 1), None)
                elif r < 0.55:
                    self._pdb(wl, "50%", None)
                elif r < 0.8:
                    self._pdb(wl, None, 1)
                else:
                    self._pdb(wl, None, "25%")
        if self.pdbs and not any(d.disrupted for d in self.pdbs):
            # Always show one eviction the API approved and the pod is not gone yet.
            for pdb in self.pdbs:
                healthy = [p for p in pdb.wl.pods if p.ready and not p.deleting]
                if pdb.allowed > 0 and healthy:
                    pdb.disrupted[rng.choice(healthy).name] = now - rng.randrange(1, 90)
                    pdb.healthy -= 1
                    pdb.allowed = max(0, pdb.healthy - pdb.desired)
                    break

    def _pdb(
        self, wl: WorkloadPlan, min_available: int | str | None, max_unavailable: int | str | None
    ) -> None:
        """One PDB of ``wl`` with the disruption controller's counts (expected, desired, healthy,
        allowed), sometimes an eviction it approved whose pod is not gone yet."""
        rng, now = self.rng, self.now
        pdb = PDBPlan(
            wl=wl,
            name=self._unique(wl.ns, f"{wl.app}-pdb"),
            uid=new_uid(rng),
            created=wl.rollout - rng.randrange(60, 3600),
            min_available=min_available,
            max_unavailable=max_unavailable,
        )
        if rng.random() < 0.15:
            pdb.unhealthy_policy = "AlwaysAllow"
        pods = [p for p in wl.pods if p.state not in ("Succeeded", "Failed")]
        # disruption controller: integer minAvailable counts matching pods, otherwise the scale.
        expected = len(pods) if isinstance(min_available, int) else wl.replicas
        if isinstance(min_available, int):
            desired = min_available
        elif min_available is not None:
            desired = math.ceil(int(min_available[:-1]) * expected / 100)
        elif isinstance(max_unavailable, int):
            desired = max(0, expected - max_unavailable)
        else:
            desired = max(0, expected - math.ceil(int(max_unavailable[:-1]) * expected / 100))
        healthy_pods = [p for p in pods if p.ready and not p.deleting]
        if healthy_pods and len(healthy_pods) > desired and rng.random() < 0.08:
            victim = rng.choice(healthy_pods)
            pdb.disrupted[victim.name] = now - rng.randrange(1, 90)
            healthy_pods.remove(victim)
        pdb.expected = expected
        pdb.desired = desired
        pdb.healthy = len(healthy_pods)
        pdb.allowed = max(0, pdb.healthy - desired)
        self.pdbs.append(pdb)

    def _render_pdb(self, pdb: PDBPlan, rv: str) -> dict:
        """The PodDisruptionBudget object, status as the disruption controller wrote it."""
        wl = pdb.wl
        spec: dict = {"selector": {"matchLabels": {"app.kubernetes.io/name": wl.app}}}
        if pdb.min_available is not None:
            spec["minAvailable"] = pdb.min_available
        else:
            spec["maxUnavailable"] = pdb.max_unavailable
        if pdb.unhealthy_policy:
            spec["unhealthyPodEvictionPolicy"] = pdb.unhealthy_policy
        updated = fmt_time(self.now - 7)
        status: dict = {
            "conditions": [
                {
                    "lastTransitionTime": updated if pdb.disrupted else fmt_time(pdb.created + 2),
                    "message": "",
                    "observedGeneration": 1,
                    "reason": "SufficientPods" if pdb.allowed else "InsufficientPods",
                    "status": "True" if pdb.allowed else "False",
                    "type": "DisruptionAllowed",
                }
            ],
            "currentHealthy": pdb.healthy,
            "desiredHealthy": pdb.desired,
            "disruptionsAllowed": pdb.allowed,
            "expectedPods": pdb.expected,
            "observedGeneration": 1,
        }
        if pdb.disrupted:
            status["disruptedPods"] = {
                name: fmt_time(t) for name, t in sorted(pdb.disrupted.items())
            }
        return {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {
                "creationTimestamp": fmt_time(pdb.created),
                "generation": 1,
                "labels": {"app.kubernetes.io/name": wl.app},
                "managedFields": [
                    managed_field(
                        "kubectl-client-side-apply",
                        fmt_time(pdb.created),
                        {
                            "f:metadata": {
                                "f:labels": {".": {}, **field_set("app.kubernetes.io/name")}
                            },
                            "f:spec": field_set(*(k for k in spec if k != "selector"), "selector"),
                        },
                        api="policy/v1",
                    ),
                    managed_field(
                        "kube-controller-manager",
                        updated,
                        {"f:status": field_set(*status)},
                        subresource="status",
                        api="policy/v1",
                    ),
                ],
                "name": pdb.name,
                "namespace": wl.ns,
                "resourceVersion": rv,
                "uid": pdb.uid,
            },
            "spec": spec,
            "status": status,
        }
