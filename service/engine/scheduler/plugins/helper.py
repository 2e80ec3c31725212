"""Helpers the plugins share: the score plugins' (upstream pkg/scheduler/framework/plugins/
helper), and the volume plugins' ReadsWholePods."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import TYPE_CHECKING

import numpy as np

from service.engine.objects import Pod
from service.engine.scheduler.framework import CycleState, NodeInfo, ReadsWholePods

if TYPE_CHECKING:
    from service.engine.scheduler.runtime import Column
    from service.engine.scheduler.snapshot import SchedulerView

__all__ = ["ReadsPodVolumes", "default_normalize_score", "give_node_indexes", "node_indexes"]

_NODE_INDEXES = "helper/nodeIndexes"  # (the nodes, their view indexes), see give_node_indexes
_INDEX = attrgetter("index")


class ReadsPodVolumes(ReadsWholePods):
    """A volume plugin: for a pod with volumes it reads the storage objects and the view's
    pods' volumes, which a restored view does not hold."""

    def reads_whole_pods(self, pod: Pod, view: SchedulerView) -> bool:
        return bool(pod.volumes)


def give_node_indexes(state: CycleState, nodes: Sequence[NodeInfo], indexes: np.ndarray) -> None:
    """Tell the plugins the view index of each of ``nodes`` (the cycle's feasible nodes,
    whose indexes placement has from the filter's verdicts without reading a node)."""
    state.data[_NODE_INDEXES] = (nodes, indexes)


def node_indexes(state: CycleState, nodes: Sequence[NodeInfo]) -> np.ndarray:
    """The view index (NodeInfo.index) of each of ``nodes``, as an array: the one given for
    this very list (give_node_indexes), else read off the nodes."""
    given = state.data.get(_NODE_INDEXES)
    if given is not None and given[0] is nodes:
        return given[1]
    return np.fromiter(map(_INDEX, nodes), np.intp, len(nodes))


def default_normalize_score(max_priority: int, reverse: bool, scores: Column) -> None:
    """DefaultNormalizeScore: scale to 0..``max_priority`` by the highest score (integer
    division), reversed if asked; all zero stays zero, or becomes ``max_priority`` reversed.

    On an int64 column, in numpy (its scores lie within ±2**53: no product wraps); on a
    list, in C (max, then one map) with each distinct score scaled once (``_Scaled``): the
    scores of a plugin over thousands of nodes take few values."""
    if isinstance(scores, np.ndarray):
        highest = int(scores.max()) if len(scores) else 0
        if highest <= 0:
            if reverse:
                scores[:] = max_priority
            return
        scaled = max_priority * scores // highest
        scores[:] = max_priority - scaled if reverse else scaled
        return
    highest = max(scores, default=0)
    if highest <= 0:
        if reverse:
            scores[:] = [max_priority] * len(scores)
        return
    scores[:] = map(_Scaled(max_priority, highest, reverse).__getitem__, scores)


class _Scaled(dict):
    """score -> its DefaultNormalizeScore value, computed on first lookup."""

    __slots__ = ("highest", "max_priority", "reverse")

    def __init__(self, max_priority: int, highest: int, reverse: bool) -> None:
        super().__init__()
        self.max_priority = max_priority
        self.highest = highest
        self.reverse = reverse

    def __missing__(self, score: int) -> int:
        scaled = self.max_priority * score // self.highest
        value = self[score] = self.max_priority - scaled if self.reverse else scaled
        return value
