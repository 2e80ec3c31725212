"""What decisions build once per snapshot, built ahead of the first decision."""

from __future__ import annotations

from service.engine.objects import Cluster
from service.engine.scheduler.filters import scheduler_view


def warm(cluster: Cluster) -> None:
    """The snapshot's indexes, the scheduler's view of it, and the per-node orders and sums
    that preemption reads (what the first placement or preemption would otherwise build)."""
    cluster.nodes_by_name  # noqa: B018 - cached properties, built here
    cluster.pods_by_node  # noqa: B018
    view = scheduler_view(cluster)
    for node in view.nodes:
        node.pods_by_importance()
        node.first_below(0)
        node.cumulative("cpu")
        node.cumulative("memory")
        node.pdb_positions(view)
        node.port_positions()
