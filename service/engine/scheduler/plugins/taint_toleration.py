"""TaintToleration (kubernetes/kubernetes pkg/scheduler/framework/plugins/tainttoleration).
Filter only so far (the score side is being added)."""

from __future__ import annotations

from service.engine.scheduler.framework import UNRESOLVABLE, CycleState, NodeInfo, Plugin, Status
from service.engine.tolerations import find_untolerated

__all__ = ["TaintToleration"]

_DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")


class TaintToleration(Plugin):
    name = "TaintToleration"

    def filter(self, state: CycleState, ni: NodeInfo, ns: object) -> Status | None:
        """The first NoSchedule/NoExecute taint the pod does not tolerate."""
        taints = ni.node.taints
        if not taints:
            return None
        taint = find_untolerated(taints, state.pod.tolerations, _DO_NOT_SCHEDULE)
        if taint is None:
            return None
        reason = f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
        return Status(UNRESOLVABLE, (reason,), self.name)
