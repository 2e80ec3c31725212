"""What decisions build once per snapshot, built ahead of the first decision (by the
preloader beside it, ``preload.py``)."""

from __future__ import annotations

import time

from service.engine.objects import Cluster
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS

# Warming runs in a background thread of a serving process: every this many nodes (and every
# 8,192 pods while grouping pods by node) it sleeps for a moment, so that request threads
# waiting for the interpreter lock get it within about a millisecond instead of at the end of
# a 5 ms switch interval, several times per request.
_NODES_PER_STEP = 32
_PAUSE_S = 0.0005


def warm(cluster: Cluster) -> None:
    """The snapshot's indexes, the scheduler's view of it, and the per-node orders and sums
    that preemption reads (what the first placement or preemption would otherwise build),
    for the newest release."""
    cluster.nodes_by_name  # noqa: B018 - a cached property, built here
    cluster.build_pods_by_node(_pause)
    view = scheduler_view(cluster, DEFAULT_SETTINGS)
    for i, node in enumerate(view.nodes):
        node.pods_by_importance()
        node.first_below(0)
        node.cumulative("cpu")
        node.cumulative("memory")
        node.pdb_positions(view)
        node.port_positions()
        if i % _NODES_PER_STEP == _NODES_PER_STEP - 1:
            _pause()


def _pause() -> None:
    time.sleep(_PAUSE_S)
