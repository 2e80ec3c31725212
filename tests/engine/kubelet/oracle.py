"""The kubelet's own v1.35 admission and eviction code (the ``kubelet-oracle`` binary) as a
test authority: run a case through it and through Verdict's ``admission`` and ``eviction``
decisions (as a v1.35 kubelet), and list where they disagree.

Admission compares admit, critical, the kubelet's reason and message, every generalFilter
failure (resource, requested, used, capacity; the predicate) and the victims in kill
order. Eviction compares the observations, the thresholds observed and met, the node
conditions, the reclaim signal, the ranking (pods the kubelet's comparison cannot order as
one group, since Go's sort.Sort is not stable past 12 items) and the victim, which must be
one of Verdict's ``victimCandidates``.
"""

from __future__ import annotations

from service.decisions import admission, eviction
from service.decisions.run import compute
from service.engine.kubelet.eviction_config import DEFAULT_EVICTION_HARD, SIGNAL_TO_RESOURCE
from service.engine.objects import Cluster
from service.engine.qos import compute_pod_qos
from service.engine.quantity import parse_quantity
from service.engine.version import settings_for
from service.ingest.kube.pods import pod_from_object
from tests.conftest import snapshot_from_objects
from tests.oracles import needs, run_json

needs_oracle = needs("kubelet-oracle")

RELEASE = "1.35"  # the oracle is the v1.35 kubelet


def run_oracle(case: dict) -> dict:
    """The kubelet-oracle's answer for ``case`` (its input format: docs/ORACLES.md)."""
    return run_json("kubelet-oracle", case)


def _ref(pod_ref: dict) -> str:
    return f"{pod_ref['namespace']}/{pod_ref['name']}"


# --- admission ---------------------------------------------------------------------------------


def run_admission(case: dict) -> dict:
    cluster = Cluster(snapshot_from_objects([case["node"], *case["pods"]]))
    params = {
        "nodeName": case["node"]["metadata"]["name"],
        "pod": case["pod"],
        "kubernetesVersion": RELEASE,
    }
    return compute(admission.DECISION, cluster, params).result


def _their_reasons(theirs: dict) -> list[tuple]:
    out = []
    for r in theirs.get("generalFilterReasons") or []:
        if r["type"] == "InsufficientResource":
            out.append((r["resource"], r["requested"], r["used"], r["capacity"]))
        else:
            out.append((r["reason"],))
    return out


def _my_reasons(mine: dict) -> list[tuple]:
    out = []
    for r in mine["reasons"]:
        if r["reason"] == "InsufficientResource":
            out.append((r["resource"], r["requested"], r["used"], r["capacity"]))
        elif r.get("kubeletReason") in (None, "UnexpectedAdmissionError") or r["reason"] in (
            "Evicted",
        ):
            continue  # the eviction manager's or another handler's: the oracle runs neither
        else:
            out.append((r["message"],))
    return out


def _as_allocated(obj: dict) -> dict:
    """The pod as the v1.35 kubelet's allocation manager hands it to the admit handlers
    (``getAllocatedPods`` / ``UpdatePodFromAllocation``, pkg/kubelet/allocation): each
    container whose status publishes ``allocatedResources`` has those as its requests. The
    oracle runs the admit handlers on the pods it is given, not the allocation manager, so
    the harness plays that part. ``status.qosClass`` is pinned to the class of the pod as
    the API server admitted it (it never changes on a resize)."""
    status = obj.get("status") or {}
    allocated = {
        cs["name"]: cs["allocatedResources"]
        for cs in (status.get("containerStatuses") or [])
        + (status.get("initContainerStatuses") or [])
        if cs.get("resources") is not None and cs.get("allocatedResources")
    }
    if not allocated:
        return obj
    spec = dict(obj["spec"])
    for field in ("containers", "initContainers"):
        if field in spec:
            spec[field] = [
                {**c, "resources": {**c.get("resources", {}), "requests": allocated[c["name"]]}}
                if c["name"] in allocated
                else c
                for c in spec[field]
            ]
    qos = compute_pod_qos(pod_from_object(obj), settings=settings_for(RELEASE))
    return {**obj, "spec": spec, "status": {**status, "qosClass": qos}}


def admission_differences(case: dict) -> list[str]:
    theirs = run_oracle({**case, "pods": [_as_allocated(p) for p in case["pods"]]})
    mine = run_admission(case)
    found = []
    if theirs["admit"] != mine["admitted"]:
        found.append(f"admit: oracle {theirs['admit']} verdict {mine['admitted']}")
    if theirs["critical"] != mine["critical"]:
        found.append(f"critical: oracle {theirs['critical']} verdict {mine['critical']}")
    if _their_reasons(theirs) != _my_reasons(mine):
        found.append(f"reasons: oracle {_their_reasons(theirs)} verdict {_my_reasons(mine)}")
    if not theirs["admit"] and (theirs["reason"], theirs["message"]) != (
        mine["kubeletReason"],
        mine["message"],
    ):
        found.append(
            f"reason: oracle {theirs['reason']!r} {theirs['message']!r} "
            f"verdict {mine['kubeletReason']!r} {mine['message']!r}"
        )
    their_victims = theirs.get("victims") or []
    my_victims = [_ref(v) for v in (mine["preemption"] or {}).get("victims", [])]
    if their_victims != my_victims:
        found.append(f"victims: oracle {their_victims} verdict {my_victims}")
    return found


# --- eviction ----------------------------------------------------------------------------------

_CONFIG_FIELDS = (
    "evictionHard",
    "evictionSoft",
    "evictionSoftGracePeriod",
    "evictionMinimumReclaim",
    "enforceNodeAllocatable",
    "evictionMaxPodGracePeriod",
    "filesystemLayout",
)


def run_eviction(case: dict) -> dict:
    name = case["node"]["metadata"]["name"]
    cluster = Cluster(
        snapshot_from_objects([case["node"], *case["pods"]], stats={name: case["summary"]})
    )
    params: dict = {
        "nodeName": name,
        "config": {k: case[k] for k in _CONFIG_FIELDS if k in case},
        "now": case["now"],
        "kubernetesVersion": RELEASE,
    }
    if case.get("firstObserved"):
        params["firstObserved"] = case["firstObserved"]
    return compute(eviction.DECISION, cluster, params).result


def _amount(text: str | None):
    return None if text is None else parse_quantity(text)


def _their_thresholds(items: list[dict] | None) -> list[tuple]:
    # The kubelet parses map-form thresholds in Go's map order: compared as a multiset.
    return sorted(
        (t["signal"], t["operator"], _amount(t["quantity"]), t["gracePeriod"]) for t in items or []
    )


def _my_thresholds(items: list[dict]) -> list[tuple]:
    return sorted(
        (t["signal"], t["operator"], _amount(t["value"]), t["gracePeriod"]) for t in items
    )


def ranking_differences(their_ranked: list[str], mine: dict) -> list[str]:
    """The oracle's ranking against Verdict's, each of Verdict's tie groups as a set."""
    my_ranked = [_ref(e["pod"]) for e in mine["ranking"]]
    if len(their_ranked) != len(my_ranked):
        return [f"ranked: oracle {their_ranked} verdict {my_ranked}"]
    groups = {g["first"]: g["last"] for g in mine.get("tieGroups", [])}
    i = 0
    while i < len(my_ranked):
        last = groups.get(i, i)
        if sorted(their_ranked[i : last + 1]) != sorted(my_ranked[i : last + 1]):
            return [f"ranked: oracle {their_ranked} verdict {my_ranked} ties {groups}"]
        i = last + 1
    return []


def oracle_eviction_case(case: dict) -> dict:
    """The case as the oracle gets it: an absent ``evictionHard`` spelled out as v1.35's
    Linux defaults, which include imagefs.inodesFree<5% since 1.30 (kubernetes#121834); the
    oracle's built-in defaults predate that (docs/fidelity.md)."""
    if case.get("evictionHard") is None:
        return {**case, "evictionHard": dict(DEFAULT_EVICTION_HARD)}
    return case


_MEMORY_SIGNALS = ("memory.available", "allocatableMemory.available")


def reclaim_candidates(met: list[dict]) -> set[str]:
    """The signals the kubelet may reclaim first: getReclaimableThreshold takes the first
    met threshold with a resource after sort.Sort(byEvictionPriority), whose Less puts the
    memory signals first and leaves the others equal, in the order ParseThresholdConfig
    read them from a Go map: any of them."""
    signals = [t["signal"] for t in met if t["signal"] in SIGNAL_TO_RESOURCE]
    memory = [s for s in signals if s in _MEMORY_SIGNALS]
    return set(memory or signals)


def _my_reclaim_signal(mine: dict) -> str | None:
    return next(
        (t["signal"] for t in mine["thresholdsMet"] if t["signal"] in SIGNAL_TO_RESOURCE), None
    )


def _hardness(met: list[dict], candidates: set[str]) -> set[bool]:
    """Whether the thresholds the kubelet may reclaim first are hard, soft or either."""
    return {t["gracePeriod"] == "0s" for t in met if t["signal"] in candidates}


def eviction_differences(case: dict) -> list[str]:
    mine = run_eviction(case)
    signal = _my_reclaim_signal(mine)
    candidates = reclaim_candidates(mine["thresholdsMet"])
    found = []
    if signal is not None and signal not in candidates:
        found.append(f"reclaim: verdict {signal} is not one the kubelet may take first")
    given = oracle_eviction_case(case)
    theirs = run_oracle(given)
    their_signal = (theirs.get("reclaim") or {}).get("signal")
    if their_signal is not None and their_signal not in candidates:
        found.append(f"reclaim: oracle {their_signal} is not among {sorted(candidates)}")
    if signal is not None and their_signal != signal:
        # Which met threshold comes first is Go's map order's choice; the ranking and the
        # victim are compared on the signal Verdict reclaims.
        theirs = {**run_oracle({**given, "signal": signal}), "reclaim": theirs.get("reclaim")}
    their_signals = {
        s: (_amount(o["available"]), _amount(o["capacity"]))
        for s, o in (theirs.get("observations") or {}).items()
    }
    my_signals = {
        s: (_amount(o["available"]), _amount(o["capacity"])) for s, o in mine["signals"].items()
    }
    if their_signals != my_signals:
        found.append(f"observations: oracle {their_signals} verdict {my_signals}")
    for name, key in (
        ("thresholdsObserved", "thresholdsObserved"),
        ("thresholdsMet", "thresholdsMet"),
    ):
        if _their_thresholds(theirs.get(name)) != _my_thresholds(mine[key]):
            found.append(
                f"{name}: oracle {_their_thresholds(theirs.get(name))} "
                f"verdict {_my_thresholds(mine[key])}"
            )
    if sorted(theirs.get("nodeConditions") or []) != sorted(mine["nodeConditions"]):
        found.append(
            f"nodeConditions: oracle {theirs['nodeConditions']} verdict {mine['nodeConditions']}"
        )
    if (their_signal is None) != (signal is None) or (
        signal is not None and SIGNAL_TO_RESOURCE[signal] != mine["starvedResource"]
    ):
        found.append(f"reclaim: oracle {their_signal} verdict {signal} {mine['starvedResource']}")
    found.extend(ranking_differences(theirs.get("ranked") or [], mine))
    victims = [_ref(p) for p in mine.get("victimCandidates", [])]
    their_victim = theirs.get("victim")
    my_victim = _ref(mine["victim"]) if mine["victim"] else None
    if their_victim is None or my_victim is None:
        if their_victim != my_victim:
            found.append(f"victim: oracle {their_victim} verdict {my_victim}")
    elif their_victim not in victims or my_victim not in victims:
        found.append(f"victim: oracle {their_victim} verdict {my_victim} candidates {victims}")
    either = len(_hardness(mine["thresholdsMet"], candidates)) > 1
    if (
        their_victim is not None
        and theirs.get("gracePeriodOverride") != mine["gracePeriodSeconds"]
        and not either  # a hard and a soft threshold may each come first
    ):
        found.append(
            f"grace: oracle {theirs.get('gracePeriodOverride')} verdict {mine['gracePeriodSeconds']}"
        )
    return found
