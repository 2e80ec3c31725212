"""What the decision kinds that run many scheduling cycles share (``schedule``,
``capacity``): the run limits, the tie-break option, the profiles by schedulerName, the pods
of a request checked and admitted, and the answer's per-node usage and steps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from marshmallow import ValidationError, fields, validate

from service.decisions.base import DecisionInputError
from service.decisions.priority import admit_priority
from service.decisions.schemas import StrictSchema
from service.engine.objects import Cluster, Pod
from service.engine.quantity import base_units_to_string
from service.engine.refs import pod_ref
from service.engine.scheduler.profile import DEFAULT_SCHEDULER_NAME, Profile, default_profile
from service.engine.scheduler.queue import NodeUsage, QueueStep
from service.engine.version import EngineSettings
from service.ingest.kubescheduler_config import SchedulerConfigError, scheduler_profiles

__all__ = [
    "SimulationLimits",
    "TieBreakSchema",
    "check_pods",
    "nodes_json",
    "profiles_of",
    "step_json",
    "tie_sentence",
]

MAX_SEED = 2**63 - 1


@dataclass(frozen=True, slots=True)
class SimulationLimits:
    """How long a run may go (``VERDICT_SIMULATION_MAX_STEPS`` cycles,
    ``VERDICT_SIMULATION_MAX_SECONDS``): past either it stops with what it has and says so,
    so that a request never holds a worker past the request timeout."""

    max_steps: int = 100_000
    max_seconds: float = 120.0


class TieBreakSchema(StrictSchema):
    """``{"seed": n}``: break ties between the top totals as selectHost's reservoir sampling
    would, drawing from a PRNG seeded with n (Python's, not Go's stream)."""

    seed = fields.Integer(required=True, strict=True, validate=validate.Range(0, MAX_SEED))


def profiles_of(request: dict, settings: EngineSettings) -> dict[str, Profile]:
    """The scheduler's profiles by schedulerName: the request's schedulerConfiguration's,
    else the release's default profile as default-scheduler."""
    config = request.get("schedulerConfiguration")
    if config is None:
        return {DEFAULT_SCHEDULER_NAME: default_profile(settings)}
    try:
        return scheduler_profiles(config, settings)
    except SchedulerConfigError as exc:
        raise ValidationError({path: [message] for path, message in exc.errors}) from None


def check_pods(
    cluster: Cluster, pods: Sequence[Pod], profiles: Mapping[str, Profile], field: str
) -> list[Pod]:
    """The request's pods as the API server would admit them (priority), each one unbound,
    named once, scheduled by one of the profiles, and not a pod the snapshot has bound;
    an error names ``<field>[i]`` and the pod's field."""
    bound = {p.key: p.node_name for p in cluster.snapshot.pods if p.node_name}
    seen: dict[str, int] = {}
    out: list[Pod] = []
    for i, pod in enumerate(pods):
        where = field if field == "pod" else f"{field}[{i}]"  # capacity's single template
        if pod.node_name:
            raise ValidationError(
                {where: {"spec.nodeName": ["the pod is already bound to a node; the scheduler "
                                           "only places pods without spec.nodeName"]}}
            )  # fmt: skip
        if pod.key in seen:
            raise ValidationError(
                {where: {"metadata.name": [f"{pod.key} is given twice ({field}[{seen[pod.key]}])"]}}
            )
        seen[pod.key] = i
        if pod.key in bound:
            raise DecisionInputError(
                f"{where}.metadata.name",
                f"{pod.key} is already bound to node {bound[pod.key]!r} in the snapshot",
            )
        name = pod.scheduler_name or DEFAULT_SCHEDULER_NAME
        if name not in profiles:
            raise DecisionInputError(
                f"{where}.spec.schedulerName",
                f"no profile has schedulerName {name!r} (there are "
                f"{', '.join(repr(n) for n in profiles)}): that scheduler would not schedule it",
            )
        out.append(admit_priority(pod, cluster, path=where))
    return out


_BINARY = ("memory", "ephemeral-storage")


def _amounts(node_formats: Mapping[str, str], amounts: Mapping[str, int]) -> dict[str, str]:
    """Base-unit amounts as quantities, in the node's formats (else DecimalSI, BinarySI for
    bytes)."""
    out = {}
    for name, amount in sorted(amounts.items()):
        default = "BinarySI" if name in _BINARY or name.startswith("hugepages-") else "DecimalSI"
        out[name] = base_units_to_string(name, amount, node_formats.get(name, default))
    return out


def nodes_json(cluster: Cluster, usage: Sequence[NodeUsage]) -> list[dict]:
    """The nodes a run changed, in snapshot order: allocatable, requested before and after
    (NodeInfo.Requested), and the pod counts."""
    formats = {n.name: n.formats for n in cluster.nodes}
    rows = []
    for u in usage:
        if not u.changed:
            continue
        fmt = formats.get(u.name, {})
        rows.append(
            {
                "nodeName": u.name,
                "allocatable": _amounts(fmt, u.allocatable),
                "requestedBefore": _amounts(fmt, u.requested_before),
                "requestedAfter": _amounts(fmt, u.requested_after),
                "podsBefore": u.pods_before,
                "podsAfter": u.pods_after,
            }
        )
    return rows


def tie_sentence(ties: Sequence[str], seeded: bool) -> str:
    """What a step says when several nodes tie at the top total."""
    if len(ties) < 2:
        return ""
    pick = (
        "Verdict picks by reservoir sampling from tieBreak.seed (not Go's random stream)"
        if seeded
        else "Verdict takes the first in snapshot order"
    )
    return f" {len(ties)} nodes tie at the top total: kube-scheduler picks one at random; {pick}."


def step_json(step: QueueStep, settings: EngineSettings, seeded: bool) -> dict:
    """One step of a run as the answer gives it."""
    message = step.message if step.message.endswith(".") else step.message + "."
    row: dict = {
        "pod": {"namespace": step.pod.namespace, "name": step.pod.name},
        "outcome": step.outcome,
        "nodeName": step.node,
        "victims": [pod_ref(v.pod, settings=settings) for v in step.victims if v.pod is not None],
        "message": message + tie_sentence(step.ties, seeded),
        "attempt": step.attempt,
    }
    if step.ties:
        row["ties"] = list(step.ties)
    if step.reasons:
        row["nodeCounts"] = step.reasons
    if step.cleared_nominations:
        row["clearedNominations"] = step.cleared_nominations
    return row
