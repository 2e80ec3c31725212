"""Decision kind "capacity": how many replicas of a pod fit (POST /v1/decisions/capacity;
docs/decisions/capacity.md), as sigs.k8s.io/cluster-capacity answers it.

Request (the contract, openapi/openapi.yaml): ``{"pod": <v1 Pod>}`` or ``{"pods": [<v1
Pod>, ...]}`` (templates placed in turn), ``"maxReplicas"`` (1..100,000, per template),
``"excludeNodes"`` (node names, cordoned first), ``"tieBreak": {"seed": n}``,
``"schedulerConfiguration"``. A template must be unbound and named once.

Result: ``replicas`` (all templates), ``templates`` (per template: the replicas, per node,
and its ``stopReason``: ``reason`` Unschedulable | MaxReplicas | MaxSteps | TimeLimit, the
failing cycle's ``message`` and ``nodeCounts``, each filter reason's number of nodes),
``stopReason`` (the last template's), ``placements`` in order, the ``nodes`` the replicas
changed (requested before and after), ``truncated``, ``message``. The engine is
engine/scheduler/capacity.py.
"""

from __future__ import annotations

from marshmallow import ValidationError, fields, validate, validates_schema

from service.decisions.base import DecisionInputError, DecisionKind, Subjects
from service.decisions.cooperative import Cooperative
from service.decisions.schemas import PodField, StrictSchema
from service.decisions.simulation import (
    SimulationLimits,
    TieBreakSchema,
    check_pods,
    nodes_json,
    profiles_of,
)
from service.engine.objects import Cluster
from service.engine.scheduler.capacity import (
    LIMIT_MAX_REPLICAS,
    UNSCHEDULABLE,
    CapacityRun,
    TemplateCapacity,
    capacity,
)

__all__ = ["DECISION", "MAX_REPLICAS", "CapacityRequestSchema", "decide", "subjects"]

MAX_REPLICAS = 100_000


class CapacityRequestSchema(StrictSchema):
    pod = PodField(load_default=None)
    pods = fields.List(PodField(), load_default=None)
    maxReplicas = fields.Integer(
        load_default=None, strict=True, validate=validate.Range(1, MAX_REPLICAS)
    )
    excludeNodes = fields.List(fields.String(validate=validate.Length(min=1)), load_default=list)
    tieBreak = fields.Nested(TieBreakSchema, load_default=None)
    schedulerConfiguration = fields.Raw(load_default=None, allow_none=True)

    @validates_schema
    def _check(self, data: dict, **kwargs) -> None:
        given = [f for f in ("pod", "pods") if data.get(f) is not None]
        if len(given) != 1:
            raise ValidationError({"pod": ["give exactly one of pod (a template) or pods"]})
        if data.get("pods") is not None and not data["pods"]:
            raise ValidationError({"pods": ["no templates: give at least one pod"]})


def _stop_json(answer: TemplateCapacity) -> dict:
    out: dict = {"reason": answer.stop, "message": answer.message}
    if answer.stop == UNSCHEDULABLE:
        out["nodeCounts"] = answer.reasons
    elif answer.stop == LIMIT_MAX_REPLICAS:
        out["message"] = f"maxReplicas reached: {answer.replicas} replicas placed"
    else:
        out["message"] = (
            f"the run stopped at its limit ({answer.stop}) after {answer.replicas} replicas "
            "of this template; more may fit"
        )
    return out


def result_json(run: CapacityRun, cluster: Cluster, seeded: bool) -> dict:
    templates = [
        {
            "pod": {"namespace": a.template.namespace, "name": a.template.name},
            "replicas": a.replicas,
            "nodes": dict(sorted(a.per_node.items())),
            "stopReason": _stop_json(a),
        }
        for a in run.templates
    ]
    total = sum(a.replicas for a in run.templates)
    message = f"{total} replica(s) fit: " + ", ".join(
        f"{t['replicas']} of {t['pod']['namespace']}/{t['pod']['name']}" for t in templates
    )
    message += f". The last stops: {templates[-1]['stopReason']['message']}"
    if not message.endswith("."):
        message += "."
    if run.ties:
        message += (
            f" {run.ties} placement(s) had nodes tied at the top total, where kube-scheduler "
            "picks at random: "
            + ("Verdict picked with tieBreak.seed (reservoir sampling, not Go's random stream)."
               if seeded else "Verdict took the first in snapshot order.")
        )  # fmt: skip
    return {
        "replicas": total,
        "templates": templates,
        "stopReason": templates[-1]["stopReason"],
        "placements": [
            {"template": i, "name": name, "nodeName": node} for i, name, node in run.placements
        ],
        "nodes": nodes_json(cluster, run.nodes),
        "truncated": run.truncated,
        "tieBreak": "seeded" if seeded else "snapshotOrder",
        "ties": run.ties,
        "message": message,
    }


def decide(cluster: Cluster, request: dict) -> dict:
    settings = request["settings"]
    limits: SimulationLimits = request.get("limits") or SimulationLimits()
    profiles = profiles_of(request, settings)
    field = "pod" if request.get("pod") is not None else "pods"
    given = [request["pod"]] if field == "pod" else request["pods"]
    templates = check_pods(cluster, given, profiles, field)
    known = {n.name for n in cluster.nodes}
    for i, name in enumerate(request.get("excludeNodes") or ()):
        if name not in known:
            raise DecisionInputError(f"excludeNodes[{i}]", f"node {name!r} is not in the snapshot")
    seed = (request.get("tieBreak") or {}).get("seed")
    run = capacity(
        cluster,
        templates,
        profiles=profiles,
        settings=settings,
        max_replicas=request.get("maxReplicas"),
        exclude_nodes=tuple(dict.fromkeys(request.get("excludeNodes") or ())),
        tie_break_seed=seed,
        max_steps=limits.max_steps,
        max_seconds=limits.max_seconds,
        between_steps=Cooperative(),
    )
    return result_json(run, cluster, seed is not None)


def subjects(request: dict, result: dict) -> Subjects:
    pods = [f"{t['pod']['namespace']}/{t['pod']['name']}" for t in result["templates"]]
    nodes = dict.fromkeys(n for t in result["templates"] for n in t["nodes"])
    return Subjects(node_names=list(nodes), pods=pods)


DECISION = DecisionKind("capacity", CapacityRequestSchema, decide, subjects, scheduler=True)
