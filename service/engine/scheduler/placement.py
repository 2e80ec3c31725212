"""Placement: filter every node, score the feasible ones, pick the best.

Mirrors kubernetes/kubernetes (master, about v1.35/1.36) ``pkg/scheduler/schedule_one.go``
``schedulePod`` / ``findNodesThatFitPod`` / ``prioritizeNodes`` / ``selectHost`` for the
resource plugins of the default profile (spec/scheduler.md §2, §5):

* Filter: the modelled default-profile filters with nominated pods (two passes) on every
  node, plus holds (holds.py). Upstream stops after ``percentageOfNodesToScore`` feasible
  nodes (adaptive, e.g. 10% of 5,000 nodes) starting at a rotating index; Verdict filters and
  scores every node (as percentageOfNodesToScore = 100), so that the answer does not depend
  on the scheduler's rotation state.
* A pod carrying ``status.nominatedNodeName`` is tried on that node first
  (``evaluateNominatedNode``): if it passes, it is chosen without scoring the others (Verdict
  still reports every node).
* Score: NodeResourcesFit (the configured strategy) and NodeResourcesBalancedAllocation,
  each with plugin weight 1 as in the default profile; total = the weighted sum. The other
  score plugins of the default profile (TaintToleration, NodeAffinity, PodTopologySpread,
  InterPodAffinity, ImageLocality, VolumeBinding) are not modelled.
* selectHost: the highest total wins; upstream breaks ties uniformly at random (reservoir
  sampling), Verdict takes the first of the tied nodes in snapshot order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from service.engine.objects import Cluster, Pod
from service.engine.scheduler.filters import (
    DEFAULT_FIT_ARGS,
    FitArgs,
    Status,
    base_state,
    pod_context,
    scheduler_view,
)
from service.engine.scheduler.holds import Hold, apply_holds, hold_reasons
from service.engine.scheduler.nominated import prepare_nominated, run_filters_with_nominated
from service.engine.scheduler.preemption import fit_error_message
from service.engine.scheduler.scoring import (
    DEFAULT_RESOURCES,
    LEAST_ALLOCATED,
    BalancedAllocationScorer,
    ResourceAllocationScorer,
    ResourceSpec,
)

__all__ = [
    "BALANCED_PLUGIN",
    "FIT_PLUGIN",
    "NOT_MODELLED_SCORE_PLUGINS",
    "NodePlacement",
    "PlacementOutcome",
    "ScoringConfig",
    "place",
]

FIT_PLUGIN = "NodeResourcesFit"
BALANCED_PLUGIN = "NodeResourcesBalancedAllocation"
NOT_MODELLED_SCORE_PLUGINS = (
    "TaintToleration",
    "NodeAffinity",
    "PodTopologySpread",
    "InterPodAffinity",
    "ImageLocality",
    "VolumeBinding",
)


@dataclass(frozen=True, slots=True)
class ScoringConfig:
    """NodeResourcesFitArgs.scoringStrategy plus the BalancedAllocation switch and resources.
    ``shape`` holds (utilization, score) points on the configuration's 0..10 scale."""

    strategy: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    shape: tuple[tuple[int, int], ...] | None = None
    balanced_allocation: bool = True
    balanced_resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES


@dataclass(slots=True)
class NodePlacement:
    node_name: str
    status: Status
    reasons: list[str]
    scores: dict[str, int] | None = None
    total: int | None = None

    @property
    def feasible(self) -> bool:
        return self.status.is_success


@dataclass(slots=True)
class PlacementOutcome:
    selected_node: str | None
    nodes: list[NodePlacement]
    message: str
    not_modelled: tuple[str, ...] = ()
    balanced_skipped: bool = False
    nominated_node_chosen: bool = False
    holds_freed: dict[str, list[str]] = field(default_factory=dict)


def place(
    cluster: Cluster,
    pod: Pod,
    *,
    scoring: ScoringConfig = ScoringConfig(),
    hold_statefulset_upgrades: bool = False,
    holds: Sequence[Hold] = (),
    fit_args: FitArgs = DEFAULT_FIT_ARGS,
) -> PlacementOutcome:
    """Filter and score ``pod`` on every node of the snapshot; see the module docstring."""
    view = scheduler_view(cluster)
    ctx = pod_context(pod, view, fit_args)
    prepare_nominated(ctx, view)
    plan = apply_holds(ctx, view, hold_statefulset_upgrades=hold_statefulset_upgrades, holds=holds)
    hold_nodes = plan.nodes()

    fit_scorer = ResourceAllocationScorer(scoring.strategy, scoring.resources, scoring.shape)
    fit_prepared = fit_scorer.prepare(pod)
    balanced = None
    balanced_prepared = None
    balanced_skipped = False
    if scoring.balanced_allocation:
        balanced = BalancedAllocationScorer(scoring.balanced_resources)
        balanced_prepared = balanced.prepare(pod)
        balanced_skipped = balanced_prepared is None

    removed = ctx.removed
    nodes: list[NodePlacement] = []
    best_total = -1
    best_name: str | None = None
    statuses: dict[str, Status] = {}
    for ni in view.nodes:
        status = run_filters_with_nominated(ctx, ni)
        name = ni.name
        if not status.is_success:
            reasons = list(status.reasons)
            if hold_nodes and name in hold_nodes:
                reasons.extend(hold_reasons(ctx, ni, status, plan))
                status = Status(status.code, tuple(reasons), status.plugin)
            statuses[name] = status
            nodes.append(NodePlacement(name, status, reasons))
            continue
        if removed and name in removed:
            state = base_state(ctx, ni)
            requested, nz_cpu, nz_mem = state.requested, state.nz_cpu, state.nz_mem
        else:
            requested, nz_cpu, nz_mem = ni.requested, ni.nz_cpu, ni.nz_mem
        alloc = ni.allocatable
        fit = fit_scorer.score(fit_prepared, alloc, requested, nz_cpu, nz_mem)
        scores = {FIT_PLUGIN: fit}
        total = fit
        if balanced_prepared is not None:
            bal = balanced.score(balanced_prepared, alloc, requested)  # type: ignore[union-attr]
            scores[BALANCED_PLUGIN] = bal
            total += bal
        nodes.append(NodePlacement(name, status, [], scores, total))
        if total > best_total:
            best_total = total
            best_name = name

    nominated_chosen = False
    nominated = pod.nominated_node_name
    if nominated and nominated in view.by_name:
        entry = nodes[view.by_name[nominated].index]
        if entry.feasible:
            best_name = nominated
            nominated_chosen = True

    if best_name is None and ctx.prefilter_status is not None:
        # FitError with a PreFilter message: "0/N nodes are available: <message>."
        message = f"0/{len(nodes)} nodes are available: {ctx.prefilter_status.message}."
    elif best_name is None:
        message = fit_error_message(len(nodes), statuses)
    elif nominated_chosen:
        message = (
            f'the pod\'s nominated node "{best_name}" passes the filters, so the scheduler '
            "takes it without scoring other nodes"
        )
    else:
        feasible = sum(1 for n in nodes if n.feasible)
        message = f'{feasible}/{len(nodes)} nodes are feasible; "{best_name}" scores highest'
    return PlacementOutcome(
        selected_node=best_name,
        nodes=nodes,
        message=message,
        not_modelled=ctx.not_modelled,
        balanced_skipped=balanced_skipped,
        nominated_node_chosen=nominated_chosen,
        holds_freed=plan.freed,
    )
