"""NodeResourcesBalancedAllocation (kubernetes/kubernetes pkg/scheduler/framework/plugins/
noderesources balanced_allocation.go, v1.35): PreScore (Skip, from v1.33, for a pod
requesting none of the balanced resources) and Score (balancedResourceScorer,
resource_allocation.py: the balance with the pod up to v1.35, the change the pod makes to
the node's balance from v1.36, kubernetes#135573)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from service.engine.scheduler.framework import (
    OK,
    SKIPPED,
    CycleState,
    NodeInfo,
    NodeInfoPods,
    PreScorePlugin,
    ScoresNodes,
    Status,
)
from service.engine.scheduler.plugins.noderesources import columns as col
from service.engine.scheduler.plugins.noderesources.resource_allocation import (
    BalancedAllocationScorer,
)
from service.engine.scheduler.profile import NodeResourcesBalancedAllocationArgs
from service.engine.version import EngineSettings

__all__ = ["NodeResourcesBalancedAllocation"]


class NodeResourcesBalancedAllocation(PreScorePlugin, ScoresNodes):
    name = "NodeResourcesBalancedAllocation"

    def __init__(
        self,
        args: NodeResourcesBalancedAllocationArgs | None = None,
        *,
        settings: EngineSettings,
    ) -> None:
        args = args or NodeResourcesBalancedAllocationArgs()
        super().__init__(args, settings=settings)
        self.scorer = BalancedAllocationScorer(
            args.resources, scores_change=settings.balanced_allocation_scores_change
        )

    def pre_score(self, state: CycleState, nodes: Sequence[NodeInfo]) -> Status:
        prepared = self.scorer.prepare(state.pod, self.settings)
        if prepared is None:
            return SKIPPED
        state.write(self.name, prepared)
        return OK

    def score(self, state: CycleState, ni: NodeInfo, ns: NodeInfoPods) -> int:
        prepared = state.data.get(self.name)
        if prepared is None:  # PreScore disabled: computed here, as upstream falls back
            prepared = self.scorer.prepare(state.pod, self.settings)
            if prepared is None:
                return 0
            state.write(self.name, prepared)
        return self.scorer.score(prepared, ni.allocatable, ns.requested)

    def score_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[int] | np.ndarray:
        """Score on every node at once (BalancedAllocationScorer.score_columns); nodes out
        of the batch's exact range, and pods or resources without a batch, take ``score``."""
        prepared = state.data.get(self.name)
        scores = None
        if prepared is not None and nodes:
            scores = self.scorer.score_columns(prepared, cols := col.scored_columns(state, nodes))
        if scores is None:
            return [self.score(state, ni, ni) for ni in nodes]
        return col.with_others(scores, cols, nodes, lambda ni: self.score(state, ni, ni))
