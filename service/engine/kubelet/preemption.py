"""The kubelet's critical pod admission handler: which pods it kills so that a critical pod
that failed admission only for lack of resources can run.

Mirrors pkg/kubelet/preemption/preemption.go as merged up to k8s 1.35 (the open PR #135866,
which regroups victims by priority, is not modelled).

Requirements are ``(resource name, int amount)`` pairs in base units, in the order of the
admission failure reasons. tests/engine/kubelet/test_preemption_differential.py checks the
victim search against upstream's plain scan (the oracle in tests/engine/kubelet/helpers.py),
itself checked against upstream's cases.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from operator import add, itemgetter

from service.engine.objects import Pod
from service.engine.qos import (
    BEST_EFFORT,
    BURSTABLE,
    GUARANTEED,
    get_pod_qos,
    is_critical_pod,
    preemptable,
)
from service.engine.quantity import wrap_int64
from service.engine.resize import as_allocated
from service.engine.resources import kubelet_resource_requests
from service.engine.version import EngineSettings

__all__ = [
    "PREEMPTION_MESSAGE",
    "PREEMPTION_REASON",
    "AdmissionFailureOutcome",
    "PreemptionError",
    "Requirement",
    "get_pods_to_preempt",
    "handle_admission_failure",
    "requirements_to_string",
]

Requirement = tuple[str, int]

# What a preempted pod's status says (events.PreemptContainer, preemption.message).
PREEMPTION_REASON = "Preempting"
PREEMPTION_MESSAGE = "Preempted in order to admit critical pod"


class PreemptionError(Exception):
    """No set of pods frees the requirements. ``remaining`` are the requirements left over,
    ``str(error)`` the kubelet's text ("no set of running pods found to reclaim resources:
    [(res: memory, q: 1048576), ]")."""

    def __init__(self, remaining: Sequence[Requirement]) -> None:
        self.remaining = list(remaining)
        super().__init__(
            "no set of running pods found to reclaim resources: "
            + requirements_to_string(self.remaining)
        )


def requirements_to_string(requirements: Sequence[Requirement]) -> str:
    """admissionRequirementList.toString (k8s 1.35): "[(res: cpu, q: 100), ]"."""
    return "[" + "".join(f"(res: {name}, q: {q}), " for name, q in requirements) + "]"


# A requirement inside the search: (resource name, column in the request rows, amount).
_Need = tuple[str, int, int]
_Row = tuple[int, ...]


def _sort_pods_by_qos(
    preemptor: Pod, pods: Sequence[Pod], names: list[str], settings: EngineSettings
) -> tuple[list[list[Pod]], list[list[_Row]]]:
    """sortPodsByQOS (k8s 1.35): the pods ``preemptable`` by the preemptor, split into
    best-effort, burstable and guaranteed, each keeping the input order; with each pod's
    ``resource_request`` for each of ``names`` (a row): ``pods`` is 1, otherwise its
    ``kubelet_resource_requests`` (for one plain container, that container's requests)
    plus the overhead when not 0. The pods are the allocation manager's (``OtherPods`` of
    the admit attributes are ``getAllocatedPods``' from v1.33), so a resized pod's row
    holds what the kubelet allocated it (``resize.as_allocated``), not its spec's new
    requests nor what the runtime actuated: ``GetResourceRequest`` reads the spec only."""
    classes: dict[str, int] = {BEST_EFFORT: 0, BURSTABLE: 1, GUARANTEED: 2}
    grouped: list[list[Pod]] = [[], [], []]
    rows: list[list[_Row]] = [[], [], []]
    zeros = [0] * len(names)
    defaults = [1 if name == "pods" else 0 for name in names]  # ``pods`` is always 1
    asks_pods = "pods" in names
    critical = is_critical_pod(preemptor)
    for pod in pods:
        # preemptable() starts with this test; asking it only when it fails saves a call.
        if not (critical and not is_critical_pod(pod)) and not preemptable(preemptor, pod):
            continue
        k = classes.get(get_pod_qos(pod, settings=settings))
        if k is None:
            continue
        allocated = as_allocated(pod, settings)
        containers = allocated.containers
        if allocated.resources is None and not allocated.init_containers and len(containers) == 1:
            requests = containers[0].requests
        else:
            requests = kubelet_resource_requests(allocated, settings=settings)
        overhead = pod.overhead
        row = tuple(map(requests.get, names, defaults))
        if overhead or (asks_pods and "pods" in requests):
            row = tuple(
                1 if name == "pods" else v + overhead[name] if v and name in overhead else v
                for name, v in zip(names, map(requests.get, names, zeros), strict=True)
            )
        rows[k].append(row)
        grouped[k].append(pod)
    return grouped, rows


def _subtract(needs: list[_Need], rows: list[_Row]) -> list[_Need]:
    """admissionRequirementList.subtract (k8s 1.35) of the pods of ``rows``, in order:
    upstream takes pod after pod off an amount, stops once it is <= 0 and then drops the
    requirement (after one pod at least, when there is one). So a requirement stays exactly
    when the amount minus every running sum (or 0, without pods) is above 0; without a
    negative request, the largest running sum is the total."""
    out: list[_Need] = []
    for name, col, q in needs:
        column = list(map(itemgetter(col), rows))
        total = sum(column)
        if total < q and (min(column, default=0) >= 0 or max(accumulate(column)) < q):
            out.append((name, col, q - total))
    return out


def _distances(needs: list[_Need], keys: list[_Row]) -> list[float]:
    """admissionRequirementList.distance (k8s 1.35) of each of ``keys`` (requests, one per
    requirement): over the requirements a key does not cover, the sum of ((q - request) /
    q)^2 in float64, in requirement order. ``(q - v) / float(q)`` is Go's float64(q -
    request) / float64(q); ``r * r`` rounds once, as math.Pow(r, 2) does; a term left out
    adds 0.0, which changes no sum. A term only shrinks as its request grows."""
    if len(needs) == 1:  # written out: the common cases
        ((_, _, q),) = needs
        fq = float(q)
        return [r * r if r > 0 else 0.0 for (a,) in keys for r in [(q - a) / fq]]
    if len(needs) == 2:
        (_, _, q), (_, _, p) = needs
        fq, fp = float(q), float(p)
        return [
            (r * r if r > 0 else 0.0) + (s * s if s > 0 else 0.0)
            for a, b in keys
            for r, s in [((q - a) / fq, (p - b) / fp)]
        ]
    out: list[float] = []
    for (_, _, q), column in zip(needs, zip(*keys, strict=True), strict=True):
        fq = float(q)
        terms = [r * r if r > 0 else 0.0 for v in column for r in [(q - v) / fq]]
        out = list(map(add, out, terms)) if out else terms
    return out


class _Nearest:
    """Finds the candidates left (indices of ``rows``) at the smallest distance to the
    requirements of columns ``cols``; a candidate's requests for them are its key.

    With one or two requirements only the staircase is computed: the keys no other key
    covers (at least as large for each), i.e., along the keys sorted largest first, those
    whose last request beats every one before. A covered key is no nearer, as every term
    only shrinks as its request grows. With more, every candidate is computed."""

    def __init__(
        self, rows: list[_Row], live: list[int], cols: list[int], tiebreak: list[_Row], same: bool
    ) -> None:
        self.tiebreak = tiebreak  # each row's memory and cpu requests
        self.same = same  # whether a key fixes them
        self.key_of = list(zip(*[list(map(itemgetter(c), rows)) for c in cols], strict=True))
        self.staircase = len(cols) <= 2
        if not self.staircase:
            return
        self.groups: dict[_Row, list[int]] = {}  # the candidates left of each key
        for i in live:
            self.groups.setdefault(self.key_of[i], []).append(i)
        self.order = sorted(self.groups, reverse=True)
        self.rank = {key: j for j, key in enumerate(self.order)}
        self.lasts = [key[-1] for key in self.order]  # -inf once a key is gone
        self.columns = [sorted(values) for values in zip(*self.order, strict=True)]
        self.lowered: dict[_Row, list[_Row]] = {}
        self.sky = self._records(0, len(self.order), -math.inf)

    def _records(self, start: int, stop: int, floor: float) -> list[_Row]:
        """The keys in ``order[start:stop]`` whose last request is above ``floor`` and every
        one before them in the stretch: the first largest, then those before it."""
        found = []
        lasts = self.lasts
        while start < stop:
            top = max(lasts[start:stop])
            if top <= floor:
                break
            stop = lasts.index(top, start, stop)
            found.append(self.order[stop])
        return found[::-1]

    def pick(self, needs: list[_Need], order: list[int], position: list[int]) -> int:
        """The round's pick (see ``_by_distance``), taken out of the candidates left.

        A key off the staircase ties with one covering it only through float rounding (or
        terms dropped at 0); the covering key with one request lowered to the next smaller
        one of any key then ties too, lying between the two (terms and float sums are
        monotone). When such a lowered key ties, every candidate is computed."""
        group = None
        if self.staircase:
            sky = self.sky
            distances = _distances(needs, sky)
            best = min(distances)
            if distances.count(best) == 1:
                tied = [sky[distances.index(best)]]
                lowered = self.lowered.get(tied[0]) or self._lowered(tied[0])
            else:
                tied = [key for key, d in zip(sky, distances, strict=True) if d == best]
                lowered = [low for key in tied for low in self._lowered(key)]
            if not lowered or best not in _distances(needs, lowered):
                if len(tied) == 1:
                    group, same = self.groups[tied[0]], self.same
                else:
                    group, same = [i for key in tied for i in self.groups[key]], False
        if group is None:
            distances = _distances(needs, list(map(self.key_of.__getitem__, order)))
            best = min(distances)
            group, same = [i for i, d in zip(order, distances, strict=True) if d == best], False
        limit = len(needs) + 1
        if best >= limit and _distances(needs, [self.key_of[order[0]]])[0] > limit:
            # Upstream's initial best stands for index 0, at ``limit``.
            group, same = [order[0]] if best > limit else [*group, order[0]], False
        if len(group) > 1 and not same:  # those with the smallest memory and cpu requests
            ties = list(map(self.tiebreak.__getitem__, group))
            low = min(ties)
            group = [i for i, tie in zip(group, ties, strict=True) if tie == low]
        chosen = group[0] if len(group) == 1 else max(group, key=position.__getitem__)
        self.remove(chosen)
        return chosen

    def _lowered(self, key: _Row) -> list[_Row]:
        """``key`` with one request lowered to the next smaller one of any key, for each
        request that has one (kept, as a key is often nearest several rounds running)."""
        found = self.lowered.get(key)
        if found is None:
            found = self.lowered[key] = [
                (*key[:t], values[j - 1], *key[t + 1 :])
                for t, values in enumerate(self.columns)
                if (j := bisect_left(values, key[t]))
            ]
        return found

    def remove(self, i: int) -> None:
        """Candidate ``i`` was picked. A key left without candidates leaves the staircase,
        and the keys it alone covered (up to the next staircase key) come up."""
        if not self.staircase:
            return
        key = self.key_of[i]
        group = self.groups[key]
        group.remove(i)
        if group:
            return
        del self.groups[key]
        j = self.rank[key]
        self.lasts[j] = -math.inf
        sky = self.sky
        if key in sky:
            p = sky.index(key)
            floor = sky[p - 1][-1] if p else -math.inf
            stop = self.rank[sky[p + 1]] if p + 1 < len(sky) else len(self.order)
            sky[p : p + 1] = self._records(j + 1, stop, floor)


def _by_distance(rows: list[_Row], needs: list[_Need], memory: int, cpu: int) -> list[int]:
    """getPodsToPreemptByDistance (k8s 1.35) on request rows (``memory`` and ``cpu`` are
    their columns) and requirements above 0: the row indices in pick order.

    Upstream's round scans the candidates from a best distance of len(requirements) + 1 at
    index 0, taking a smaller distance, or an equal one when smallerResourceRequest (memory,
    then cpu; a full tie counts), then swap-removes the pick (the last candidate moves into
    its slot). So a round picks the last candidate in scan order with the smallest
    (distance, memory, cpu), index 0 counting at most len(requirements) + 1 (only a
    negative request puts it farther)."""
    order = list(range(len(rows)))  # upstream's scan order
    position = list(range(len(rows)))
    tiebreak = list(map(itemgetter(memory, cpu), rows))
    picks: list[int] = []
    near: _Nearest | None = None
    while needs:
        if not order:
            raise PreemptionError([(name, q) for name, _, q in needs])
        if near is None:
            cols = [col for _, col, _ in needs]
            near = _Nearest(rows, order, cols, tiebreak, memory in cols and cpu in cols)
        chosen = near.pick(needs, order, position)
        picks.append(chosen)
        at = position[chosen]
        moved = order.pop()
        if moved != chosen:
            order[at] = moved
            position[moved] = at
        row = rows[chosen]
        left = [(name, col, r) for name, col, q in needs if (r := q - row[col]) > 0]
        if len(left) != len(needs):
            near = None  # it was for the requirements of before
        needs = left
    return picks


def get_pods_to_preempt(
    preemptor: Pod,
    pods: Sequence[Pod],
    requirements: Sequence[Requirement],
    *,
    settings: EngineSettings,
) -> list[Pod]:
    """getPodsToPreempt (pkg/kubelet/preemption, k8s 1.35): the pods to kill, in kill order,
    so that ``requirements`` are freed; raises ``PreemptionError`` when impossible.

    Of the pods ``preemptable`` by the preemptor, by QoS: the guaranteed pods needed even if
    every best-effort and burstable pod went, then the burstable pods needed besides every
    best-effort pod and those, then the best-effort pods still needed; each phase picks by
    distance. Each pod's requests are read once, as a row."""
    names = list(dict.fromkeys([name for name, _ in requirements] + ["memory", "cpu"]))
    needs: list[_Need] = [(name, names.index(name), q) for name, q in requirements]
    memory, cpu = names.index("memory"), names.index("cpu")
    pods_by_qos, (be, bu, gu) = _sort_pods_by_qos(preemptor, pods, names, settings)
    unmet = _subtract(needs, be + bu + gu)
    if unmet:
        raise PreemptionError([(name, q) for name, _, q in unmet])
    gu_picks = _by_distance(gu, _subtract(needs, be + bu), memory, cpu)
    gu_picked = [gu[i] for i in gu_picks]
    bu_picks = _by_distance(bu, _subtract(needs, be + gu_picked), memory, cpu)
    be_picks = _by_distance(
        be, _subtract(needs, [bu[i] for i in bu_picks] + gu_picked), memory, cpu
    )
    picks = (be_picks, bu_picks, gu_picks)
    return [qos[i] for qos, chosen in zip(pods_by_qos, picks, strict=True) for i in chosen]


@dataclass(frozen=True, slots=True)
class AdmissionFailureOutcome:
    """What the critical pod admission handler makes of a failed admission: the failure
    ``reasons`` still standing (empty: the pod is admitted), the ``victims`` killed first,
    in kill order, the ``requirements`` to free, and the ``error`` when no set of pods frees
    them (the pod is then rejected with UnexpectedAdmissionError)."""

    reasons: list
    victims: list[Pod] = field(default_factory=list)
    requirements: list[Requirement] = field(default_factory=list)
    error: PreemptionError | None = None

    @property
    def error_message(self) -> str | None:
        """evictPodsToFreeRequests' wrapped error text."""
        if self.error is None:
            return None
        return f"preemption: error finding a set of pods to preempt: {self.error}"


def handle_admission_failure(
    admit_pod: Pod,
    reasons: Sequence,
    active_pods: Sequence[Pod],
    *,
    settings: EngineSettings,
) -> AdmissionFailureOutcome:
    """CriticalPodAdmissionHandler.HandleAdmissionFailure (k8s 1.35) on kubelet.admission
    reasons. A non-critical pod keeps its reasons; a critical pod with any non-resource
    reason keeps only those; a critical pod failing only for resources gets the pods of
    ``get_pods_to_preempt`` killed, one requirement per reason (its insufficient amount),
    and is admitted without a re-check of fit."""
    if not is_critical_pod(admit_pod):
        return AdmissionFailureOutcome(list(reasons))
    resource_reasons = [r for r in reasons if r.is_resource]
    other_reasons = [r for r in reasons if not r.is_resource]
    if other_reasons:
        return AdmissionFailureOutcome(other_reasons)
    # GetInsufficientAmount is int64 arithmetic: requested - (capacity - used) wraps in Go
    # (a wrapped node sum, a capacity near 2^63-1), and a requirement that wraps to 0 or
    # below is dropped by admissionRequirementList.subtract like any met one.
    requirements = [(r.resource, wrap_int64(r.insufficient_amount)) for r in resource_reasons]
    try:
        victims = get_pods_to_preempt(admit_pod, active_pods, requirements, settings=settings)
    except PreemptionError as exc:
        return AdmissionFailureOutcome([], requirements=requirements, error=exc)
    return AdmissionFailureOutcome([], victims=victims, requirements=requirements)
