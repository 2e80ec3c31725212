"""Decision kind "schedule": the scheduling queue run until it is empty
(POST /v1/decisions/schedule; docs/decisions/schedule.md).

Request (the contract, openapi/openapi.yaml): ``{"pods": [<v1 Pod>, ...], "preemption":
true, "tieBreak": {"seed": n}, "schedulerConfiguration": ...}``. Without ``pods``, the
snapshot's pending pods: no nodeName, not terminal, not being deleted, whose schedulerName
has a profile. A given pod must be unbound, named once, and not a pod the snapshot has
bound (a pending one it replaces).

Result: ``steps`` (each pod's cycle in order: pod, outcome ``bound | nominated |
unschedulable``, nodeName, victims, message, attempt, ties, nodeCounts), ``counts``, the
``nodes`` the run changed with their requested amounts before and after, ``truncated``
(with ``limit`` and the ``pending`` pods left when a run limit stopped it), and a
``message``. The engine is engine/scheduler/queue.py.
"""

from __future__ import annotations

from marshmallow import ValidationError, fields, validates_schema

from service.decisions.base import DecisionInputError, DecisionKind, Subjects
from service.decisions.cooperative import Cooperative
from service.decisions.schemas import PodField, StrictSchema
from service.decisions.simulation import (
    SimulationLimits,
    TieBreakSchema,
    check_pods,
    nodes_json,
    profiles_of,
    step_json,
)
from service.engine.objects import Cluster, Pod
from service.engine.scheduler.profile import DEFAULT_SCHEDULER_NAME, Profile
from service.engine.scheduler.queue import BOUND, NOMINATED, UNSCHEDULABLE, QueueRun, run_queue
from service.engine.summary import TERMINAL_PHASES

__all__ = ["DECISION", "ScheduleRequestSchema", "decide", "pending_pods", "subjects"]


class ScheduleRequestSchema(StrictSchema):
    pods = fields.List(PodField(), load_default=None)
    preemption = fields.Boolean(load_default=True)
    tieBreak = fields.Nested(TieBreakSchema, load_default=None)
    schedulerConfiguration = fields.Raw(load_default=None, allow_none=True)

    @validates_schema
    def _check(self, data: dict, **kwargs) -> None:
        if data.get("pods") is not None and not data["pods"]:
            raise ValidationError({"pods": ["no pods to schedule: give at least one pod"]})


def pending_pods(cluster: Cluster, profiles: dict[str, Profile]) -> list[Pod]:
    """The pods the scheduler's queue holds: unbound, not terminal, not being deleted
    (``skipPodSchedule``), with a profile for their schedulerName."""
    return [
        p
        for p in cluster.snapshot.pods
        if not p.node_name
        and p.phase not in TERMINAL_PHASES
        and p.deletion_timestamp is None
        and (p.scheduler_name or DEFAULT_SCHEDULER_NAME) in profiles
    ]


def result_json(run: QueueRun, cluster: Cluster, settings, seeded: bool) -> dict:
    counts = run.counts()
    summary = {
        "pods": len({s.pod_key for s in run.steps}) + len(run.pending),
        "steps": len(run.steps),
        BOUND: counts.get(BOUND, 0),
        NOMINATED: counts.get(NOMINATED, 0),
        UNSCHEDULABLE: counts.get(UNSCHEDULABLE, 0),
        "preempted": sum(len(s.victims) for s in run.steps),
        "pending": len(run.pending),
    }
    message = (
        f"{summary[BOUND]} of {summary['pods']} pods bound, {summary[NOMINATED]} nominated "
        f"(waiting for their victims), {summary[UNSCHEDULABLE]} unschedulable; "
        f"{summary['preempted']} pods preempted."
    )
    ties = sum(1 for s in run.steps if s.ties)
    if ties:
        message += (
            f" {ties} steps had nodes tied at the top total, where kube-scheduler picks at "
            + ("random: Verdict picked with tieBreak.seed." if seeded else
               "random: Verdict took the first in snapshot order.")
        )  # fmt: skip
    result = {
        "steps": [step_json(s, settings, seeded) for s in run.steps],
        "counts": summary,
        "nodes": nodes_json(cluster, run.nodes),
        "truncated": run.truncated,
        "tieBreak": "seeded" if seeded else "snapshotOrder",
        "message": message,
    }
    if run.truncated:
        result["limit"] = run.limit
        result["pending"] = run.pending
        result["message"] += (
            f" The run stopped at its limit ({run.limit}) after {len(run.steps)} cycles with "
            f"{len(run.pending)} pods still queued."
        )
    return result


def decide(cluster: Cluster, request: dict) -> dict:
    settings = request["settings"]
    limits: SimulationLimits = request.get("limits") or SimulationLimits()
    profiles = profiles_of(request, settings)
    given = request.get("pods")
    if given is None:
        pods = pending_pods(cluster, profiles)
        if not pods:
            raise DecisionInputError(
                "pods", "no pods to schedule: the snapshot has no pending pod; give pods"
            )
    else:
        pods = check_pods(cluster, given, profiles, "pods")
    seed = (request.get("tieBreak") or {}).get("seed")
    run = run_queue(
        cluster,
        pods,
        profiles=profiles,
        settings=settings,
        preemption=request.get("preemption", True),
        tie_break_seed=seed,
        max_steps=limits.max_steps,
        max_seconds=limits.max_seconds,
        between_steps=Cooperative(),
    )
    return result_json(run, cluster, settings, seed is not None)


def subjects(request: dict, result: dict) -> Subjects:
    nodes = dict.fromkeys(s["nodeName"] for s in result["steps"] if s["nodeName"])
    pods = dict.fromkeys(f"{s['pod']['namespace']}/{s['pod']['name']}" for s in result["steps"])
    for s in result["steps"]:
        pods.update(dict.fromkeys(f"{v['namespace']}/{v['name']}" for v in s["victims"]))
    return Subjects(node_names=list(nodes), pods=list(pods))


DECISION = DecisionKind("schedule", ScheduleRequestSchema, decide, subjects, scheduler=True)
