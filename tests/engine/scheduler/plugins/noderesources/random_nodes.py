"""Random NodeInfos and pods for the noderesources batch tests: quantities mostly
realistic, often at an edge of the batches' exact range (0, the columns' bound, int64's
limits, negative wrapped sums, values past int64), some resources missing."""

from __future__ import annotations

import random

from service.engine.objects import Node
from service.engine.scheduler.framework import NodeInfo, pod_info
from service.engine.scheduler.plugins.noderesources.columns import NO_WRAP
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.scheduler.helpers import pod

MAX_INT64 = 2**63 - 1
EDGES = (0, 1, 2, 99, 100, 101, 999, 1000, 1001, NO_WRAP - 1, NO_WRAP, MAX_INT64, 2**64)
GPU = "example.com/gpu"
_FILLER = pod_info(pod("filler", 1, 1), DEFAULT_SETTINGS)


def quantity(rng: random.Random, scale: int, edges: bool = True) -> int:
    roll = rng.random() if edges else 1.0
    if roll < 0.08:
        return rng.choice(EDGES)
    if roll < 0.1:
        return -rng.randrange(1, 2**40)
    return rng.randrange(0, scale)


def node_info(rng: random.Random, i: int, edges: bool = True) -> NodeInfo:
    """A NodeInfo with random allocatable, Requested, NonZeroRequested and pod count (the
    pods themselves are a filler: the plugins read only their sums and number). Without
    ``edges``: a realistic node, every quantity in range and cpu and memory allocatable."""
    alloc = {
        "cpu": quantity(rng, 64_000, edges) + (0 if edges else 1),
        "memory": quantity(rng, 256 * 2**30, edges) + (0 if edges else 1),
        "pods": rng.choice((0, 1, 5, 110, 110, 110)),
    }
    if rng.random() < 0.5:
        alloc["ephemeral-storage"] = quantity(rng, 100 * 2**30, edges)
    if rng.random() < 0.2:
        alloc[GPU] = rng.choice((0, 1, 8))
    for name in ("cpu", "memory"):
        if edges and rng.random() < 0.05:
            del alloc[name]
    requested = {}
    for name, scale in (("cpu", 64_000), ("memory", 256 * 2**30), ("ephemeral-storage", 2**34)):
        if rng.random() < 0.9:
            requested[name] = quantity(rng, scale, edges)
    if rng.random() < 0.1:
        requested[GPU] = rng.choice((0, 1, 8))
    count = rng.choice((0, 1, 4, 30, 109, 110))
    node = Node(name=f"n{i}", labels={}, capacity=dict(alloc), allocatable=alloc)
    if not count:
        return NodeInfo(node, i, [])
    nz = (quantity(rng, 64_000, edges), quantity(rng, 256 * 2**30, edges))
    totals = (requested, *nz)
    return NodeInfo(node, i, [_FILLER] * count, totals)


def node_infos(rng: random.Random, count: int, edges: bool = True) -> list[NodeInfo]:
    return [node_info(rng, i, edges) for i in range(count)]


def incoming(rng: random.Random):
    """A pending pod requesting some of cpu, memory, ephemeral-storage, a GPU."""
    cpu = rng.choice((0, 0, 1, 100, 500, 4000, 64_000, NO_WRAP, MAX_INT64))
    memory = rng.choice((0, 0, 1, 2**20, 2**30, 2**36, NO_WRAP))
    extra = {}
    if rng.random() < 0.2:
        extra["ephemeral-storage"] = rng.choice((1, 2**30, 2**40))
    if rng.random() < 0.1:
        extra[GPU] = rng.choice((0, 1, 2))
    return pod("incoming", cpu, memory, extra=extra)
