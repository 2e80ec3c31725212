"""TaintToleration (kubernetes/kubernetes pkg/scheduler/framework/plugins/tainttoleration,
v1.35): Filter, PreScore, Score and NormalizeScore.

Filter rejects a node with a NoSchedule or NoExecute taint the pod does not tolerate
(UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)"; up to v1.34 the reason
named the first such taint, ``settings.taint_reason_names_taint``, kubernetes#134740). Score counts the node's PreferNoSchedule taints that the pod's tolerations of
effect PreferNoSchedule (or of any effect) do not tolerate; NormalizeScore reverses it, so the
node with the fewest such taints gets 100.

Batches (FiltersNodes, ScoresNodes): both read only the node's taints and the pod's
tolerations (their key, operator, value and effect), so the answers are kept per toleration
set and NodeInfo, grouped by taints (node_tables.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

import numpy as np

from service.engine.objects import Taint, Toleration
from service.engine.scheduler.framework import (
    MAX_NODE_SCORE,
    OK,
    UNRESOLVABLE,
    CanPassEveryNode,
    CycleState,
    FiltersNodes,
    IgnoresNodePods,
    NodeInfo,
    PreScorePlugin,
    ScoreExtensions,
    ScoresNodes,
    Status,
)
from service.engine.scheduler.plugins.helper import default_normalize_score, node_indexes
from service.engine.scheduler.plugins.node_tables import TableStore
from service.engine.tolerations import find_untolerated, tolerates_any
from service.engine.version import EngineSettings

__all__ = ["ERR_REASON_UNTOLERATED", "TaintToleration"]

ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
_DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")
_PREFER_NO_SCHEDULE = "PreferNoSchedule"


_TAINTS = attrgetter("node.taints")


def _matching_fields(tolerations: Sequence[Toleration]) -> tuple[tuple[str, str, str, str], ...]:
    """What toleration matching reads of each toleration (not tolerationSeconds): the key
    under which the batches keep a pod's answers."""
    return tuple((t.key, t.operator, t.value, t.effect) for t in tolerations)


def _tolerates_every_taint(tolerations: Sequence[Toleration]) -> bool:
    """A toleration of every key, value and effect (key "", operator Exists, effect "")."""
    return any(not t.key and t.operator == "Exists" and not t.effect for t in tolerations)


class TaintToleration(
    IgnoresNodePods, CanPassEveryNode, FiltersNodes, PreScorePlugin, ScoreExtensions, ScoresNodes
):
    name = "TaintToleration"

    def __init__(self, args: object | None = None, *, settings: EngineSettings) -> None:
        super().__init__(args, settings=settings)
        self._tables = TableStore()

    def can_reject(self, state: CycleState) -> bool:
        """A pod tolerating every taint passes every node."""
        return not _tolerates_every_taint(state.pod.tolerations)

    def filter(self, state: CycleState, ni: NodeInfo, ns: object) -> Status | None:
        """The first NoSchedule/NoExecute taint the pod does not tolerate rejects the node."""
        taints = ni.node.taints
        if not taints:
            return None
        return self._filter_taints(state.pod.tolerations, taints)

    def _filter_taints(
        self, tolerations: Sequence[Toleration], taints: Sequence[Taint]
    ) -> Status | None:
        taint = find_untolerated(taints, tolerations, _DO_NOT_SCHEDULE)
        if taint is None:
            return None
        if self.settings.taint_reason_names_taint:
            reason = f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
            return Status(UNRESOLVABLE, (reason,), self.name)
        return Status(UNRESOLVABLE, (ERR_REASON_UNTOLERATED,), self.name)

    def filter_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """Filter on each node, from the table of the pod's tolerations (node_tables.py)."""
        tolerations = state.pod.tolerations
        if _tolerates_every_taint(tolerations):
            return [None] * len(nodes)

        def answer(ni: NodeInfo) -> Status | None:
            taints = ni.node.taints
            return self._filter_taints(tolerations, taints) if taints else None

        key = ("filter", _matching_fields(tolerations))
        table = self._tables.table(state.view, nodes, "taints", _TAINTS, key, answer)
        return table.answers(nodes)

    def pre_score(self, state: CycleState, nodes: Sequence[NodeInfo]) -> Status:
        """getAllTolerationPreferNoSchedule: the tolerations of effect PreferNoSchedule or
        of no effect (every effect)."""
        state.write(
            self.name,
            tuple(t for t in state.pod.tolerations if t.effect in ("", _PREFER_NO_SCHEDULE)),
        )
        return OK

    def _tolerations(self, state: CycleState) -> tuple[Toleration, ...]:
        tolerations: tuple[Toleration, ...] | None = state.data.get(self.name)
        if tolerations is None:  # PreScore disabled: computed here
            self.pre_score(state, ())
            tolerations = state.data[self.name]
        return tolerations

    def score(self, state: CycleState, ni: NodeInfo, ns: object) -> int:
        """countIntolerableTaintsPreferNoSchedule."""
        taints = ni.node.taints
        if not taints:
            return 0
        return _intolerable(self._tolerations(state), taints)

    def score_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[int] | np.ndarray:
        """Score on each node, from the table of the pod's PreferNoSchedule tolerations (an
        int64 column, taken by view index: NodeTable.scores)."""
        tolerations = self._tolerations(state)

        def answer(ni: NodeInfo) -> int:
            taints = ni.node.taints
            return _intolerable(tolerations, taints) if taints else 0

        key = ("score", _matching_fields(tolerations))
        table = self._tables.table(state.view, nodes, "taints", _TAINTS, key, answer)
        return table.scores(state.view, nodes, node_indexes(state, nodes))

    def normalize_score(
        self, state: CycleState, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)


def _intolerable(tolerations: Sequence[Toleration], taints: Sequence[Taint]) -> int:
    """The PreferNoSchedule taints none of ``tolerations`` tolerates."""
    return sum(
        1
        for taint in taints
        if taint.effect == _PREFER_NO_SCHEDULE and not tolerates_any(tolerations, taint)
    )
