"""Decision kind "drain": ``kubectl drain`` of some nodes, then where the recreated pods go
(POST /v1/decisions/drain; docs/decisions/drain.md).

Request (openapi/openapi.yaml): ``{"nodes": [name, ...], "options": {...},
"schedulerConfiguration", "tieBreak": {"seed"}, "preemption", "now"}``.

* ``options``: kubectl drain's flags, with its defaults: ``ignoreDaemonSets``,
  ``deleteEmptyDirData``, ``force``, ``disableEviction``, ``ignoreErrors`` (false),
  ``skipWaitForDeleteTimeout`` (seconds, 0); ``respectPodDisruptionBudgets`` (default: the
  opposite of ``disableEviction``): false deletes the pods as ``disableEviction`` does.
  ``disableEviction: true`` with ``respectPodDisruptionBudgets: true`` is a conflict (422).
* ``nodes``: at least one, each in the snapshot, none twice (422 naming ``nodes[i]``).

The engine (engine/drain/) cordons the nodes and evicts; the recreated pods then go through
the scheduling queue (engine/scheduler/queue.py) on the cordoned cluster without the
deleted pods (applied to the snapshot's own scheduler view: no second view is built). Result: ``pods`` (each pod of the drained nodes: ``evicted | blocked | kept``,
the reason, the budget, and where its recreated copy lands), ``nodes`` (kubectl's verdict
and ``drainable``: every pod evicted or allowed to stay and every recreated pod bound),
``budgets`` (disruptionsAllowed before and after), ``queue`` (the steps), ``counts``,
``stoppedAt`` and ``message``.
"""

from __future__ import annotations

from marshmallow import ValidationError, fields, validate, validates_schema

from service.decisions.base import DecisionInputError, DecisionKind, Subjects, resolve_now
from service.decisions.cooperative import Cooperative
from service.decisions.schemas import StrictBoolean, StrictSchema, time_field
from service.decisions.simulation import (
    SimulationLimits,
    TieBreakSchema,
    profiles_of,
    tie_sentence,
)
from service.engine.drain import DrainOptions, DrainPlan, drain_nodes
from service.engine.objects import Cluster, Pod
from service.engine.scheduler.queue import BOUND, QueueRun, run_queue

__all__ = ["DECISION", "DrainRequestSchema", "decide", "subjects"]

# Why a pod the drain leaves is allowed to stay (the node can still go).
STAYS = {"DaemonSet", "MirrorPod", "SkipDeleted"}

KEPT_MESSAGES = {
    "MirrorPod": "mirror pod: the kubelet runs its static pod; kubectl drain skips it",
    "SkipDeleted": "deleted longer ago than --skip-wait-for-delete-timeout: skipped",
}


class DrainOptionsSchema(StrictSchema):
    ignoreDaemonSets = StrictBoolean(load_default=False)
    deleteEmptyDirData = StrictBoolean(load_default=False)
    force = StrictBoolean(load_default=False)
    disableEviction = StrictBoolean(load_default=False)
    respectPodDisruptionBudgets = StrictBoolean(load_default=None, allow_none=True)
    ignoreErrors = StrictBoolean(load_default=False)
    skipWaitForDeleteTimeout = fields.Integer(
        load_default=0, strict=True, validate=validate.Range(min=0, max=10**9)
    )

    @validates_schema
    def _check(self, data: dict, **kwargs) -> None:
        if data.get("disableEviction") and data.get("respectPodDisruptionBudgets"):
            raise ValidationError(
                {
                    "respectPodDisruptionBudgets": [
                        "conflicts with disableEviction: deleting pods bypasses their "
                        "PodDisruptionBudgets"
                    ]
                }
            )


class DrainRequestSchema(StrictSchema):
    nodes = fields.List(
        fields.String(validate=validate.Length(min=1)),
        required=True,
        validate=validate.Length(min=1, max=5000, error="give 1 to 5000 nodes to drain"),
    )
    options = fields.Nested(DrainOptionsSchema, load_default=lambda: DrainOptionsSchema().load({}))
    schedulerConfiguration = fields.Raw(load_default=None, allow_none=True)
    tieBreak = fields.Nested(TieBreakSchema, load_default=None, allow_none=True)
    preemption = StrictBoolean(load_default=True)
    now = time_field(load_default=None, allow_none=True)

    @validates_schema
    def _check(self, data: dict, **kwargs) -> None:
        seen: set[str] = set()
        for i, name in enumerate(data.get("nodes") or ()):
            if name in seen:
                raise ValidationError({"nodes": {i: [f"node {name!r} is given twice"]}})
            seen.add(name)


def drain_options(raw: dict) -> DrainOptions:
    respect = raw.get("respectPodDisruptionBudgets")
    return DrainOptions(
        ignore_daemonsets=raw["ignoreDaemonSets"],
        delete_emptydir_data=raw["deleteEmptyDirData"],
        force=raw["force"],
        disable_eviction=raw["disableEviction"] or respect is False,
        skip_wait_for_delete_timeout=raw["skipWaitForDeleteTimeout"],
        ignore_errors=raw["ignoreErrors"],
    )


def _check_nodes(cluster: Cluster, names: list[str]) -> None:
    for i, name in enumerate(names):
        if cluster.node(name) is None:
            raise DecisionInputError(f"nodes[{i}]", f"node {name!r} is not in the snapshot")


def decide(cluster: Cluster, request: dict) -> dict:
    names = request["nodes"]
    _check_nodes(cluster, names)
    options = drain_options(request["options"])
    now = resolve_now(cluster, request)[0] if options.skip_wait_for_delete_timeout else None
    plan = drain_nodes(cluster, names, options, now=now, created_at=cluster.snapshot.captured_at)
    settings = request["settings"]
    limits: SimulationLimits = request.get("limits") or SimulationLimits()
    seed = (request.get("tieBreak") or {}).get("seed")
    run = run_queue(
        cluster,
        plan.recreated,
        cordoned=plan.cordoned,
        deleted=plan.deleted,
        profiles=profiles_of(request, settings),
        settings=settings,
        preemption=request["preemption"],
        tie_break_seed=seed,
        max_steps=limits.max_steps,
        max_seconds=limits.max_seconds,
        between_steps=Cooperative(),
    )
    return result_json(cluster, plan, run, seeded=seed is not None)


def _ref(pod: Pod) -> dict:
    return {"namespace": pod.namespace, "name": pod.name, "uid": pod.uid, "nodeName": pod.node_name}


def _final_steps(run: QueueRun, seeded: bool) -> dict[str, dict]:
    """Each recreated pod's last step: where it is bound or nominated, or why pending."""
    out: dict[str, dict] = {}
    for step in run.steps:
        out[step.pod_key] = {
            "outcome": step.outcome,
            "node": step.node,
            "message": step.message + tie_sentence(step.ties, seeded),
        }
    return out


def _pod_json(fate, placed: dict[str, dict]) -> dict:
    entry = {
        "pod": _ref(fate.pod),
        "outcome": fate.outcome,
        "reason": fate.reason,
        "message": fate.message or KEPT_MESSAGES.get(fate.reason, ""),
    }
    if fate.warning and fate.outcome != "kept":
        entry["warning"] = fate.warning
    answer = fate.eviction
    if answer is not None and answer.pdb:
        entry["pdb"] = {"name": answer.pdb, "disruptionsAllowed": answer.disruptions_allowed}
    if answer is not None and not answer.allowed:
        entry["evictionStatus"] = answer.code
    if fate.outcome == "evicted":
        entry["recreation"] = fate.recreation
        copy = fate.replacement
        if copy is not None:
            step = placed.get(copy.key, {"outcome": "unschedulable", "node": None,
                                         "message": "not scheduled: the run stopped first"})  # fmt: skip
            entry["recreated"] = {"name": copy.name, "uid": copy.uid, **step}
        else:
            entry["recreated"] = None
    return entry


def _node_json(node, pods: list[dict]) -> dict:
    """kubectl's verdict on the node, and ``drainable``: every pod evicted or allowed to
    stay, every recreated copy bound."""
    reasons: list[str] = []
    if node.error:
        reasons.append(node.error)
    for p in pods:
        if p["outcome"] == "blocked":
            reasons.append(f"{p['pod']['namespace']}/{p['pod']['name']} blocked: {p['message']}")
        elif (
            p["outcome"] == "kept" and p["reason"] not in STAYS and node.reached and not node.error
        ):
            reasons.append(f"{p['pod']['namespace']}/{p['pod']['name']} kept: {p['message']}")
        copy = p.get("recreated")
        if copy and copy["outcome"] != BOUND:
            reasons.append(
                f"recreated {p['pod']['namespace']}/{copy['name']} is {copy['outcome']}: "
                f"{copy['message']}"
            )
    counts = {k: sum(p["outcome"] == k for p in pods) for k in ("evicted", "blocked", "kept")}
    return {
        "nodeName": node.node_name,
        "drained": node.drained,
        "drainable": not reasons,
        "reasons": reasons,
        "counts": counts,
    }


def _budgets_json(cluster: Cluster, plan: DrainPlan) -> list[dict]:
    before = {(p.namespace, p.name): p.disruptions_allowed for p in cluster.snapshot.pdbs}
    return [
        {"namespace": ns, "name": name, "disruptionsAllowedBefore": before[(ns, name)],
         "disruptionsAllowedAfter": after}
        for (ns, name), after in sorted(plan.budgets.items())
    ]  # fmt: skip


def _queue_json(run: QueueRun, seeded: bool) -> dict:
    out = {
        "steps": [
            {
                "pod": step.pod_key,
                "outcome": step.outcome,
                "node": step.node,
                "victims": [v.key for v in step.victims],
                "message": step.message + tie_sentence(step.ties, seeded),
                "ties": list(step.ties),
            }
            for step in run.steps
        ],
        "counts": run.counts(),
        "truncated": run.truncated,
    }
    if run.truncated:
        out["limit"] = run.limit
        out["pending"] = list(run.pending)
    return out


def result_json(cluster: Cluster, plan: DrainPlan, run: QueueRun, *, seeded: bool) -> dict:
    placed = _final_steps(run, seeded)
    pods: list[dict] = []
    nodes: list[dict] = []
    for node in plan.nodes:
        rows = [_pod_json(f, placed) for f in node.pods]
        pods.extend(rows)
        nodes.append(_node_json(node, rows))
    recreated = [p["recreated"] for p in pods if p.get("recreated")]
    counts = {k: sum(p["outcome"] == k for p in pods) for k in ("evicted", "blocked", "kept")}
    counts["recreated"] = len(recreated)
    counts["placed"] = sum(r["outcome"] == BOUND for r in recreated)
    counts["pending"] = counts["recreated"] - counts["placed"]
    return {
        "nodes": nodes,
        "pods": pods,
        "budgets": _budgets_json(cluster, plan),
        "queue": _queue_json(run, seeded),
        "counts": counts,
        "stoppedAt": plan.stopped_at,
        "message": _message(plan, run, nodes, counts),
    }


def _message(plan: DrainPlan, run: QueueRun, nodes: list[dict], counts: dict) -> str:
    drainable = [n["nodeName"] for n in nodes if n["drainable"]]
    parts = [
        f"{len(drainable)} of {len(nodes)} node(s) drainable. {counts['evicted']} pod(s) "
        f"evicted or deleted, {counts['blocked']} blocked, "
        f"{counts['kept']} kept; {counts['recreated']} recreated, {counts['placed']} placed, "
        f"{counts['pending']} pending."
    ]
    if plan.stopped_at is not None:
        parts.append(
            f"kubectl drain stops at node {plan.stopped_at!r} (the later nodes stay cordoned, "
            "not drained); ignoreErrors goes on."
        )
    if run.truncated:
        parts.append(
            f"The scheduling queue stopped at its limit ({run.limit}) after {len(run.steps)} "
            f"cycles: {len(run.pending)} recreated pods were not scheduled."
        )
    if plan.budgets and counts["evicted"] > 1:
        parts.append(
            "kubectl evicts a node's pods concurrently: which of two pods under one budget "
            "gets its last disruption is a race; Verdict evicts in list order (namespace, name)."
        )
    return " ".join(parts)


def subjects(request: dict, result: dict) -> Subjects:
    return Subjects(
        node_names=list(request["nodes"]),
        pods=[f"{p['pod']['namespace']}/{p['pod']['name']}" for p in result["pods"]],
    )


DECISION = DecisionKind("drain", DrainRequestSchema, decide, subjects)
