"""The kubelet's critical pod admission handler: which pods it kills so that a critical pod
that failed admission only for lack of resources can run (spec/kubelet.md D.3).

Mirrors pkg/kubelet/preemption/preemption.go as merged up to k8s 1.35 (the open PR #135866,
which regroups victims by priority, is not modelled).

Requirements are ``(resource name, int amount)`` pairs in base units (millicores for cpu,
``pods`` as a count), in the order of the admission failure reasons. A pod's request for a
resource is the kubelet getter ``resource_request`` (pkg/api/v1/resource GetResourceRequest):
``pods`` is 1, overhead counts only when the request is non-zero. Those values are
computed once per pod per call, not once per comparison.

tests/engine/kubelet/test_preemption_differential.py checks the victim search against a
literal re-implementation of upstream (the oracle in tests/engine/kubelet/helpers.py),
itself checked against upstream's cases.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import accumulate, chain
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
from service.engine.resources import kubelet_resource_requests
from service.engine.version import DEFAULT_SETTINGS, EngineSettings

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


# A requirement inside the search: (resource name, column in the request rows, amount, the
# amount as float).
_Need = tuple[str, int, int, float]


def _sort_pods_by_qos(
    preemptor: Pod, pods: Sequence[Pod], names: list[str], settings: EngineSettings
) -> tuple[list[list[Pod]], list[list[tuple[int, ...]]]]:
    """sortPodsByQOS (k8s 1.35): the pods ``preemptable`` by the preemptor, split into
    best-effort, burstable and guaranteed, each keeping the input order; with, for each pod,
    its ``resource_request`` for each of ``names`` (a row), computed once.

    The getter's rules: ``pods`` is 1; otherwise the value of ``kubelet_resource_requests``
    plus the overhead for that name when the value is not 0. For the common shape (one
    container, no init containers, no pod-level resources) ``kubelet_resource_requests`` is
    that container's requests, read in place."""
    classes: dict[str, int] = {BEST_EFFORT: 0, BURSTABLE: 1, GUARANTEED: 2}
    grouped: list[list[Pod]] = [[], [], []]
    rows: list[list[tuple[int, ...]]] = [[], [], []]
    zeros = [0] * len(names)
    defaults = [1 if name == "pods" else 0 for name in names]  # ``pods`` is always 1
    pods_column = names.index("pods") if "pods" in names else -1
    critical = is_critical_pod(preemptor)
    for pod in pods:
        # preemptable() starts with this test; asking it only when it fails saves a call.
        if not (critical and not is_critical_pod(pod)) and not preemptable(preemptor, pod):
            continue
        k = classes.get(get_pod_qos(pod, settings=settings))
        if k is None:
            continue
        containers = pod.containers
        if pod.resources is None and not pod.init_containers and len(containers) == 1:
            requests = containers[0].requests
        else:
            requests = kubelet_resource_requests(pod, settings=settings)
        overhead = pod.overhead
        if overhead or (pods_column >= 0 and "pods" in requests):
            values = list(map(requests.get, names, zeros))
            for i, name in enumerate(names):
                if values[i] and name in overhead:
                    values[i] += overhead[name]
            if pods_column >= 0:
                values[pods_column] = 1
            row = tuple(values)
        else:
            row = tuple(map(requests.get, names, defaults))
        rows[k].append(row)
        grouped[k].append(pod)
    return grouped, rows


def _needs_error(needs: list[_Need]) -> PreemptionError:
    return PreemptionError([(name, q) for name, _, q, _ in needs])


def _subtract(needs: list[_Need], *groups: list[tuple[int, ...]]) -> list[_Need]:
    """admissionRequirementList.subtract (k8s 1.35) of the pods of ``groups`` (request rows,
    in order): upstream takes pod after pod off an amount, stops once it is <= 0 and then
    drops the requirement (after one pod at least, when there is one). So a requirement
    stays exactly when the amount minus every running sum (or 0, without pods) is above 0,
    and is then the amount minus the whole column."""
    rows = list(chain.from_iterable(groups))
    out: list[_Need] = []
    for name, col, q, _ in needs:
        sums = list(accumulate(map(itemgetter(col), rows))) or [0]
        if max(sums) < q:
            out.append((name, col, q - sums[-1], float(q - sums[-1])))
    return out


def _distances(amounts: list[_Need], keys: list[tuple[int, ...]]) -> list[float]:
    """admissionRequirementList.distance (k8s 1.35) of each of ``keys`` (requests, one per
    requirement): over the requirements a key does not cover, the sum of ((q - request) /
    q)^2 in float64, in requirement order. ``(q - v) / fq`` is Go's float64(q - request) /
    float64(q); ``r * r`` rounds once, as math.Pow(r, 2) does; a term left out adds 0.0,
    which changes no sum. A term only shrinks as its request grows."""
    if len(amounts) == 1:  # one pass for the common cases
        ((_, _, q, fq),) = amounts
        return [r * r if r > 0 else 0.0 for (a,) in keys for r in [(q - a) / fq]]
    if len(amounts) == 2:
        (_, _, q, fq), (_, _, p, fp) = amounts
        return [
            (r * r if r > 0 else 0.0) + (s * s if s > 0 else 0.0)
            for a, b in keys
            for r, s in [((q - a) / fq, (p - b) / fp)]
        ]
    out: list[float] = []
    for (_, _, q, fq), column in zip(amounts, zip(*keys, strict=True), strict=True):
        terms = [r * r if r > 0 else 0.0 for v in column for r in [(q - v) / fq]]
        out = list(map(add, out, terms)) if out else terms
    return out


def _next_below(values: list[int]) -> dict[int, int]:
    """For each of ``values`` but the smallest, the next smaller distinct one."""
    ascending = sorted(set(values))
    return dict(zip(ascending[1:], ascending, strict=False))


class _Nearest:
    """The request rows left, grouped by their requests for one set of requirements (their
    columns ``cols``; a key): finds the keys at the smallest distance.

    With one or two requirements it computes only the staircase: the keys no other key
    covers (at least as large for every requirement), i.e., along the keys sorted largest
    first, those whose last request beats every one before. A key off it is covered by one
    on it, every term only shrinking as its request grows, so it is no nearer."""

    def __init__(self, rows: list[tuple[int, ...]], cols: list[int]) -> None:
        self.cols = cols
        self.rows: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
        for row in rows:
            self.rows.setdefault(self.key(row), []).append(row)
        self.sky: list[int] | None = None  # positions in ``order``
        if len(cols) > 2:
            return
        self.order = sorted(self.rows, reverse=True)
        self.rank = {key: j for j, key in enumerate(self.order)}
        self.lasts = [key[-1] for key in self.order]  # -inf once a key is gone
        self.below = [_next_below(list(values)) for values in zip(*self.order, strict=True)]
        self.lowered: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
        self.sky = self._records(0, len(self.order), -math.inf)
        self.sky_keys = list(map(self.order.__getitem__, self.sky))

    def key(self, row: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(map(row.__getitem__, self.cols))

    def _records(self, start: int, stop: int, floor: float) -> list[int]:
        """The positions in ``order[start:stop]`` whose last request is above ``floor`` and
        every one before them in the stretch: the first largest, then those before it."""
        found = []
        lasts = self.lasts
        while start < stop:
            top = max(lasts[start:stop])
            if top <= floor:
                break
            stop = lasts.index(top, start, stop)
            found.append(stop)
        return found[::-1]

    def nearest(self, amounts: list[_Need]) -> tuple[float, list[tuple[int, ...]]]:
        """The smallest distance of a key left and the keys at it.

        A key off the staircase ties with one covering it only through float rounding (or
        terms dropped at 0); the covering key with one request lowered to the next smaller
        one of any key then ties too, lying between the two (terms and float sums are
        monotone). When such a lowered key ties, every key left is computed."""
        if self.sky is not None:
            keys = self.sky_keys
            distances = _distances(amounts, keys)
            best = min(distances)
            if distances.count(best) == 1:
                tied = [keys[distances.index(best)]]
                lowered = self._lowered(tied[0])
            else:
                tied = [key for key, dist in zip(keys, distances, strict=True) if dist == best]
                lowered = [low for key in tied for low in self._lowered(key)]
            if not lowered or best not in _distances(amounts, lowered):
                return best, tied
        keys = list(self.rows)
        distances = _distances(amounts, keys)
        best = min(distances)
        return best, [key for key, dist in zip(keys, distances, strict=True) if dist == best]

    def _lowered(self, key: tuple[int, ...]) -> list[tuple[int, ...]]:
        """``key`` with one request lowered to the next smaller one of any key, for each
        request that has one (kept, as a key is often nearest several rounds running)."""
        found = self.lowered.get(key)
        if found is None:
            found = self.lowered[key] = [
                (*key[:t], below[key[t]], *key[t + 1 :])
                for t, below in enumerate(self.below)
                if key[t] in below
            ]
        return found

    def gone(self, row: tuple[int, ...]) -> None:
        """``row`` has no candidate left. A key left without rows leaves the staircase,
        and the keys it alone covered (up to the next staircase key) come up."""
        key = self.key(row)
        rows = self.rows[key]
        rows.remove(row)
        if rows:
            return
        del self.rows[key]
        if self.sky is None:
            return
        j = self.rank[key]
        self.lasts[j] = -math.inf
        sky = self.sky
        if j in sky:
            p = sky.index(j)
            floor = self.lasts[sky[p - 1]] if p else -math.inf
            stop = sky[p + 1] if p + 1 < len(sky) else len(self.order)
            sky[p : p + 1] = self._records(j + 1, stop, floor)
            self.sky_keys = list(map(self.order.__getitem__, sky))


def _by_distance(
    rows: list[tuple[int, ...]], keys: tuple[int, int], needs: list[_Need]
) -> list[int]:
    """getPodsToPreemptByDistance (k8s 1.35) on request rows and requirements (amounts
    above 0); ``keys`` are the memory and cpu columns. Returns the row indices in pick
    order.

    Upstream, each round scans the candidates in order from a best distance of
    len(requirements) + 1 at index 0, replaced by a strictly smaller distance or by an
    equal one when smallerResourceRequest (memory, then cpu; a full tie counts as
    smaller); the best is subtracted from the requirements and swap-removed (the last
    candidate moves into its slot, which changes the scan order of the next rounds). So a
    round picks the LAST candidate in scan order with the smallest (distance, memory,
    cpu), where the one at index 0 counts at a distance of at most len(requirements) + 1
    (only a negative request puts it farther). ``_Nearest`` finds the nearest rows; only
    they are compared on memory, cpu and scan position.
    """
    memory, cpu = keys
    members: dict[tuple[int, ...], list[int]] = {}  # per distinct row, its candidates left
    for i, row in enumerate(rows):
        members.setdefault(row, []).append(i)
    order = list(range(len(rows)))  # upstream's scan order
    position = list(range(len(rows)))
    picks: list[int] = []
    near: _Nearest | None = None
    while needs:
        if not order:
            raise _needs_error(needs)
        if near is None:
            live = [row for row, group in members.items() if group]
            near = _Nearest(live, [col for _, col, _, _ in needs])
        best, tied = near.nearest(needs)
        nearest = near.rows[tied[0]] if len(tied) == 1 else [r for k in tied for r in near.rows[k]]
        group = (
            members[nearest[0]]
            if len(nearest) == 1
            else [i for row in nearest for i in members[row]]
        )
        first = order[0]
        limit = len(needs) + 1
        if best >= limit and _distances(needs, [near.key(rows[first])])[0] > limit:
            # Upstream's initial best stands for index 0, at ``limit``.
            group = [first] if best > limit else [*group, first]
            nearest = []
        if len(nearest) != 1 and len(group) > 1:
            low = min([(rows[i][memory], rows[i][cpu]) for i in group])
            group = [i for i in group if (rows[i][memory], rows[i][cpu]) == low]
        chosen = group[0] if len(group) == 1 else max(group, key=position.__getitem__)
        picks.append(chosen)
        row = rows[chosen]
        members[row].remove(chosen)
        if not members[row]:
            near.gone(row)
        at = position[chosen]
        moved = order.pop()
        if moved != chosen:
            order[at] = moved
            position[moved] = at
        left = [(name, col, r, float(r)) for name, col, q, _ in needs if (r := q - row[col]) > 0]
        if len(left) != len(needs):
            near = None  # it was for the requirements of before
        needs = left
    return picks


def get_pods_to_preempt(
    preemptor: Pod,
    pods: Sequence[Pod],
    requirements: Sequence[Requirement],
    *,
    settings: EngineSettings = DEFAULT_SETTINGS,
) -> list[Pod]:
    """getPodsToPreempt (pkg/kubelet/preemption, k8s 1.35): the pods to kill, in kill order,
    so that ``requirements`` are freed; raises ``PreemptionError`` when impossible.

    Only pods ``preemptable`` by the preemptor count, split by QoS keeping input order. The
    guaranteed pods needed even if every best-effort and burstable pod went are chosen
    first, then the burstable pods needed besides best-effort and those guaranteed ones,
    then the best-effort pods needed besides the chosen burstable and guaranteed ones; each
    phase picks by distance (``_by_distance``). Result: best-effort + burstable +
    guaranteed picks. Every pod's requests for the requirement names, memory and cpu are
    computed once, as an int row; the phases work on those rows.
    """
    requirements = list(requirements)
    names = list(dict.fromkeys([name for name, _ in requirements] + ["memory", "cpu"]))
    column = {name: i for i, name in enumerate(names)}
    needs: list[_Need] = [(name, column[name], q, float(q)) for name, q in requirements]
    keys = (column["memory"], column["cpu"])
    (best_effort, burstable, guaranteed), (be_rows, bu_rows, gu_rows) = _sort_pods_by_qos(
        preemptor, pods, names, settings
    )
    unmet = _subtract(needs, be_rows, bu_rows, gu_rows)
    if unmet:
        raise _needs_error(unmet)
    needed = _subtract(needs, be_rows, bu_rows)
    gu_picks = _by_distance(gu_rows, keys, needed)
    gu_picked = [gu_rows[i] for i in gu_picks]
    needed = _subtract(needs, be_rows, gu_picked)
    bu_picks = _by_distance(bu_rows, keys, needed)
    bu_picked = [bu_rows[i] for i in bu_picks]
    needed = _subtract(needs, bu_picked, gu_picked)
    be_picks = _by_distance(be_rows, keys, needed)
    return (
        [best_effort[i] for i in be_picks]
        + [burstable[i] for i in bu_picks]
        + [guaranteed[i] for i in gu_picks]
    )


class AdmissionFailureOutcome:
    """What the critical pod admission handler makes of a failed admission.

    ``reasons``: the failure reasons still standing (empty: the pod is admitted);
    ``victims``: the pods killed first, in kill order; ``requirements``: what had to be
    freed; ``error``: set when no set of pods frees enough (the pod is then rejected with
    UnexpectedAdmissionError and ``reasons`` is empty)."""

    __slots__ = ("error", "reasons", "requirements", "victims")

    def __init__(
        self,
        reasons: list,
        victims: list[Pod] | None = None,
        requirements: list[Requirement] | None = None,
        error: PreemptionError | None = None,
    ) -> None:
        self.reasons = reasons
        self.victims = victims or []
        self.requirements = requirements or []
        self.error = error

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
    settings: EngineSettings = DEFAULT_SETTINGS,
) -> AdmissionFailureOutcome:
    """CriticalPodAdmissionHandler.HandleAdmissionFailure (k8s 1.35).

    A non-critical pod keeps its reasons. A critical pod with any non-resource reason keeps
    only those (nothing is preempted). A critical pod failing only for resources gets the
    pods of ``get_pods_to_preempt`` killed, one requirement per reason (the insufficient
    amount: requested - (capacity - used)), and is admitted without a re-check of fit.
    ``reasons`` are kubelet.admission reasons (``InsufficientResource`` have
    ``insufficient_amount``).
    """
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
