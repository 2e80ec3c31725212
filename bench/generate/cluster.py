"""The synthetic cluster: the parts assembled, planned in order, and listed as the API server
lists them."""

from __future__ import annotations

import random
from collections.abc import Iterator

from bench.generate.common import DEFAULT_CAPTURED_AT
from bench.generate.nodes import Nodes
from bench.generate.pdbs import DisruptionBudgets
from bench.generate.placement import Placement
from bench.generate.pods import Pods
from bench.generate.stats import Stats
from bench.generate.system import SystemWorkloads
from bench.generate.tables import PRIORITY_CLASSES
from bench.generate.workloads import Workloads


class Cluster(Nodes, Workloads, SystemWorkloads, Placement, Pods, DisruptionBudgets, Stats):
    """One cluster's plan, built at construction; ``items()`` and ``stats()`` render it.

    The planning steps run in a fixed order on one random stream: reordering them (or adding
    a draw) changes every cluster generated, which tests/bench/generate catches.
    """

    def __init__(
        self, nodes: int, pods: int, seed: int, captured_at: str = DEFAULT_CAPTURED_AT
    ) -> None:
        """Plan the whole cluster now, so that ``items()`` and ``stats()`` only render it."""
        super().__init__(nodes, pods, seed, captured_at)
        self._plan_nodes()
        self._plan_workloads()
        self._pick_unusual_pods()
        self._place()
        self._stamp_pods()
        self._plan_preemption()
        self._plan_rolling_updates()
        self._plan_pressure()
        self._plan_pdbs()
        self.nodes.sort(key=lambda n: n.name)
        self.pods.sort(key=lambda p: p.key)
        self.pdbs.sort(key=lambda d: d.wl.ns + "/" + d.name)

    def items(self) -> Iterator[dict]:
        """The List items: nodes, pods, PDBs, Services, ReplicaSets, StatefulSets,
        PriorityClasses, Leases (API list order).

        One random stream renders all of them, and resourceVersions grow along the List as
        the API server's would; so the order here is part of the output's identity.
        """
        rng = random.Random(f"bench.generate/{self.seed}/render")
        rv = [10_000_000 + rng.randrange(1_000_000)]

        def next_rv() -> str:
            rv[0] += rng.randint(1, 40)
            return str(rv[0])

        for nd in self.nodes:
            yield self._render_node(nd, rng, next_rv())
        for pod in self.pods:
            yield self._render_pod(pod, rng, next_rv())
        for pdb in self.pdbs:
            yield self._render_pdb(pdb, next_rv())
        for wl in sorted((w for w in self.workloads if w.service), key=lambda w: (w.ns, w.app)):
            yield self._render_service(wl, rng, next_rv())
        for kind in ("ReplicaSet", "StatefulSet"):
            owned = [w for w in self.workloads if w.kind == kind]
            for wl in sorted(owned, key=lambda w: (w.ns, w.owner["name"])):
                yield self._render_controller(wl, next_rv())
        for pc in sorted(PRIORITY_CLASSES):
            yield self._render_priority_class(pc, rng, next_rv())
        for nd in self.nodes:
            yield self._render_lease(nd, rng, next_rv())
        yield from self._component_leases(rng, next_rv)
