"""TaintToleration (kubernetes/kubernetes pkg/scheduler/framework/plugins/tainttoleration,
v1.35): Filter, PreScore, Score and NormalizeScore.

Filter rejects a node with a NoSchedule or NoExecute taint the pod does not tolerate
(UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)"; up to v1.34 the reason
named the first such taint, ``settings.taint_reason_names_taint``, kubernetes#134740). Score counts the node's PreferNoSchedule taints that the pod's tolerations of
effect PreferNoSchedule (or of any effect) do not tolerate; NormalizeScore reverses it, so the
node with the fewest such taints gets 100.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.engine.objects import Toleration
from service.engine.scheduler.framework import (
    MAX_NODE_SCORE,
    OK,
    UNRESOLVABLE,
    CycleState,
    IgnoresNodePods,
    NodeInfo,
    PreScorePlugin,
    ScoreExtensions,
    Status,
)
from service.engine.scheduler.plugins.helper import default_normalize_score
from service.engine.tolerations import find_untolerated, tolerates_any

__all__ = ["ERR_REASON_UNTOLERATED", "TaintToleration"]

ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
_DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")
_PREFER_NO_SCHEDULE = "PreferNoSchedule"


class TaintToleration(IgnoresNodePods, PreScorePlugin, ScoreExtensions):
    name = "TaintToleration"

    def filter(self, state: CycleState, ni: NodeInfo, ns: object) -> Status | None:
        """The first NoSchedule/NoExecute taint the pod does not tolerate rejects the node."""
        taints = ni.node.taints
        if not taints:
            return None
        taint = find_untolerated(taints, state.pod.tolerations, _DO_NOT_SCHEDULE)
        if taint is None:
            return None
        if self.settings.taint_reason_names_taint:
            reason = f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
            return Status(UNRESOLVABLE, (reason,), self.name)
        return Status(UNRESOLVABLE, (ERR_REASON_UNTOLERATED,), self.name)

    def pre_score(self, state: CycleState, nodes: Sequence[NodeInfo]) -> Status:
        """getAllTolerationPreferNoSchedule: the tolerations of effect PreferNoSchedule or
        of no effect (every effect)."""
        state.write(
            self.name,
            tuple(t for t in state.pod.tolerations if t.effect in ("", _PREFER_NO_SCHEDULE)),
        )
        return OK

    def score(self, state: CycleState, ni: NodeInfo, ns: object) -> int:
        """countIntolerableTaintsPreferNoSchedule."""
        taints = ni.node.taints
        if not taints:
            return 0
        tolerations: tuple[Toleration, ...] | None = state.data.get(self.name)
        if tolerations is None:  # PreScore disabled: computed here
            self.pre_score(state, ())
            tolerations = state.data[self.name]
        return sum(
            1
            for taint in taints
            if taint.effect == _PREFER_NO_SCHEDULE and not tolerates_any(tolerations, taint)
        )

    def normalize_score(
        self, state: CycleState, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
