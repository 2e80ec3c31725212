"""ImageLocality (kubernetes/kubernetes pkg/scheduler/framework/plugins/imagelocality,
v1.35): Score only, no normalization.

A node scores for each of the pod's containers (init containers included) whose image it
already holds: the image's size scaled by its spread, the share of all the cluster's nodes
that hold it (``scaledImageScore``), so that an image present everywhere does not pull pods
to one node. The sum is clamped between 23 MiB and 1000 MiB per container and mapped onto
0..100 (``calculatePriority``).

Image states are the scheduler cache's (``addNodeImageStates``): every name a node reports
for an image is a key, the size is the one the first node reporting that name gave, and the
count is how many nodes report the name. The pod's image names are normalized by adding
``:latest`` when they carry no tag (``normalizedImageName``); the node's are taken as they
are. Built once per snapshot view.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from service.engine.scheduler.framework import (
    MAX_NODE_SCORE,
    CycleState,
    NodeInfo,
    ScoresNodes,
)
from service.engine.scheduler.plugins.helper import node_indexes

__all__ = [
    "ImageLocality",
    "ImageStates",
    "calculate_priority",
    "image_states",
    "normalized_image_name",
    "scaled_image_score",
]

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """normalizedImageName: ``:latest`` added when the name has no tag after its last "/"."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def scaled_image_score(size: int, num_nodes: int, total_num_nodes: int) -> int:
    """scaledImageScore: int64(float64(size) * (float64(numNodes) / float64(total)))."""
    return int(float(size) * (float(num_nodes) / float(total_num_nodes)))


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """calculatePriority: the sum clamped to [23 MiB, 1000 MiB × containers], mapped
    linearly onto 0..100 (integer division)."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return _go_div(MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


def _go_div(a: int, b: int) -> int:
    """Go's integer division, truncating toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


@dataclass(frozen=True, slots=True)
class ImageStates:
    """The cache's image states of one view: per image name its size and the indexes of
    the nodes reporting it (in node order, each once); and, per pod key (its images), the
    scores ``ImageLocality`` computed from them (at most ``PER_POD_KEPT``)."""

    total_nodes: int
    size: dict[str, int]
    nodes: dict[str, list[int]]
    per_pod: dict[tuple[str, ...], tuple[dict[int, int], int]] = field(default_factory=dict)


PER_POD_KEPT = 256
_STATES: weakref.WeakKeyDictionary[object, ImageStates] = weakref.WeakKeyDictionary()
_STATES_LOCK = threading.Lock()


def image_states(nodes: Sequence[NodeInfo], key: object) -> ImageStates:
    """The image states of ``nodes`` (every node of the view), computed once per ``key``.

    One pass over every name of every image of every node (hundreds of thousands on a
    5,000-node cluster), so kept lean: a name's holders are a list its first holder
    creates, a node appended once however many of its images carry the name."""
    found = _STATES.get(key)
    if found is not None:
        return found
    size: dict[str, int] = {}
    holders: dict[str, list[int]] = {}
    get = holders.get
    for ni in nodes:
        index = ni.index
        for image in ni.node.images:
            for name in image.names:
                held = get(name)
                if held is None:
                    holders[name] = [index]
                    size[name] = image.size_bytes
                elif held[-1] != index:
                    held.append(index)
    found = ImageStates(len(nodes), size, holders)
    with _STATES_LOCK:
        _STATES[key] = found
    return found


class ImageLocality(ScoresNodes):
    name = "ImageLocality"

    def _per_node(self, state: CycleState) -> tuple[dict[int, int], int]:
        """Per node index holding any of the pod's images: its score (calculatePriority of
        the summed scaled scores); and the score of a node holding none of them. Computed
        on the first Score call of the cycle, kept per pod images with the image states."""
        pod = state.pod
        view = state.view
        states = image_states(view.nodes, view.images_key)
        names = tuple(
            normalized_image_name(c.image) for c in (*pod.init_containers, *pod.containers)
        )
        found = states.per_pod.get(names)
        if found is None:
            found = _scores_of(states, names)
            with _STATES_LOCK:
                states.per_pod[names] = found
                while len(states.per_pod) > PER_POD_KEPT:
                    del states.per_pod[next(iter(states.per_pod))]
        state.data[self.name] = found
        return found

    def score(self, state: CycleState, ni: NodeInfo, ns: object) -> int:
        found = state.data.get(self.name)
        if found is None:
            found = self._per_node(state)
        return found[0].get(ni.index, found[1])

    def score_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> np.ndarray:
        """Score on each node, an int64 column (scores are 0..100): the default but on the
        few holding one of the pod's images, looked up by node index."""
        found = state.data.get(self.name)
        if found is None:
            found = self._per_node(state)
        by_index, default = found
        if not by_index or not nodes:
            return np.full(len(nodes), default, np.int64)
        indexes = node_indexes(state, nodes)
        by_node = np.full(max(int(indexes.max()), max(by_index)) + 1, default, np.int64)
        by_node[list(by_index)] = list(by_index.values())
        return by_node[indexes]


def _scores_of(states: ImageStates, names: tuple[str, ...]) -> tuple[dict[int, int], int]:
    """The score per node index holding one of ``names`` (the pod's containers' images),
    and the score of the others: per container, the scaled score of its image on each node
    holding it, summed per node, then calculatePriority (once per distinct sum)."""
    sums: dict[int, int] = {}
    for name in names:
        holders = states.nodes.get(name)
        if not holders:
            continue
        scaled = scaled_image_score(states.size[name], len(holders), states.total_nodes)
        if not sums:
            sums = dict.fromkeys(holders, scaled)
            continue
        get = sums.get
        for index in holders:
            sums[index] = get(index, 0) + scaled
    containers = len(names)
    priority = {total: calculate_priority(total, containers) for total in set(sums.values())}
    by_index = dict(zip(sums.keys(), map(priority.__getitem__, sums.values()), strict=True))
    return by_index, calculate_priority(0, containers)
