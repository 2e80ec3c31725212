"""kube-controller-manager's node lifecycle controller and taint eviction (v1.35, the
``nodelifecycle-oracle`` binary) as a test authority: run a case through it and through
Verdict's ``node-eviction-rate`` decision, and list where they disagree.

What is compared (the oracle runs a warm controller on a virtual clock up to ``horizon``;
Verdict answers at ``now``):

* every zone's state, eviction rate, node and not-ready counts at ``now``, and
  ``allZonesFullyDisrupted``;
* every node's Ready status;
* the lifecycle taint each node carries at the horizon and its timeAdded; the oracle only
  sees taints added up to the horizon, so Verdict's later ones count as absent. Nodes that
  Verdict puts in one slot group are tainted in an unspecified order upstream (8 parallel
  workers), so their times are compared as a multiset per group;
* every pod's deletion time (the oracle's ``evictAt``, else the pending timer's
  ``pendingFireAt``; one due before ``now`` happens at ``now``), up to the horizon; pods on nodes of a slot group as a multiset per
  group of (tolerations, creation, offset from the node's taint time).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from service.engine.duration import parse_go_duration
from service.engine.nodelifecycle.decision import node_eviction_rate
from service.engine.objects import Cluster
from service.engine.version import settings_for
from tests.conftest import snapshot_from_objects
from tests.oracles import needs, run_json

RELEASE = settings_for("1.35")  # the oracle is v1.35's controller


needs_oracle = needs("nodelifecycle-oracle")

_LIFECYCLE = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def run_oracle(case: dict) -> dict:
    """The nodelifecycle-oracle's answer for ``case`` (its input format: docs/ORACLES.md)."""
    return run_json("nodelifecycle-oracle", case)


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _horizon_seconds(text: str) -> float:
    return parse_go_duration(text) / 1e9


def run_verdict(case: dict) -> dict:
    """Verdict's node-eviction-rate result on the same objects and settings."""
    objects = case["nodes"] + case.get("leases", []) + case["pods"]
    cluster = Cluster(snapshot_from_objects(objects))
    config = dict(case.get("settings", {}))
    config["applyDefaultTolerations"] = case.get("applyDefaultTolerations", False)
    return node_eviction_rate(cluster, _instant(case["now"]), config, settings=RELEASE)


def _final_taints(case: dict, answer: dict) -> dict[str, tuple[str, str] | None]:
    """Each node's lifecycle NoExecute taint at the horizon, with its timeAdded."""
    taints: dict[str, tuple[str, str] | None] = {}
    for node in case["nodes"]:
        found = None
        for t in node.get("spec", {}).get("taints", []):
            if t.get("effect") == "NoExecute" and t["key"] in _LIFECYCLE:
                found = (t["key"], t.get("timeAdded"))
        taints[node["metadata"]["name"]] = found
    for event in answer.get("taintEvents") or []:
        key, _, effect = event["taint"].partition(":")
        if effect != "NoExecute" or key not in _LIFECYCLE:
            continue
        if event["action"] == "add":
            taints[event["node"]] = (key, event["timeAdded"])
        elif taints.get(event["node"]) and taints[event["node"]][0] == key:
            taints[event["node"]] = None
    return taints


def differences(case: dict) -> list[str]:
    """Where Verdict and the controller's code disagree on ``case``."""
    theirs = run_oracle(case)
    mine = run_verdict(case)
    found: list[str] = []
    zone_fields = ("state", "evictionRate", "nodes", "notReadyNodes")

    def zone_view(zone: dict) -> tuple:
        return tuple(round(zone[f], 6) if f == "evictionRate" else zone[f] for f in zone_fields)

    their_zones = {z["key"]: zone_view(z) for z in theirs["zones"]}
    my_zones = {z["key"]: zone_view(z) for z in mine["zones"]}
    if their_zones != my_zones:
        found.append(f"zones: oracle {their_zones} verdict {my_zones}")
    if theirs["allZonesFullyDisrupted"] != mine["allZonesFullyDisrupted"]:
        found.append(f"allZonesFullyDisrupted: oracle {theirs['allZonesFullyDisrupted']}")
    # A node without a Ready condition (in its startup grace) prints "" there; Verdict
    # answers "Unknown", as for a node that has not posted one yet.
    their_ready = {n["nodeName"]: n["ready"] or "Unknown" for n in theirs["nodes"]}
    for node in mine["nodes"]:
        if their_ready[node["nodeName"]] != node["ready"]:
            found.append(
                f"{node['nodeName']}: ready oracle {their_ready[node['nodeName']]} "
                f"verdict {node['ready']}"
            )
    now = _instant(case["now"])
    horizon = _horizon_seconds(case.get("horizon", "10m"))

    def within(text: str | None) -> str | None:
        if text is None or (_instant(text) - now).total_seconds() > horizon:
            return None
        return _second(text)

    their_taints = _final_taints(case, theirs)
    initial = _final_taints(case, {})

    def at_horizon(node: dict) -> tuple[str, str] | None:
        """Verdict's taint as the horizon sees it: one (re-)stamped after the horizon leaves
        the node's existing taint of that key in place until then."""
        if within(node["taintedAt"]):
            return node["taint"], within(node["taintedAt"])
        existing = initial.get(node["nodeName"])
        if node["taintedAt"] is not None and existing and existing[0] == node["taint"]:
            return existing[0], _second(existing[1])
        return None

    my_taints = {n["nodeName"]: at_horizon(n) for n in mine["nodes"]}
    group_of = {n["nodeName"]: n.get("slotGroup") for n in mine["nodes"]}
    grouped_theirs: dict[object, Counter] = {}
    grouped_mine: dict[object, Counter] = {}
    for name, mine_taint in my_taints.items():
        group = group_of.get(name)
        if group is None:
            if their_taints.get(name) != mine_taint:
                found.append(f"{name}: taint oracle {their_taints.get(name)} verdict {mine_taint}")
            continue
        their_taint = their_taints.get(name)
        if their_taint and mine_taint and their_taint[0] != mine_taint[0]:
            found.append(f"{name}: taint oracle {their_taint} verdict {mine_taint}")
        # Which nodes of the group the horizon reaches is the draw's: compare the slots
        # stamped from now on, not the older taints the others still carry.
        kept = initial.get(name)
        kept = kept and (kept[0], _second(kept[1]))
        their_new = None if their_taint is None or their_taint == kept else their_taint[1]
        my_new = None if mine_taint is None or mine_taint == kept else mine_taint[1]
        grouped_theirs.setdefault(group, Counter())[_second(their_new)] += 1
        grouped_mine.setdefault(group, Counter())[my_new] += 1
    for group, counted in grouped_mine.items():
        if grouped_theirs[group] != counted:
            found.append(
                f"slot group {group}: taints oracle {sorted(grouped_theirs[group].items(), key=str)}"
                f" verdict {sorted(counted.items(), key=str)}"
            )
    found.extend(_pod_differences(case, theirs, mine, group_of, their_taints, within))
    return found


def _pod_differences(case, theirs, mine, group_of, their_taints, within) -> list[str]:
    """Each pod's deletion time. On a node of a slot group, where the node's slot differs
    between the answers only because the assignment is unspecified, the deletion is compared
    relative to the node's taint time (when both answers taint the node by the horizon)."""
    mine_at = {f"{p['pod']['namespace']}/{p['pod']['name']}": p["evictAt"] for p in mine["pods"]}
    my_node_taint = {n["nodeName"]: within(n["taintedAt"]) for n in mine["nodes"]}
    found = []
    for pod in theirs["pods"]:
        key = pod["pod"]
        their_at = _second(_not_before(pod.get("evictAt") or pod.get("pendingFireAt"), case["now"]))
        my_at = _second(mine_at.get(key))
        if their_at is None and within(my_at) is None:
            my_at = None  # a deletion after the horizon, which the oracle does not reach
        if their_at == my_at:
            continue
        if group_of.get(pod["node"]) is not None:
            their_taint = their_taints.get(pod["node"])
            mine_taint = my_node_taint.get(pod["node"])
            if their_taint is None or mine_taint is None:
                continue  # the node's slot is checked with its group's
            if _offset(their_at, their_taint[1]) == _offset(my_at, mine_taint):
                continue
        found.append(f"{key} on {pod['node']}: evictAt oracle {their_at} verdict {my_at}")
    return found


def _second(text: str | None) -> str | None:
    """A time to the whole second: the oracle prints times as metav1.Time does (RFC 3339
    without fractions), Verdict to the nanosecond the controller acts (taint slots fall on
    the 100 ms tainting loop)."""
    if text is None:
        return None
    return _instant(text).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def _not_before(at: str | None, now: str) -> str | None:
    """The oracle prints a deletion's nominal fire time; one already due at ``now`` runs at
    ``now`` (createWorker runs work whose delay is <= 0 at once), which is what Verdict
    answers."""
    if at is None or _instant(at) >= _instant(now):
        return at
    return now


def _offset(at: str | None, tainted: str | None) -> float | str | None:
    """A deletion time relative to its node's taint time (absolute when either is absent)."""
    if at is None:
        return None
    if tainted is None:
        return at
    return (_instant(at) - _instant(tainted)).total_seconds()
