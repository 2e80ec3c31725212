"""The kubelet's critical pod admission handler: which pods it kills so that a critical pod
that failed admission only for lack of resources can run (spec/kubelet.md D.3).

Mirrors pkg/kubelet/preemption/preemption.go as merged up to k8s 1.35 (the open PR #135866,
which regroups victims by priority, is not modelled).

Requirements are ``(resource name, int amount)`` pairs in base units (millicores for cpu,
``pods`` as a count), in the order of the admission failure reasons. A pod's request for a
resource is the kubelet getter ``resource_request`` (pkg/api/v1/resource GetResourceRequest):
``pods`` is 1, overhead counts only when the request is non-zero. Those values are
computed once per pod per call, not once per comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain

from service.engine.objects import Pod
from service.engine.qos import (
    BEST_EFFORT,
    BURSTABLE,
    GUARANTEED,
    get_pod_qos,
    is_critical_pod,
    preemptable,
)
from service.engine.resources import kubelet_resource_requests, resource_request
from service.engine.version import DEFAULT_SETTINGS, EngineSettings

__all__ = [
    "PREEMPTION_MESSAGE",
    "PREEMPTION_REASON",
    "AdmissionFailureOutcome",
    "PreemptionError",
    "Requirement",
    "distance",
    "get_pods_to_preempt",
    "handle_admission_failure",
    "requirements_to_string",
    "smaller_resource_request",
    "subtract",
]

Requirement = tuple[str, int]

# What a preempted pod's status says (events.PreemptContainer, preemption.message).
PREEMPTION_REASON = "Preempting"
PREEMPTION_MESSAGE = "Preempted in order to admit critical pod"

RequestOf = Callable[[Pod, str], int]


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


def distance(
    requirements: Sequence[Requirement],
    pod: Pod,
    *,
    settings: EngineSettings = DEFAULT_SETTINGS,
    request_of: RequestOf | None = None,
) -> float:
    """admissionRequirementList.distance (k8s 1.35): the sum over requirements the pod does
    not cover alone of ((q - request) / q)^2, in float64 and requirement order; 0 when the
    pod alone covers everything."""
    get = request_of or (lambda p, n: resource_request(p, n, settings=settings))
    dist = 0.0
    for name, q in requirements:
        remaining = float(q - get(pod, name))
        if remaining > 0:
            ratio = remaining / float(q)
            dist += ratio * ratio  # math.Pow(x, 2) is exactly x*x in Go
    return dist


def subtract(
    requirements: Sequence[Requirement],
    pods: Sequence[Pod],
    *,
    settings: EngineSettings = DEFAULT_SETTINGS,
    request_of: RequestOf | None = None,
) -> list[Requirement]:
    """admissionRequirementList.subtract (k8s 1.35): what is still needed once ``pods`` are
    gone; entries that reach <= 0 are dropped, the rest keep their order."""
    get = request_of or (lambda p, n: resource_request(p, n, settings=settings))
    remaining: list[Requirement] = []
    for name, q in requirements:
        left = q
        for pod in pods:
            left -= get(pod, name)
            if left <= 0:
                break
        if left > 0:
            remaining.append((name, left))
    return remaining


def smaller_resource_request(
    pod1: Pod,
    pod2: Pod,
    *,
    settings: EngineSettings = DEFAULT_SETTINGS,
    request_of: RequestOf | None = None,
) -> bool:
    """smallerResourceRequest (k8s 1.35): compare memory, then cpu requests; the first strict
    difference decides; a complete tie is True."""
    get = request_of or (lambda p, n: resource_request(p, n, settings=settings))
    for name in ("memory", "cpu"):
        r1 = get(pod1, name)
        r2 = get(pod2, name)
        if r1 < r2:
            return True
        if r1 > r2:
            return False
    return True


# Request values and requirement amounts from this size on take the plain path: the fast
# one computes with floats, exact only for integers below 2**53 (upstream's are int64).
_FAST_LIMIT = 1 << 53

# A requirement inside the computation: (resource name, column in the request rows, amount).
_Need = tuple[str, int, int]


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
        if overhead or pods_column >= 0:
            row = list(map(requests.get, names, zeros))
            for i, name in enumerate(names):
                if row[i] and name in overhead:
                    row[i] += overhead[name]
            if pods_column >= 0:
                row[pods_column] = 1
            rows[k].append(tuple(row))
        else:
            rows[k].append(tuple(map(requests.get, names, zeros)))
        grouped[k].append(pod)
    return grouped, rows


def _subtract_rows(needs: list[_Need], groups: list[list[tuple[int, ...]]]) -> list[_Need]:
    """``subtract`` of the pods of ``groups`` (in order) from ``needs``, on request rows:
    the upstream loop, which stops at the first amount <= 0."""
    out: list[_Need] = []
    for name, col, q in needs:
        left = q
        for row in chain.from_iterable(groups):
            left -= row[col]
            if left <= 0:
                break
        if left > 0:
            out.append((name, col, left))
    return out


def _subtract_totals(needs: list[_Need], *totals: list[int]) -> list[_Need]:
    """``subtract`` when every request is >= 0, given the column sums of the pods: the
    running amount then only falls, so stopping at the first <= 0 or not ends on the same
    side of 0, and subtracting the sums gives the same result."""
    out: list[_Need] = []
    for name, col, q in needs:
        left = q - sum([total[col] for total in totals])
        if left > 0:
            out.append((name, col, left))
    return out


def _needs_error(needs: list[_Need]) -> PreemptionError:
    return PreemptionError([(name, q) for name, _, q in needs])


def _by_distance_plain(
    rows: list[tuple[int, ...]], keys: tuple[int, int], needs: list[_Need]
) -> list[int]:
    """getPodsToPreemptByDistance (k8s 1.35) scanned literally, for requests outside the
    fast path's range (negative, or 2**53 and more): each round starts from a best distance
    of len(requirements) + 1 at index 0, takes a strictly smaller distance or an equal one
    with a (memory, cpu) request <= the best's (smallerResourceRequest), then subtracts and
    swap-removes the best. ``keys`` are the memory and cpu columns. Returns row indices in
    pick order."""
    memory, cpu = keys
    order = list(range(len(rows)))
    picks: list[int] = []
    while needs:
        if not order:
            raise _needs_error(needs)
        best_distance = float(len(needs) + 1)
        best = 0
        for index, i in enumerate(order):
            row = rows[i]
            dist = 0.0
            for _, col, q in needs:
                shortfall = float(q - row[col])
                if shortfall > 0:
                    ratio = shortfall / float(q)
                    dist += ratio * ratio
            if dist < best_distance or (
                dist == best_distance
                and (row[memory], row[cpu]) <= (rows[order[best]][memory], rows[order[best]][cpu])
            ):
                best_distance = dist
                best = index
        chosen = order[best]
        row = rows[chosen]
        needs = [(name, col, q - row[col]) for name, col, q in needs if q - row[col] > 0]
        picks.append(chosen)
        order[best] = order[-1]
        order.pop()
    return picks


def _distances(
    columns: list[list[float]], tops: list[float], need: list[tuple[int, int]]
) -> list[float]:
    """``distance`` of every live entry to the remaining requirements ((position, amount)
    pairs), from the float columns of the entries' requests (``tops``: an upper bound of
    each column). The two-requirement case, the common one, is written out in
    ``_by_distance``."""
    if len(need) == 1:
        ((t, q),) = need
        fq = float(q)
        column = columns[t]
        if tops[t] < fq:  # no entry covers the requirement: no term to drop
            return [r * r for v in column for r in [(fq - v) / fq]]
        return [r * r if r > 0 else 0.0 for v in column for r in [(fq - v) / fq]]
    out = [0.0] * len(columns[0])
    for t, q in need:
        fq = float(q)
        out = [
            d + r * r if r > 0 else d
            for d, v in zip(out, columns[t], strict=True)
            for r in [(fq - v) / fq]
        ]
    return out


def _by_distance(
    rows: list[tuple[int, ...]], keys: tuple[int, int], needs: list[_Need]
) -> list[int]:
    """getPodsToPreemptByDistance (k8s 1.35) on request rows (integers in [0, 2**53)) and
    requirements (integers in (0, 2**53)); ``keys`` are the memory and cpu columns. Returns
    the row indices in pick order.

    Upstream, each round scans the candidates in order keeping a best one, replaced by a
    strictly smaller ``distance`` or by an equal one when ``smaller_resource_request``
    (memory, then cpu; a full tie counts as smaller); the best is subtracted from the
    requirements and swap-removed (the last candidate moves into its slot, which changes
    the scan order of the next rounds). With requests >= 0 no distance exceeds the number
    of requirements, so the first candidate always replaces the initial best, and the scan
    ends on the LAST candidate in scan order with the smallest (distance, memory, cpu).

    That is computed directly. Candidates with equal rows (the same requests for every
    requirement, memory and cpu) form one entry, whose distance is computed once per round
    for all of them; the smallest (distance, memory, cpu) is found among the live entries,
    and of the candidates of those entries the one last in the scan order wins.

    Distances use float copies of the requests: every value and amount is an integer below
    2**53, so ``fq - v`` is exactly ``float(q - v)``. Each term is ``r * r`` (Go's
    math.Pow(x, 2) rounds once, like that product) and the terms are added in requirement
    order, as upstream does; a term is dropped when ``r`` is not positive, which is skipped
    while no entry's request reaches the amount.
    """
    if not needs:
        return []
    names = [name for name, _, _ in needs]
    cols = [col for _, col, _ in needs]
    memory, cpu = keys
    entry_index: dict[tuple[int, ...], int] = {}
    entry_rows: list[tuple[int, ...]] = []
    members: list[list[int]] = []  # per entry: its candidates (row indices)
    entry_of: list[int] = []
    for i, row in enumerate(rows):
        e = entry_index.get(row)
        if e is None:
            e = entry_index[row] = len(entry_rows)
            entry_rows.append(row)
            members.append([i])
        else:
            members[e].append(i)
        entry_of.append(e)
    # The live entries, compacted by swap-remove: their ids, and per requirement position
    # a float column of their requests; ``tops`` bound each column from above.
    live = list(range(len(entry_rows)))
    slot_of = list(range(len(entry_rows)))
    columns = [[float(row[col]) for row in entry_rows] for col in cols]
    tops = [max(column) for column in columns]

    order = list(range(len(rows)))  # upstream's scan order
    position = list(range(len(rows)))
    remaining = [(t, q) for t, (_, _, q) in enumerate(needs)]
    picks: list[int] = []
    while remaining:
        if not order:
            raise PreemptionError([(names[t], q) for t, q in remaining])
        if len(remaining) == 2:
            (t, q), (u, p) = remaining
            fq = float(q)
            fp = float(p)
            if tops[t] < fq and tops[u] < fp:
                distances = [
                    r * r + s * s
                    for v, w in zip(columns[t], columns[u], strict=True)
                    for r in [(fq - v) / fq]
                    for s in [(fp - w) / fp]
                ]
            else:
                distances = [
                    (r * r if r > 0 else 0.0) + (s * s if s > 0 else 0.0)
                    for v, w in zip(columns[t], columns[u], strict=True)
                    for r in [(fq - v) / fq]
                    for s in [(fp - w) / fp]
                ]
        else:
            distances = _distances(columns, tops, remaining)
        best = min(distances)
        if distances.count(best) == 1:
            group = members[live[distances.index(best)]]
        else:
            tied = [live[s] for s, dist in enumerate(distances) if dist == best]
            low = min([(entry_rows[e][memory], entry_rows[e][cpu]) for e in tied])
            group = [
                i
                for e in tied
                if (entry_rows[e][memory], entry_rows[e][cpu]) == low
                for i in members[e]
            ]
        chosen = group[0] if len(group) == 1 else max(group, key=position.__getitem__)
        picks.append(chosen)
        # Swap-remove from the scan order.
        at = position[chosen]
        moved = order.pop()
        if moved != chosen:
            order[at] = moved
            position[moved] = at
        e = entry_of[chosen]
        group = members[e]
        group.remove(chosen)
        if not group:  # the entry is gone: swap-remove it from the live columns
            slot = slot_of[e]
            last = live.pop()
            for column in columns:
                value = column.pop()
                if last != e:
                    column[slot] = value
            if last != e:
                live[slot] = last
                slot_of[last] = slot
        row = entry_rows[e]
        remaining = [(t, q - row[cols[t]]) for t, q in remaining if q - row[cols[t]] > 0]
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
    phase picks by ``distance`` (ties: ``smaller_resource_request``, the last of equals
    wins). Result: best-effort + burstable + guaranteed picks.

    Every pod's requests for the requirement names, memory and cpu are computed once, as
    an int row; the phases work on those rows.
    """
    requirements = list(requirements)
    names = list(dict.fromkeys([name for name, _ in requirements] + ["memory", "cpu"]))
    column = {name: i for i, name in enumerate(names)}
    needs: list[_Need] = [(name, column[name], q) for name, q in requirements]
    keys = (column["memory"], column["cpu"])
    (best_effort, burstable, guaranteed), classes = _sort_pods_by_qos(
        preemptor, pods, names, settings
    )
    be_rows, bu_rows, gu_rows = classes
    transposed = [list(zip(*rows, strict=True)) for rows in classes]
    fast = all(q < _FAST_LIMIT for _, _, q in needs) and all(
        min(values) >= 0 and max(values) < _FAST_LIMIT
        for columns in transposed
        for values in columns
    )
    if not fast:
        return _get_pods_to_preempt_plain(best_effort, burstable, guaranteed, classes, needs, keys)
    width = len(names)
    be_sum, bu_sum, gu_sum = (
        [sum(values) for values in columns] if columns else [0] * width for columns in transposed
    )
    unmet = _subtract_totals(needs, be_sum, bu_sum, gu_sum)
    if unmet:
        raise _needs_error(unmet)

    def picked_sum(rows: list[tuple[int, ...]], picks: list[int]) -> list[int]:
        return [sum(values) for values in zip(*[rows[i] for i in picks], strict=True)] or [
            0
        ] * width

    guaranteed_picks = _by_distance(gu_rows, keys, _subtract_totals(needs, be_sum, bu_sum))
    gu_picked = picked_sum(gu_rows, guaranteed_picks)
    burstable_picks = _by_distance(bu_rows, keys, _subtract_totals(needs, be_sum, gu_picked))
    bu_picked = picked_sum(bu_rows, burstable_picks)
    best_effort_picks = _by_distance(be_rows, keys, _subtract_totals(needs, bu_picked, gu_picked))
    return (
        [best_effort[i] for i in best_effort_picks]
        + [burstable[i] for i in burstable_picks]
        + [guaranteed[i] for i in guaranteed_picks]
    )


def _get_pods_to_preempt_plain(
    best_effort: list[Pod],
    burstable: list[Pod],
    guaranteed: list[Pod],
    classes: list[list[tuple[int, ...]]],
    needs: list[_Need],
    keys: tuple[int, int],
) -> list[Pod]:
    """``get_pods_to_preempt`` step by step as upstream writes it, for requests outside the
    fast path's range."""
    be_rows, bu_rows, gu_rows = classes
    unmet = _subtract_rows(needs, [be_rows, bu_rows, gu_rows])
    if unmet:
        raise _needs_error(unmet)
    guaranteed_picks = _by_distance_plain(gu_rows, keys, _subtract_rows(needs, [be_rows, bu_rows]))
    gu_picked = [gu_rows[i] for i in guaranteed_picks]
    burstable_picks = _by_distance_plain(bu_rows, keys, _subtract_rows(needs, [be_rows, gu_picked]))
    bu_picked = [bu_rows[i] for i in burstable_picks]
    best_effort_picks = _by_distance_plain(
        be_rows, keys, _subtract_rows(needs, [bu_picked, gu_picked])
    )
    return (
        [best_effort[i] for i in best_effort_picks]
        + [burstable[i] for i in burstable_picks]
        + [guaranteed[i] for i in guaranteed_picks]
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
    requirements = [(r.resource, r.insufficient_amount) for r in resource_reasons]
    try:
        victims = get_pods_to_preempt(admit_pod, active_pods, requirements, settings=settings)
    except PreemptionError as exc:
        return AdmissionFailureOutcome([], requirements=requirements, error=exc)
    return AdmissionFailureOutcome([], victims=victims, requirements=requirements)
