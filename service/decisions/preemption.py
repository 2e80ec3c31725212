"""Decision kind "preemption": kube-scheduler DefaultPreemption's victims for a pending pod
(POST /v1/decisions/preemption).

Request (the contract, openapi/openapi.yaml): ``{"pod": <v1 Pod>, "options": {"minCandidateNodesPercentage": 10,
"minCandidateNodesAbsolute": 100, "offset": 0}, "holdStatefulSetUpgrades": bool,
"holds": [...]}`` (holds as for placement). Percentage 0..100, absolute >= 0, not both 0
(DefaultPreemptionArgs validation); offset >= 0, taken modulo the number of potential nodes.
A pod with ``spec.nodeName`` is rejected (``pod.spec.nodeName``).

Result: ``{"eligible", "nominatedNodeName", "victims", "numPDBViolations", "candidates",
"nodes", "message"}`` plus:

* ``notModelled``: default-profile filters not evaluated for this pod (see placement).
* ``numCandidates``, ``offset``: the candidate count and the start index actually used.
* ``clearedNominations``: pods nominated to the chosen node with a lower priority, whose
  nomination the scheduler clears.

``nominatedNodeName`` is null when the scheduler's PostFilter returns no result (the pod is
not eligible, an error, or no preemption is needed because the pod fits a node), "" when the
result clears the pod's nomination (no node can be made to fit), else the chosen node.
``nodes[name]``: ``status`` / ``reasons`` are the node's filter verdict in this cycle
("Fits", "Unschedulable", "UnschedulableAndUnresolvable"); ``preemption`` says what the
dry run made of it: "Candidate", "NotPotential" (not Unschedulable, so never tried),
"NotVisited" (the dry run stopped before it), "NotAttempted" (no preemption was attempted:
the pod is not eligible or fits a node), or the dry-run status code, with the dry run's
reasons in ``preemptionReasons``. ``message`` is the scheduler's PostFilter message
("preemption: ..."; empty on success), or says that no preemption is needed.
"""

from __future__ import annotations

from marshmallow import RAISE, Schema, ValidationError, fields, validates_schema

from service.decisions.base import (
    DecisionKind,
    Subjects,
    cycle_error_json,
    not_modelled_sentence,
)
from service.decisions.schemas import (
    SchedulerRequestSchema,
    check_resource_api_versions,
    holds_from_request,
    scheduler_profile,
)
from service.engine.objects import Cluster
from service.engine.refs import pod_ref
from service.engine.scheduler.framework import SUCCESS, PodInfo
from service.engine.scheduler.preemption import PreemptionOutcome, preempt
from service.engine.scheduler.profile import DefaultPreemptionArgs
from service.engine.version import EngineSettings

__all__ = ["DECISION", "PreemptionOptionsSchema", "PreemptionRequestSchema", "decide", "subjects"]


class PreemptionOptionsSchema(Schema):
    class Meta:
        unknown = RAISE

    minCandidateNodesPercentage = fields.Integer(load_default=None, strict=True)
    minCandidateNodesAbsolute = fields.Integer(load_default=None, strict=True)
    offset = fields.Integer(load_default=0, strict=True)

    @validates_schema
    def _check(self, data: dict, **kwargs) -> None:
        errors: dict = {}
        pct = data.get("minCandidateNodesPercentage")
        pct = 10 if pct is None else pct
        absolute = data.get("minCandidateNodesAbsolute")
        absolute = 100 if absolute is None else absolute
        if pct < 0 or pct > 100:
            errors["minCandidateNodesPercentage"] = ["not in valid range [0, 100]"]
        if absolute < 0:
            errors["minCandidateNodesAbsolute"] = ["not in valid range [0, inf)"]
        if pct == 0 and absolute == 0:
            errors.setdefault("minCandidateNodesPercentage", []).append(
                "cannot be zero at the same time as minCandidateNodesAbsolute"
            )
        if data.get("offset", 0) < 0:
            errors["offset"] = ["must not be negative"]
        if errors:
            raise ValidationError(errors)


class PreemptionRequestSchema(SchedulerRequestSchema):
    options = fields.Nested(PreemptionOptionsSchema, load_default=None)


def _status_name(code: str) -> str:
    return "Fits" if code == SUCCESS else code


def _ref(pi: PodInfo, node_name: str, settings: EngineSettings) -> dict:
    """The PodRef of a pod on ``node_name``; a restored view keeps only the fields it needs
    for one (see ``PodInfo``)."""
    if pi.pod is not None:
        return pod_ref(pi.pod, settings=settings)
    return {
        "namespace": pi.namespace,
        "name": pi.name,
        "uid": pi.uid,
        "nodeName": node_name,
        "priority": pi.priority,
        "qosClass": pi.qos,
    }


def result_json(
    outcome: PreemptionOutcome, node_names: list[str], settings: EngineSettings
) -> dict:
    refs: dict[int, dict] = {}

    def ref(pi: PodInfo, node_name: str) -> dict:
        found = refs.get(id(pi))
        if found is None:
            found = refs[id(pi)] = _ref(pi, node_name, settings)
        return found

    candidate_nodes = {c.node_name for c in outcome.candidates}
    potential = set(outcome.potential_nodes)
    statuses = outcome.filter_statuses or {}
    attempted = outcome.eligible and not outcome.fits_without_preemption
    nodes: dict[str, dict] = {}
    for name in node_names:
        status = statuses.get(name)
        entry: dict = {
            "status": _status_name(status.code) if status is not None else None,
            "reasons": list(status.reasons) if status is not None else [],
        }
        dry = outcome.dry_run_statuses.get(name)
        if not attempted:
            entry["preemption"] = "NotAttempted"
        elif name in candidate_nodes:
            entry["preemption"] = "Candidate"
        elif dry is not None:
            entry["preemption"] = dry.code
            entry["preemptionReasons"] = list(dry.reasons)
        elif name in potential:
            entry["preemption"] = "NotVisited"
        else:
            entry["preemption"] = "NotPotential"
        nodes[name] = entry
    message = (outcome.message or _nomination_sentence(outcome)) + not_modelled_sentence(
        outcome.not_modelled
    )
    result = {
        "eligible": outcome.eligible,
        "nominatedNodeName": outcome.nominated_node_name,
        "victims": [ref(v, outcome.nominated_node_name or "") for v in outcome.victims],
        "numPDBViolations": outcome.num_pdb_violations,
        "candidates": [
            {
                "nodeName": c.node_name,
                "victims": [ref(v, c.node_name) for v in c.victims],
                "numPDBViolations": c.num_pdb_violations,
            }
            for c in outcome.candidates
        ],
        "nodes": nodes,
        "message": message.strip(),
        "notModelled": list(outcome.not_modelled),
        "numCandidates": outcome.num_candidates,
        "offset": outcome.offset,
        "clearedNominations": [
            pod_ref(p.pod, settings=settings)
            for p in outcome.cleared_nominations
            if p.pod is not None
        ],
    }
    if outcome.cycle_error is not None:
        result["cycleError"] = cycle_error_json(outcome.cycle_error)
    return result


def _nomination_sentence(outcome) -> str:
    """The scheduler's PostFilter says nothing when it succeeds; the answer says what it
    decided, in one sentence."""
    if not outcome.nominated_node_name:
        return ""
    count = len(outcome.victims)
    victims = f"{count} pod{'s' if count != 1 else ''} of lower priority"
    return (
        f'"{outcome.nominated_node_name}" is nominated: preempting {victims} there makes the pod '
        f"fit ({len(outcome.candidates)} candidate node"
        f"{'s' if len(outcome.candidates) != 1 else ''} considered, "
        f"{outcome.num_pdb_violations} PodDisruptionBudget violation"
        f"{'s' if outcome.num_pdb_violations != 1 else ''})."
    )


def decide(cluster: Cluster, request: dict) -> dict:
    options = request.get("options") or {}
    settings = request["settings"]
    check_resource_api_versions(cluster, settings)
    outcome = preempt(
        cluster,
        request["pod"],
        profile=request.get("profile") or scheduler_profile(request, settings),
        args=_preemption_args(options),
        offset=options.get("offset", 0),
        settings=settings,
        hold_statefulset_upgrades=request.get("holdStatefulSetUpgrades", False),
        holds=holds_from_request(cluster, request),
    )
    result = result_json(outcome, [n.name for n in cluster.nodes], request["settings"])
    _explain_victims(result, request["pod"])
    return result


def _preemption_args(options: dict) -> DefaultPreemptionArgs | None:
    """The request's own DefaultPreemptionArgs when it gives either count; otherwise the
    profile's (the configuration's pluginConfig, or the defaults 10 % / 100)."""
    pct = options.get("minCandidateNodesPercentage")
    absolute = options.get("minCandidateNodesAbsolute")
    if pct is None and absolute is None:
        return None
    return DefaultPreemptionArgs(10 if pct is None else pct, 100 if absolute is None else absolute)


def _explain_victims(result: dict, preemptor) -> None:
    """Each chosen victim says why, in the words the scheduler writes on it: the
    DisruptionTarget condition message and the Preempted event."""
    node = result.get("nominatedNodeName")
    scheduler = preemptor.scheduler_name or "default-scheduler"
    priority = preemptor.priority if preemptor.priority is not None else 0
    for victim in result["victims"]:
        victim["reason"] = (
            f"{scheduler}: preempting to accommodate a higher priority pod "
            f"(Preempted by pod {preemptor.uid or preemptor.key} on node {node}; "
            f"victim priority {victim['priority']} < {priority})"
        )


def subjects(request: dict, result: dict) -> Subjects:
    pod = request["pod"]
    nodes = [result["nominatedNodeName"]] if result.get("nominatedNodeName") else []
    pods = [pod.key] + [f"{v['namespace']}/{v['name']}" for v in result["victims"]]
    return Subjects(node_names=nodes, pods=pods)


DECISION = DecisionKind("preemption", PreemptionRequestSchema, decide, subjects, scheduler=True)
