"""The state the generator's parts share while planning one cluster.

The plan is built by several parts (``nodes.py``, ``workloads.py``, ``system.py``,
``placement.py``, ``pods.py``, ``pdbs.py``), each a mixin of :class:`ClusterState` that the
assembled ``Cluster`` (``cluster.py``) combines. They share this state and call each other
through ``self`` because every choice is drawn from the same random stream in one fixed order:
passing the stream and the lists around explicitly would not make that order any less global.
"""

from __future__ import annotations

import random

from bench.generate.common import DEFAULT_CAPTURED_AT, MAX_NODES, fmt_time, parse_time
from bench.generate.records import NodePlan, PDBPlan, PodPlan, WorkloadPlan


class ClusterState:
    """What one cluster's plan holds: the arguments, the random streams and the records."""

    def __init__(
        self, nodes: int, pods: int, seed: int, captured_at: str = DEFAULT_CAPTURED_AT
    ) -> None:
        """Check the arguments and set up the empty plan and its random streams."""
        if not 1 <= nodes <= MAX_NODES:
            raise ValueError(f"nodes must be between 1 and {MAX_NODES}")
        if pods < 0:
            raise ValueError("pods must not be negative")
        self.n_nodes = nodes
        self.n_pods = pods
        self.seed = seed
        self.now = parse_time(captured_at)
        self.captured_at = fmt_time(self.now)
        self.name = f"synthetic-{nodes}n-{pods}p-s{seed}"
        self.rng = random.Random(f"bench.generate/{seed}/plan")
        # Scheduling constraints (pod affinity, spreading, Services, soft taints) draw from
        # their own stream, so that the rest of the plan stays what it was without them.
        self.srng = random.Random(f"bench.generate/{seed}/constraints")
        self.nodes: list[NodePlan] = []
        self.workloads: list[WorkloadPlan] = []
        self.pods: list[PodPlan] = []
        self.pdbs: list[PDBPlan] = []
        self._pools: dict = {}  # placement's candidate nodes per scheduling requirement
        self._names: set = set()  # (namespace, name) taken
        self._ref_nodes: list = []  # nodes a preferred node affinity may point at
        self._failed_job = False  # one Job pod always fails
        self._forced_constraints = [0.12, 0.03]  # popped from the end
