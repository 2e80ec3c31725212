"""Capacity: how many replicas of a pod template fit, each placed by a full scheduling cycle
on the state the replicas before it left.

Mirrors sigs.k8s.io/cluster-capacity (``pkg/framework`` ``ClusterCapacity``): copies of the
template are scheduled one after another by the scheduler's own cycle until one does not
fit; with several templates, each is placed in turn until it stops, on the cluster the
earlier ones filled. The stop reason is the failing cycle's FitError message and its
per-reason node counts. Each replica is a copy of the template named ``<name>-<n>`` (n from
1) with a UID derived from the template and n (Verdict's naming, so a replay gives the same
pods), so that spread constraints and pod (anti-)affinity between the replicas count as in
the real scheduler. Replicas never preempt (cluster-capacity's question is what fits beside
the running pods). ``exclude_nodes`` are cordoned first (NodeUnschedulable rejects them).
"""

from __future__ import annotations

import hashlib
import random
import time
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

import msgspec

from service.engine.collector import collector_paused
from service.engine.objects import Cluster, Pod
from service.engine.scheduler.incremental import TemplateCycles
from service.engine.scheduler.profile import Profile
from service.engine.scheduler.queue import (
    BOUND,
    DEFAULT_MAX_STEPS,
    NodeUsage,
    QueueStep,
    WorkingCluster,
    cycle,
    profile_of,
)
from service.engine.version import EngineSettings

__all__ = [
    "LIMIT_MAX_REPLICAS",
    "LIMIT_MAX_STEPS",
    "LIMIT_TIME",
    "UNSCHEDULABLE",
    "CapacityRun",
    "TemplateCapacity",
    "capacity",
    "replica",
]

# Why a template stopped
UNSCHEDULABLE = "Unschedulable"  # the next replica does not fit
LIMIT_MAX_REPLICAS = "MaxReplicas"  # the request's maxReplicas was reached
LIMIT_MAX_STEPS = "MaxSteps"  # the configured limit of cycles per run
LIMIT_TIME = "TimeLimit"  # the configured time budget of a run

_UID_NAMESPACE = uuid.UUID("6f1d3c36-4c0e-4f8e-9a43-2a4f8b2f6a27")
_UID_PREFIX = _UID_NAMESPACE.bytes


def _uuid5_of(digest: hashlib._Hash) -> str:
    """str(uuid.uuid5(_UID_NAMESPACE, name)) from the SHA-1 of namespace and name, without
    building a UUID (a capacity run makes one per replica): its first 16 bytes, version 5,
    RFC 4122 variant (the version's hex digit written over, the variant's two high bits set on
    the next one: ``_VARIANT``)."""
    h = digest.hexdigest()
    return f"{h[:8]}-{h[8:12]}-5{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:32]}"


# a hex digit with its two high bits set to 10 (the RFC 4122 variant)
_VARIANT = {f"{d:x}": f"{d & 0x3 | 0x8:x}" for d in range(16)}


@dataclass(slots=True)
class TemplateCapacity:
    """One template's answer: the replicas placed, per node, and why it stopped (``stop``:
    one of the constants above; ``message`` and ``reasons``, each filter reason's node count,
    of the failing cycle when Unschedulable)."""

    template: Pod
    replicas: int = 0
    per_node: dict[str, int] = field(default_factory=dict)
    stop: str = UNSCHEDULABLE
    message: str = ""
    reasons: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class CapacityRun:
    """Every template's answer, the placements in order (template index, replica name,
    node), the nodes' usage before and after, the cluster after, and whether a run limit
    stopped it before every template did."""

    templates: list[TemplateCapacity]
    placements: list[tuple[int, str, str]]
    nodes: list[NodeUsage]
    cluster: Cluster
    truncated: bool
    ties: int = 0  # placements where several nodes tied at the top total
    incremental: int = 0  # placements decided by incremental.py, not by a full cycle
    grouped: int = 0  # of those, placements decided by its group path (score_groups.py)


def replica(template: Pod, n: int) -> Pod:
    """The template's n-th replica: a new name and UID, pending, not nominated."""
    return _Replicas(template)(n)


class _Replicas:
    """``replica`` of one template, what every replica shares made once: the pending pod
    and the SHA-1 of the UID's namespace and name prefix (each replica's copies it)."""

    __slots__ = ("_hashed", "_pending", "_prefix")

    def __init__(self, template: Pod) -> None:
        self._prefix = f"{template.name}-"
        self._pending = msgspec.structs.replace(
            template, node_name="", nominated_node_name="", phase="Pending"
        )
        name = f"{template.namespace}/{template.name}/{template.uid}/"
        self._hashed = hashlib.sha1(_UID_PREFIX + name.encode())

    def __call__(self, n: int) -> Pod:
        digest = self._hashed.copy()
        digest.update(str(n).encode())
        return msgspec.structs.replace(
            self._pending, name=f"{self._prefix}{n}", uid=_uuid5_of(digest)
        )


def capacity(
    cluster: Cluster,
    templates: Sequence[Pod],
    *,
    profiles: Mapping[str, Profile],
    settings: EngineSettings,
    max_replicas: int | None = None,
    exclude_nodes: Collection[str] = (),
    tie_break_seed: int | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_seconds: float | None = None,
    fresh_views: bool = False,
    incremental: bool = True,
    between_steps: Callable[[], None] | None = None,
) -> CapacityRun:
    """Place replicas of each template in turn until one does not fit (or ``max_replicas``
    of it are placed); ``max_steps`` cycles and ``max_seconds`` bound the whole run. Every
    template must have a profile in ``profiles``. ``fresh_views``: as for ``run_queue``.
    ``incremental``: keep each node's node-local filter verdict and scores between
    replicas (incremental.py); False runs every replica's full cycle (what it is tested
    against). ``between_steps`` is called before each cycle, as in ``run_queue``."""
    # a run makes a few long-lived objects per replica and no cyclic garbage
    # (tests/engine/scheduler/test_capacity.py): collections would find nothing (about 5 %
    # of the 5,000-node run's CPU). Views built anew every step (fresh_views) do leave some.
    with collector_paused(not fresh_views):
        work = WorkingCluster(cluster, settings, cordoned=exclude_nodes, fresh=fresh_views)
        rng = random.Random(tie_break_seed) if tie_break_seed is not None else None
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        answers = [TemplateCapacity(t) for t in templates]
        placements: list[tuple[int, str, str]] = []
        steps = ties = fast = grouped = 0
        truncated = False
        for index, (template, answer) in enumerate(zip(templates, answers, strict=True)):
            profile = profile_of(template, profiles)
            assert profile is not None, "the caller checks every template has a profile"
            cycles = TemplateCycles(work, profile, settings) if incremental else None
            replicas = _Replicas(template)
            if truncated:
                answer.stop = LIMIT_MAX_STEPS if steps >= max_steps else LIMIT_TIME
                continue
            while True:
                if between_steps is not None:
                    between_steps()
                if max_replicas is not None and answer.replicas >= max_replicas:
                    answer.stop = LIMIT_MAX_REPLICAS
                    break
                if steps >= max_steps or (deadline is not None and time.monotonic() > deadline):
                    truncated = True
                    answer.stop = LIMIT_MAX_STEPS if steps >= max_steps else LIMIT_TIME
                    break
                pod = replicas(answer.replicas + 1)
                node, step, how, tied = _cycle(work, cycles, pod, profile, rng)
                steps += 1
                fast += how != _FULL
                grouped += how == _GROUPED
                if how != _GROUPED and cycles is not None and node is not None:
                    cycles.bound(node, pod.key)
                if step is not None and step.outcome != BOUND:
                    answer.stop, answer.message, answer.reasons = (
                        UNSCHEDULABLE,
                        step.message,
                        step.reasons,
                    )
                    break
                ties += tied
                answer.replicas += 1
                answer.per_node[node] = answer.per_node.get(node, 0) + 1  # type: ignore[index]
                placements.append((index, pod.name, node))  # type: ignore[arg-type]
            if cycles is not None:
                cycles.finish()
        return CapacityRun(
            answers, placements, work.usage(), work.cluster, truncated, ties, fast, grouped
        )


# how a replica was decided
_FULL, _INCREMENTAL, _GROUPED = 0, 1, 2


def _cycle(
    work: WorkingCluster,
    cycles: TemplateCycles | None,
    pod: Pod,
    profile: Profile,
    rng: random.Random | None,
) -> tuple[str | None, QueueStep | None, int, bool]:
    """One replica's cycle, bound if it fits: the node, the full cycle's step (None when
    incremental.py answered: the replica is then bound), how it was decided, and whether
    several nodes tied at the top. By incremental.py's group path (its bind kept there
    until ``finish``) or its incremental cycle when they answer, else by the full cycle
    (queue.cycle), which also gives an unschedulable replica its message."""
    found = cycles.place(pod, rng) if cycles is not None else None
    if found is None:
        step = cycle(work, pod, profile, preemption=False, rng=rng)
        return step.node, step, _FULL, bool(step.ties)
    node = found[0]
    if cycles.deferred:  # type: ignore[union-attr]
        cycles.defer(pod, node)  # type: ignore[union-attr]
        return node, None, _GROUPED, cycles.tied  # type: ignore[union-attr]
    work.bind(pod, node)
    return node, None, _INCREMENTAL, cycles.tied  # type: ignore[union-attr]
