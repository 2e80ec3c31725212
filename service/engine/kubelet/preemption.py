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
literal re-implementation of upstream (its oracle), itself checked against upstream's cases.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from itertools import accumulate, chain
from operator import itemgetter

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


# A requirement inside the search: (resource name, column in the request rows, amount).
_Need = tuple[str, int, int]

_EXACT = 1 << 53  # integers below this are exact as floats


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
    pair = len(names) == 2  # the common case, cpu and memory: two plain lookups
    first, second = names if pair else ("", "")
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
        elif pair:
            get = requests.get
            row = (get(first, 0), get(second, 0))
        else:
            row = tuple(map(requests.get, names, defaults))
        rows[k].append(row)
        grouped[k].append(pod)
    return grouped, rows


def _subtract(
    needs: list[_Need], *groups: list[tuple[int, ...]], falling: bool = False
) -> list[_Need]:
    """admissionRequirementList.subtract (k8s 1.35) of the pods of ``groups`` (request rows,
    in order): upstream subtracts pod after pod, stops once the amount is <= 0 and then drops
    the requirement. So a requirement stays exactly when the amount is above 0 after every
    pod (or, with no pods, at the start), and is then the amount minus the whole column.
    ``falling``: no request is negative, so the amount only falls and its last value decides."""
    rows = list(chain.from_iterable(groups))
    out: list[_Need] = []
    for name, col, q in needs:
        if falling or not rows:
            left = q - sum(map(itemgetter(col), rows))
            stays = left > 0
        else:
            sums = list(accumulate(map(itemgetter(col), rows)))
            left = q - sums[-1]
            stays = max(sums) < q
        if stays:
            out.append((name, col, left))
    return out


def _needs_error(needs: list[_Need]) -> PreemptionError:
    return PreemptionError([(name, q) for name, _, q in needs])


def _scan(
    columns: list[list[float]], live: list[int], need: list[tuple[int, float]]
) -> list[float]:
    """admissionRequirementList.distance of each ``live`` entry to the remaining requirements
    ((position, amount) pairs), in the order of ``live``: the sum over the requirements the
    entry does not cover of ((q - request) / q)^2, in float64 and requirement order.

    ``(q - v) / fq`` is Go's float64(q - request) / float64(q) (see ``_by_distance`` on the
    columns); each term is ``r * r`` (Go's math.Pow(x, 2) rounds once, like that product),
    dropped when ``r`` is not positive."""
    out = [0.0] * len(live)
    for t, q in need:
        fq = float(q)
        column = columns[t]
        out = [
            d + r * r if r > 0 else d
            for d, e in zip(out, live, strict=False)
            for r in [(q - column[e]) / fq]
        ]
    return out


def _next_below(values: list[float]) -> dict[float, float]:
    """For each of ``values`` but the smallest, the next smaller distinct one."""
    ascending = sorted(set(values))
    return dict(zip(ascending[1:], ascending, strict=False))


class _Largest:
    """With one requirement left: its distance term only shrinks as the request grows, so
    the nearest entries are those with the largest request, unless a smaller request's
    term rounds (or clips) to the same float; ``nearest`` then answers None."""

    __slots__ = ("below", "head", "members", "order", "values")

    def __init__(self, column: list[float], live: list[int], members: list[list[int]]) -> None:
        self.members = members
        self.order = sorted(live, key=column.__getitem__, reverse=True)
        self.values = [column[e] for e in self.order]
        self.below = _next_below(self.values)
        self.head = 0

    def nearest(self, q: float) -> list[int] | None:
        members = self.members
        order = self.order
        values = self.values
        head = self.head
        while not members[order[head]]:
            head += 1
        self.head = head
        top = values[head]
        fq = float(q)
        r = (q - top) / fq
        best = r * r if r > 0 else 0.0
        lower = self.below.get(top)
        if lower is not None:
            r = (q - lower) / fq
            if (r * r if r > 0 else 0.0) == best:
                return None
        tied = []
        for i in range(head, len(order)):
            if values[i] != top:
                break
            if members[order[i]]:
                tied.append(order[i])
        return tied


class _Skyline:
    """With two requirements left: the live entries that no other live entry dominates
    (requests >= on both, and not equal on both), kept up to date as entries go.

    Both distance terms only shrink as a request grows, so the smallest distance is always
    reached on the skyline, and ``nearest`` computes only the skyline's distances. An entry
    off the skyline ties with the smallest one only through float rounding or clipping;
    ``nearest`` rules that out, or answers None.

    Entries are ordered by first request descending, then second descending; along the
    skyline the first request falls and the second rises. ``seconds`` holds the second
    request of the entries in that order, -inf once an entry is gone, so that the skyline
    of a stretch of the order is found with C-level max() and index() calls.
    """

    __slots__ = (
        "below_first",
        "below_second",
        "count",
        "first",
        "order",
        "rank",
        "second",
        "seconds",
        "sky",
        "sky_first",
        "sky_second",
        "starts",
    )

    def __init__(self, first: list[float], second: list[float], live: list[int]) -> None:
        self.first = first
        self.second = second
        # Two stable sorts on C-level keys: by second descending, then first descending.
        order = sorted(live, key=second.__getitem__, reverse=True)
        order.sort(key=first.__getitem__, reverse=True)
        self.order = order
        self.count = len(order)  # live entries
        self.rank = {e: j for j, e in enumerate(order)}
        self.starts = [-first[e] for e in order]  # ascending, for bisect
        self.seconds = [second[e] for e in order]
        # The next smaller distinct request, over all entries (a superset of the live ones).
        self.below_first = _next_below(first)
        self.below_second = _next_below(second)
        self.sky = self._records(0, len(order), -math.inf)
        self.sky_first = [first[e] for e in self.sky]
        self.sky_second = [second[e] for e in self.sky]

    def _records(self, start: int, stop: int, floor: float) -> list[int]:
        """The undominated live entries of ``order[start:stop]`` whose second request is
        above ``floor``, in order: the last is the first entry with the largest second
        request (the largest first request among those), the others are the records of
        the stretch before it; equal entries come together."""
        order = self.order
        seconds = self.seconds
        first = self.first
        second = self.second
        found: list[int] = []
        while start < stop:
            top = max(seconds[start:stop])
            if top <= floor:
                break
            j = seconds.index(top, start, stop)
            a = first[order[j]]
            equal = [order[j]]
            k = j + 1
            while k < stop and first[order[k]] == a and second[order[k]] == top:
                if seconds[k] == top:  # not gone
                    equal.append(order[k])
                k += 1
            found[:0] = equal
            stop = j
        return found

    def remove(self, e: int) -> None:
        """Entry ``e`` has no candidate left."""
        self.count -= 1
        j = self.rank[e]
        self.seconds[j] = -math.inf
        sky = self.sky
        try:
            i = sky.index(e)
        except ValueError:
            return  # it was dominated: the skyline stays
        sky_first = self.sky_first
        sky_second = self.sky_second
        del sky[i]
        del sky_first[i]
        del sky_second[i]
        a = self.first[e]
        b = self.second[e]
        for k in (i - 1, i):
            if 0 <= k < len(sky) and sky_first[k] == a and sky_second[k] == b:
                return  # an equal entry remains: the skyline is the same
        # What ``e`` alone dominated comes up: the entries after it in the order whose first
        # request is above the next skyline entry's, and whose second request is above the
        # previous skyline entry's.
        floor = sky_second[i - 1] if i else -math.inf
        stop = bisect_left(self.starts, -sky_first[i]) if i < len(sky) else len(self.order)
        risen = self._records(j + 1, stop, floor)
        if risen:
            sky[i:i] = risen
            sky_first[i:i] = [self.first[f] for f in risen]
            sky_second[i:i] = [self.second[f] for f in risen]

    def nearest(self, q: float, p: float) -> list[int] | None:
        """The live entries at the smallest distance to amounts ``q`` (first requirement)
        and ``p`` (second), or None when an entry off the skyline might be one of them.

        An entry ``f`` dominated by a skyline entry ``s`` at the smallest distance has
        terms no smaller than ``s``'s; if its float distance equalled ``s``'s, so would the
        distance with ``f``'s first term and ``s``'s second, and with ``s``'s first and
        ``f``'s second (float addition is monotone). One of ``f``'s requests is below
        ``s``'s; the next distinct request below ``s``'s then gives that equality too. So
        when neither next request does, for every such ``s``, no dominated entry ties."""
        sky_first = self.sky_first
        sky_second = self.sky_second
        fq = float(q)
        fp = float(p)
        if sky_first[0] < q and sky_second[-1] < p:  # no term is dropped
            distances = [
                r * r + s * s
                for a, b in zip(sky_first, sky_second, strict=False)
                for r in [(q - a) / fq]
                for s in [(p - b) / fp]
            ]
        else:
            distances = [
                (r * r if r > 0 else 0.0) + (s * s if s > 0 else 0.0)
                for a, b in zip(sky_first, sky_second, strict=False)
                for r in [(q - a) / fq]
                for s in [(p - b) / fp]
            ]
        best = min(distances)
        if distances.count(best) == 1:
            i = distances.index(best)
            if len(distances) < self.count and self._shadowed(i, q, p, fq, fp, best):
                return None
            return [self.sky[i]]
        at = [i for i, dist in enumerate(distances) if dist == best]
        if len(distances) < self.count:
            for i in at:
                if self._shadowed(i, q, p, fq, fp, best):
                    return None
        sky = self.sky
        return [sky[i] for i in at]

    def _shadowed(self, i: int, q: float, p: float, fq: float, fp: float, best: float) -> bool:
        """Whether an entry dominated by skyline entry ``i`` (at distance ``best``) might be
        at that distance too; see ``nearest``."""
        a = self.sky_first[i]
        b = self.sky_second[i]
        lower = self.below_first.get(a)
        if lower is not None and _two_terms(q, fq, lower, p, fp, b) == best:
            return True
        lower = self.below_second.get(b)
        return lower is not None and _two_terms(q, fq, a, p, fp, lower) == best


def _two_terms(q: float, fq: float, a: float, p: float, fp: float, b: float) -> float:
    """The distance of requests ``a`` and ``b`` to amounts ``q`` and ``p`` (as ``_scan``)."""
    r = (q - a) / fq
    s = (p - b) / fp
    return (r * r if r > 0 else 0.0) + (s * s if s > 0 else 0.0)


def _by_distance(
    rows: list[tuple[int, ...]], keys: tuple[int, int], needs: list[_Need], num: type
) -> list[int]:
    """getPodsToPreemptByDistance (k8s 1.35) on request rows and requirements (amounts
    above 0); ``keys`` are the memory and cpu columns, ``num`` the type distances are
    computed in (see ``get_pods_to_preempt``). Returns the row indices in pick order.

    Upstream, each round scans the candidates in order from a best distance of
    len(requirements) + 1 at index 0, replaced by a strictly smaller distance (``_scan``)
    or by an equal one when smallerResourceRequest (memory, then cpu; a full tie counts as
    smaller); the best is subtracted from the requirements and swap-removed (the last
    candidate moves into its slot, which changes the scan order of the next rounds). So the
    scan ends on the LAST candidate in scan order with the smallest (distance, memory,
    cpu), where the candidate at index 0 counts at a distance of at most len(requirements)
    + 1. Only a negative request puts a candidate farther (each term is at most 1 else).

    That is computed directly, with less work per round than upstream's scan (quadratic):
    candidates with equal rows (the same requests for every requirement, memory and cpu)
    form one entry, whose distance is computed once for all of them; with one or two
    requirements left, only the entries that can be nearest are computed (``_Largest``,
    ``_Skyline``), otherwise, or when those cannot rule out a tie, every live entry. Of
    the candidates of the entries at the smallest (distance, memory, cpu), the one last in
    the scan order wins.
    """
    if not needs:
        return []
    names = [name for name, _, _ in needs]
    cols = [col for _, col, _ in needs]
    memory, cpu = keys
    entry_index: dict[tuple[int, ...], int] = {}
    entry_rows: list[tuple[int, ...]] = []
    members: list[list[int]] = []  # per entry: its live candidates (row indices)
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
    # Per requirement position, the entries' requests.
    columns = [[num(row[col]) for row in entry_rows] for col in cols]
    live = list(range(len(entry_rows)))  # compacted whenever it is read

    order = list(range(len(rows)))  # upstream's scan order
    position = list(range(len(rows)))
    remaining = [(t, q) for t, (_, _, q) in enumerate(needs)]
    # For the requirements left, when one or two are: what finds the nearest entries.
    largest: _Largest | None = None
    skyline: _Skyline | None = None
    picks: list[int] = []
    while remaining:
        if not order:
            raise PreemptionError([(names[t], q) for t, q in remaining])
        tied = None
        if len(remaining) == 2:
            (t, q), (u, p) = remaining
            if skyline is None:
                live = [e for e in live if members[e]]
                skyline = _Skyline(columns[t], columns[u], live)
            tied = skyline.nearest(num(q), num(p))
        elif len(remaining) == 1:
            ((t, q),) = remaining
            if largest is None:
                live = [e for e in live if members[e]]
                largest = _Largest(columns[t], live, members)
            tied = largest.nearest(num(q))
        if tied is None:
            live = [e for e in live if members[e]]
            distances = _scan(columns, live, [(t, num(q)) for t, q in remaining])
            best = min(distances)
            tied = [live[s] for s, dist in enumerate(distances) if dist == best]
        if len(tied) == 1:
            group = members[tied[0]]
        else:
            low = min([(entry_rows[e][memory], entry_rows[e][cpu]) for e in tied])
            group = [
                i
                for e in tied
                if (entry_rows[e][memory], entry_rows[e][cpu]) == low
                for i in members[e]
            ]
        chosen = group[0] if len(group) == 1 else max(group, key=position.__getitem__)
        if num is int and chosen != order[0]:
            chosen = _initial_best_kept(
                columns, entry_rows, entry_of, keys, remaining, order, chosen
            )
        picks.append(chosen)
        # Swap-remove from the scan order.
        at = position[chosen]
        moved = order.pop()
        if moved != chosen:
            order[at] = moved
            position[moved] = at
        e = entry_of[chosen]
        members[e].remove(chosen)
        if not members[e] and skyline is not None:
            skyline.remove(e)
        row = entry_rows[e]
        left = [(t, q - row[cols[t]]) for t, q in remaining if q - row[cols[t]] > 0]
        if len(left) != len(remaining):
            largest = skyline = None  # they were for the requirements of before
        remaining = left
    return picks


def _initial_best_kept(
    columns: list[list[int]],
    entry_rows: list[tuple[int, ...]],
    entry_of: list[int],
    keys: tuple[int, int],
    remaining: list[tuple[int, int]],
    order: list[int],
    chosen: int,
) -> int:
    """The round's pick when the candidate at index 0 is farther than len(requirements) + 1:
    upstream's initial best (that distance, index 0's requests) then stands in for it, and
    is kept unless some candidate is at least as near."""
    first = order[0]
    limit = float(len(remaining) + 1)
    if _scan(columns, [entry_of[first]], remaining)[0] <= limit:
        return chosen
    memory, cpu = keys
    first_row = entry_rows[entry_of[first]]
    chosen_row = entry_rows[entry_of[chosen]]
    nearest = (
        _scan(columns, [entry_of[chosen]], remaining)[0],
        chosen_row[memory],
        chosen_row[cpu],
    )
    return first if (limit, first_row[memory], first_row[cpu]) < nearest else chosen


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
    needs: list[_Need] = [(name, column[name], q) for name, q in requirements]
    keys = (column["memory"], column["cpu"])
    (best_effort, burstable, guaranteed), (be_rows, bu_rows, gu_rows) = _sort_pods_by_qos(
        preemptor, pods, names, settings
    )
    # Distances are ``(q - v) / float(q)``: Go's float64(q - request) / float64(q). When
    # every request is in [0, 2**53) and every amount below it (any real pod), the search
    # holds them as floats, exact there and faster; otherwise as Python ints, where the
    # difference is exact before its one conversion (and only a negative request can make
    # upstream's initial best stand, ``_initial_best_kept``).
    values = list(chain.from_iterable(chain.from_iterable((be_rows, bu_rows, gu_rows))))
    falling = min(values, default=0) >= 0
    top = max(values + [q for _, _, q in needs], default=0)
    num = float if falling and top < _EXACT else int
    unmet = _subtract(needs, be_rows, bu_rows, gu_rows, falling=falling)
    if unmet:
        raise _needs_error(unmet)
    needed = _subtract(needs, be_rows, bu_rows, falling=falling)
    gu_picks = _by_distance(gu_rows, keys, needed, num)
    gu_picked = [gu_rows[i] for i in gu_picks]
    needed = _subtract(needs, be_rows, gu_picked, falling=falling)
    bu_picks = _by_distance(bu_rows, keys, needed, num)
    bu_picked = [bu_rows[i] for i in bu_picks]
    needed = _subtract(needs, bu_picked, gu_picked, falling=falling)
    be_picks = _by_distance(be_rows, keys, needed, num)
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
