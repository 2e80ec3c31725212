"""What a person needs from a stored record, per kind: plain dicts for the templates. Results
are read defensively (``.get``): records made by other engine versions have other shapes."""

from __future__ import annotations

from service.console import charts
from service.store.records import PRUNE_KIND


def pod_name(ref: dict | None) -> str:
    if not ref:
        return "—"
    return f"{ref.get('namespace', '')}/{ref.get('name', '')}"


def summary(kind: str, result: dict) -> str:
    """One line for the decisions list."""
    result = result or {}
    if kind == "admission":
        return "admitted" if result.get("admitted") else "rejected"
    if result.get("cycleError"):
        return "scheduling cycle error"
    if kind == "preemption":
        node = result.get("nominatedNodeName")
        return (
            f"nominated {node}, {len(result.get('victims') or [])} victim(s)" if node else "no node"
        )
    if kind == "placement":
        return (
            f"placed on {result['selectedNode']}" if result.get("selectedNode") else "unschedulable"
        )
    if kind == "eviction":
        return f"evicts {pod_name(result['victim'])}" if result.get("victim") else "no eviction"
    if kind == "node-eviction-rate":
        states = sorted({z.get("state", "?") for z in result.get("zones") or []})
        return ", ".join(states) or "no zones"
    if kind == "drain":
        nodes = result.get("nodes") or []
        drainable = sum(bool(n.get("drainable")) for n in nodes)
        return f"{drainable} of {len(nodes)} node(s) drainable"
    if kind == "schedule":
        counts = result.get("counts") or {}
        return (
            f"{counts.get('bound', 0)} bound, {counts.get('nominated', 0)} nominated, "
            f"{counts.get('unschedulable', 0)} unschedulable"
            + (" (truncated)" if result.get("truncated") else "")
        )
    if kind == "capacity":
        reason = (result.get("stopReason") or {}).get("reason", "?")
        return f"{result.get('replicas', 0)} replica(s) fit; stops: {reason}"
    if kind == PRUNE_KIND:
        return f"pruned {result.get('deleted', 0)} record(s)"
    return ""


def placement_nodes(result: dict) -> tuple[list[dict], list[str]]:
    """Nodes as a list (a dict keyed by node name is accepted too) and every score plugin any
    node has, in first-seen order: new plugins show up without code changes. Each node carries
    the plugins' weights (the result's top-level ``weights``; per node in older shapes), so
    that a total can be rebuilt from the page."""
    weights = result.get("weights") or {}
    raw = result.get("nodes") or []
    if isinstance(raw, dict):
        raw = [{"nodeName": name, **(value or {})} for name, value in raw.items()]
    nodes, plugins = [], {}
    for entry in raw:
        scores = entry.get("scores") or {}
        for plugin in scores:
            plugins.setdefault(plugin, None)
        nodes.append(
            {
                "nodeName": entry.get("nodeName", "?"),
                "feasible": entry.get("feasible", bool(scores)),
                "reasons": entry.get("reasons") or [],
                "scores": scores,
                "rawScores": entry.get("rawScores") or {},
                "weights": entry.get("weights") or weights,
                "total": entry.get("total"),
            }
        )
    return nodes, list(plugins)


def zone_label(zone: dict) -> str:
    """A zone as a person names it, region and zone, not the controller's internal key
    (``region:\\x00:zone``)."""
    region, name = zone.get("region") or "", zone.get("zone") or ""
    if not region and not name:
        key = zone.get("key") or ""
        region, _, name = key.partition(":\x00:")
    if not region and not name:
        return "(no zone labels)"
    return f"region {region or '(none)'}, zone {name or '(none)'}"


def eviction_signals(result: dict) -> list[dict]:
    """Each observed signal beside the thresholds on it, and whether one is met."""
    met = {(t.get("signal"), t.get("value")) for t in result.get("thresholdsMet") or []}
    rows = []
    thresholds = result.get("thresholdsObserved") or []
    observed_signals = result.get("signals") or {}
    if isinstance(observed_signals, list):  # [{"signal": ..., ...}] from other versions
        observed_signals = {o.get("signal", "?"): o for o in observed_signals}
    for signal, observed in observed_signals.items():
        on_signal = [t for t in thresholds if t.get("signal") == signal]
        rows.append(
            {
                "signal": signal,
                "available": observed.get("available"),
                "capacity": observed.get("capacity"),
                "thresholds": [
                    {
                        "value": t.get("value"),
                        "gracePeriod": t.get("gracePeriod"),
                        "met": (signal, t.get("value")) in met,
                    }
                    for t in on_signal
                ],
            }
        )
    return rows


def preemption_words(request: dict, victim: dict) -> tuple[str, str]:
    """What the scheduler writes when it preempts ``victim``: the event on the victim
    (preemption.go PreemptPod, "Preempted by pod <uid> on node <node>") and the message of the
    DisruptionTarget condition (reason PreemptionByScheduler) it sets before deleting it."""
    pod = request.get("pod") or {}
    metadata = pod.get("metadata") or {}
    # Without a uid in the request the pod is named as the API's answer names it.
    uid = metadata.get("uid") or f"{metadata.get('namespace') or 'default'}/{metadata.get('name')}"
    scheduler = (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"
    return (
        f"Preempted by pod {uid} on node {victim.get('nodeName')}",
        f"{scheduler}: preempting to accommodate a higher priority pod",
    )


def tie_numbers(result: dict) -> dict[int, int]:
    """Ranking index → the number (from 1) of the tie group it is in, for the rows the
    kubelet's comparison cannot order."""
    numbers = {}
    for number, group in enumerate(result.get("tieGroups") or [], start=1):
        for index in range(group["first"], group["last"] + 1):
            numbers[index] = number
    return numbers


def context(kind: str, result: dict, request: dict | None = None) -> dict:
    """Extra template values for the kind's section."""
    result = result or {}
    if kind == "placement":
        nodes, plugins = placement_nodes(result)
        return {
            "nodes": nodes,
            "plugins": plugins,
            "chart": charts.placement_scores(nodes, plugins),
        }
    if kind == "eviction":
        return {"signals": eviction_signals(result), "ties": tie_numbers(result)}
    if kind == "node-eviction-rate":
        zones = {z.get("key"): zone_label(z) for z in result.get("zones") or []}
        return {
            "zones": zones,
            "chart": charts.eviction_timeline(
                result.get("nodes") or [],
                result.get("pods") or [],
                result.get("now") or (request or {}).get("now"),
            ),
        }
    if kind == "drain":
        return drain_context(result)
    if kind == "preemption":
        nodes = result.get("nodes") or {}
        chosen = result.get("nominatedNodeName")
        return {
            "words": [preemption_words(request or {}, v) for v in result.get("victims") or []],
            "others": [
                {"nodeName": name, **(status or {})}
                for name, status in nodes.items()
                if name != chosen
            ],
        }
    if kind in ("schedule", "capacity"):
        return {"nodes": result.get("nodes") or [], "limit": CONSOLE_ROWS}
    return {}


def drain_context(result: dict) -> dict:
    """A drain's pods grouped by node, in the answer's order, and the pods still pending
    after the queue (a recreated copy not bound), which is what keeps a node from going."""
    by_node: dict[str, list[dict]] = {}
    for p in result.get("pods") or []:
        by_node.setdefault((p.get("pod") or {}).get("nodeName", ""), []).append(p)
    pending = [
        {"pod": p.get("pod"), **(p.get("recreated") or {})}
        for p in result.get("pods") or []
        if p.get("recreated") and p["recreated"].get("outcome") != "bound"
    ]
    return {"pods_by_node": by_node, "pending": pending}


# Rows a run's page lists of its steps or placements (the record holds them all; the
# history export gives them whole).
CONSOLE_ROWS = 500
