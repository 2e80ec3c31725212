"""The taint eviction controller (NoExecute taints → pod deletion) and the
DefaultTolerationSeconds admission plugin.

Mirrors pkg/controller/tainteviction/taint_eviction.go (k8s 1.35: getNoExecuteTaints,
getMinTolerationTime, processPodOnNode, handleNodeUpdate's short-circuit), the core/v1
helper GetMatchingTolerations, and plugin/pkg/admission/defaulttolerationseconds (k8s 1.35).
Toleration matching is the engine's one matcher, ``service.engine.tolerations.tolerates``.

What the taint eviction controller does *not* do: it exempts no pod. DaemonSet pods survive
the lifecycle taints only because the DaemonSet controller gives them not-ready and
unreachable NoExecute tolerations without tolerationSeconds; static/mirror and critical
pods are treated like any other pod. Terminal pods on the node are processed too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from service.engine.nodelifecycle.clock import SECOND
from service.engine.objects import Taint, Toleration
from service.engine.tolerations import tolerates

__all__ = [
    "NOT_READY_TAINT_KEY",
    "UNREACHABLE_TAINT_KEY",
    "Decision",
    "EvictionOutcome",
    "TaintEvictionQueue",
    "default_toleration_seconds",
    "get_matching_tolerations",
    "get_min_toleration_time",
    "no_execute_taints",
    "pod_decision",
    "replay_pod",
]

NOT_READY_TAINT_KEY = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT_KEY = "node.kubernetes.io/unreachable"
NO_EXECUTE = "NoExecute"

FOREVER = -1


def no_execute_taints(taints: Iterable[Taint]) -> tuple[Taint, ...]:
    """getNoExecuteTaints: the node's NoExecute taints, in node order (any key)."""
    return tuple(t for t in taints if t.effect == NO_EXECUTE)


def get_matching_tolerations(
    taints: Sequence[Taint], tolerations: Sequence[Toleration]
) -> tuple[bool, list[Toleration | None]]:
    """core/v1 helper GetMatchingTolerations: for each taint (node order) the FIRST toleration
    in pod order that tolerates it. Returns (all tolerated, the used toleration per taint,
    None where a taint is not tolerated)."""
    used: list[Toleration | None] = []
    all_tolerated = True
    for taint in taints:
        match = None
        for toleration in tolerations:
            if tolerates(toleration, taint):
                match = toleration
                break
        if match is None:
            all_tolerated = False
        used.append(match)
    return all_tolerated, used


def get_min_toleration_time(used: Iterable[Toleration | None]) -> int:
    """getMinTolerationTime (seconds): the minimum tolerationSeconds of the used tolerations;
    -1 (forever) when none has tolerationSeconds; 0 for an empty list; any value <= 0
    short-circuits to 0 (evict now)."""
    used = [t for t in used if t is not None]
    if not used:
        return 0
    minimum: int | None = None
    for toleration in used:
        seconds = toleration.toleration_seconds
        if seconds is None:
            continue
        if seconds <= 0:
            return 0
        if minimum is None or seconds < minimum:
            minimum = seconds
    return FOREVER if minimum is None else minimum


@dataclass(frozen=True, slots=True)
class Decision:
    """processPodOnNode's verdict for one pod against one set of NoExecute taints."""

    kind: str  # "immediate" | "never" | "after"
    seconds: int = 0  # for "after": the minimum tolerationSeconds
    taint: Taint | None = None  # the untolerated taint, or the one whose toleration set m
    # why: "untolerated" | "seconds" (tolerationSeconds, <= 0 meaning now) | "forever"
    # (tolerated for ever) | "untainted" (no NoExecute taint)
    cause: str = "untainted"

    @property
    def forever(self) -> bool:
        return self.cause == "forever"


def pod_decision(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> Decision:
    """The stateless core of processPodOnNode (k8s 1.35) for NoExecute ``taints``."""
    taints = no_execute_taints(taints)
    if not taints:
        return Decision("never")
    all_tolerated, used = get_matching_tolerations(taints, tolerations)
    if not all_tolerated:
        return Decision("immediate", taint=taints[used.index(None)], cause="untolerated")
    seconds = get_min_toleration_time(used)
    if seconds < 0:
        return Decision("never", cause="forever")
    decisive = None
    for taint, toleration in zip(taints, used, strict=True):
        ts = toleration.toleration_seconds if toleration is not None else None
        if ts is not None and (ts <= 0 or ts == seconds):
            decisive = taint
            break
    if seconds == 0:
        return Decision("immediate", taint=decisive, cause="seconds")
    return Decision("after", seconds=seconds, taint=decisive, cause="seconds")


@dataclass(slots=True)
class _Work:
    created_at: int
    fire_at: int
    decision: Decision


class TaintEvictionQueue:
    """The taint eviction controller's scheduled deletions (TimedWorkerQueue), per pod key,
    with processPodOnNode's rules for keeping or replacing them (k8s 1.35):

    * no NoExecute taints → cancel (handleNodeUpdate's short-circuit);
    * some taint untolerated → cancel and delete now;
    * tolerated forever → cancel;
    * else m seconds (0 when a used toleration has tolerationSeconds <= 0): an existing
      deletion created at C is kept when C + m < now + m (its fire time does not move, even
      when the new one would fire sooner); otherwise it is replaced by one firing at now + m.
    """

    def __init__(self) -> None:
        self.work: dict[str, _Work] = {}

    def process_pod_on_node(
        self, pod_key: str, tolerations: Sequence[Toleration], taints: Sequence[Taint], now: int
    ) -> Decision:
        decision = pod_decision(taints, tolerations)
        if decision.kind == "never":
            self.work.pop(pod_key, None)
            return decision
        if decision.cause == "untolerated":
            self.work[pod_key] = _Work(now, now, decision)
            return decision
        trigger = now + decision.seconds * SECOND
        start = now
        existing = self.work.get(pod_key)
        if existing is not None:
            start = existing.created_at
            if start + decision.seconds * SECOND < trigger:
                return decision
            del self.work[pod_key]
        self.work[pod_key] = _Work(start, trigger, decision)
        return decision

    def scheduled(self, pod_key: str) -> tuple[int, int, Decision] | None:
        work = self.work.get(pod_key)
        return None if work is None else (work.created_at, work.fire_at, work.decision)


@dataclass(frozen=True, slots=True)
class EvictionOutcome:
    """When the taint eviction controller deletes one pod, and why."""

    evict_at: int | None  # Unix ns; None = never
    decision: Decision  # the decision that fixed the outcome
    decided_at: int | None  # when that decision was taken (the countdown start for "after")
    cancelled: bool  # None because every NoExecute taint went away


def replay_pod(
    events: Sequence[tuple[int, tuple[Taint, ...]]],
    tolerations: Sequence[Toleration],
    seen_from: int | None = None,
) -> EvictionOutcome:
    """Replay a node's NoExecute taint history through processPodOnNode for one pod.

    ``events`` are (time, the node's NoExecute taints from then on), in time order, each a
    node update the taint eviction controller handles at that time. A pod first seen at
    ``seen_from`` (it was bound after some events) is evaluated then against the taints of
    that moment. A scheduled deletion fires at its fire time if that comes no later than the
    next event.
    """
    queue = TaintEvictionQueue()
    key = "pod"
    last = Decision("never")
    last_at: int | None = None
    current: tuple[Taint, ...] = ()
    timeline: list[tuple[int, tuple[Taint, ...]]] = []
    for t, taints in events:
        if seen_from is not None and t < seen_from:
            current = taints
            continue
        timeline.append((t, taints))
    if seen_from is not None and current and (not timeline or timeline[0][0] > seen_from):
        timeline.insert(0, (seen_from, current))
    for t, taints in timeline:
        scheduled = queue.scheduled(key)
        if scheduled is not None and scheduled[1] <= t:
            return EvictionOutcome(scheduled[1], scheduled[2], scheduled[0], False)
        if not taints:
            queue.work.pop(key, None)
            last, last_at = Decision("never"), t
            continue
        decision = queue.process_pod_on_node(key, tolerations, taints, t)
        scheduled = queue.scheduled(key)
        if scheduled is not None and scheduled[1] <= t:
            return EvictionOutcome(t, scheduled[2], scheduled[0], False)
        last, last_at = decision, t
    scheduled = queue.scheduled(key)
    if scheduled is not None:
        return EvictionOutcome(scheduled[1], scheduled[2], scheduled[0], False)
    return EvictionOutcome(None, last, last_at, not last.forever and last_at is not None)


def _covers(toleration: Toleration, key: str) -> bool:
    return (toleration.key == key or toleration.key == "") and (
        toleration.effect == NO_EXECUTE or toleration.effect == ""
    )


def default_toleration_seconds(
    tolerations: Sequence[Toleration],
    not_ready_seconds: int = 300,
    unreachable_seconds: int = 300,
) -> tuple[Toleration, ...]:
    """DefaultTolerationSeconds admission (kube-apiserver, k8s 1.35).

    A toleration covers not-ready when its key is node.kubernetes.io/not-ready or empty AND
    its effect is NoExecute or empty (operator, value and seconds are not looked at); same
    for unreachable. Whatever is not covered is appended, not-ready first, as
    {key, operator: Exists, effect: NoExecute, tolerationSeconds: 300}.
    """
    has_not_ready = any(_covers(t, NOT_READY_TAINT_KEY) for t in tolerations)
    has_unreachable = any(_covers(t, UNREACHABLE_TAINT_KEY) for t in tolerations)
    if has_not_ready and has_unreachable:
        return tuple(tolerations)
    result = list(tolerations)
    if not has_not_ready:
        result.append(
            Toleration(
                key=NOT_READY_TAINT_KEY,
                operator="Exists",
                effect=NO_EXECUTE,
                toleration_seconds=not_ready_seconds,
            )
        )
    if not has_unreachable:
        result.append(
            Toleration(
                key=UNREACHABLE_TAINT_KEY,
                operator="Exists",
                effect=NO_EXECUTE,
                toleration_seconds=unreachable_seconds,
            )
        )
    return tuple(result)
