"""Every case of tests/conformance/scheduler.json, run against the engine function its group
names. Cases Verdict cannot express (filters it does not model) are xfail, strictly, with the
reason; the engine is still required to report those filters as not modelled."""

from __future__ import annotations

from datetime import datetime

import pytest

from service.engine.scheduler.framework import UNRESOLVABLE, UNSCHEDULABLE
from service.engine.scheduler.nominated import prepare_nominated, queue_sort_less
from service.engine.scheduler.plugins.default_preemption import (
    calculate_num_candidates,
    pod_eligible_to_preempt_others,
)
from service.engine.scheduler.plugins.noderesources.fit import fits_request
from service.engine.scheduler.plugins.noderesources.resource_allocation import (
    BalancedAllocationScorer,
    ResourceAllocationScorer,
    ScoringError,
    broken_linear_function,
    validate_scoring_strategy,
)
from service.engine.scheduler.preemption import (
    dry_run_preemption,
    nodes_for_status_code,
    nodes_where_preemption_might_help_legacy,
    preempt,
    select_candidate,
)
from service.engine.scheduler.profile import (
    DefaultPreemptionArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
)
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object
from tests.engine.scheduler.helpers import cluster_of, conformance_group, cycle

UNMODELLED_FILTERS = {"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"}


def _cases(prefix: str) -> list:
    return [
        pytest.param(case, id=case["name"], marks=_marks(case))
        for case in conformance_group(prefix)
    ]


def _marks(case: dict) -> list:
    filters = set(case["input"].get("filters") or ())
    missing = filters & UNMODELLED_FILTERS
    if missing:
        return [
            pytest.mark.xfail(
                strict=True,
                reason=f"needs the {', '.join(sorted(missing))} filter, which Verdict does not "
                "model (reported in notModelled instead)",
            )
        ]
    return []


def _victim_names(candidate) -> list[str]:
    return sorted(v.name for v in candidate.victims)


# --- DryRunPreemption ---


@pytest.mark.parametrize("case", _cases("scheduler.preemption.DryRunPreemption"))
def test_dry_run_preemption(case: dict) -> None:
    i = case["input"]
    cl = cluster_of(i["nodes"], i["pods"], i["pdbs"])
    view = scheduler_view(cl, settings=DEFAULT_SETTINGS)
    args = i["args"]
    for cycle_no, (raw, expected) in enumerate(
        zip(i["preemptors"], case["expected"]["cycles"], strict=True)
    ):
        p = pod_from_object(raw)
        fwk, ctx = cycle(p, view)
        prepare_nominated(ctx, view)
        potential = [view.by_name[name] for name in i["potentialNodesOrder"]]
        offsets = i.get("offsets") or []
        offset = (
            offsets[cycle_no] if cycle_no < len(offsets) and offsets[cycle_no] is not None else 0
        )
        n = calculate_num_candidates(
            len(potential), args["minCandidateNodesPercentage"], args["minCandidateNodesAbsolute"]
        )
        candidates, _, errors = dry_run_preemption(fwk, ctx, view, potential, offset, n)
        got = sorted(
            (
                {
                    "node": c.node_name,
                    "victims": _victim_names(c),
                    "numPDBViolations": c.num_pdb_violations,
                }
                for c in candidates
            ),
            key=lambda c: c["node"],
        )
        want = [
            {**c, "victims": sorted(c["victims"])}
            for c in sorted(expected["candidates"], key=lambda c: c["node"])
        ]
        assert got == want
        assert errors == []
        missing = set(i.get("filters") or ()) & UNMODELLED_FILTERS
        if missing:
            assert missing <= set(ctx.not_modelled)


# --- SelectCandidate / pickOneNodeForPreemption ---


@pytest.mark.parametrize("case", _cases("scheduler.preemption.SelectCandidate"))
def test_select_candidate(case: dict) -> None:
    i = case["input"]
    cl = cluster_of(i["nodes"], i["pods"], i["pdbs"])
    view = scheduler_view(cl, settings=DEFAULT_SETTINGS)
    fwk, ctx = cycle(pod_from_object(i["preemptor"]), view)
    prepare_nominated(ctx, view)
    args = i["args"]
    n = calculate_num_candidates(
        len(view.nodes), args["minCandidateNodesPercentage"], args["minCandidateNodesAbsolute"]
    )
    candidates, _, _ = dry_run_preemption(fwk, ctx, view, view.nodes, 0, n)
    derived = {
        c["node"]: (sorted(c["victims"]), c["numPDBViolations"])
        for c in case["expected"]["derivedCandidates"]
    }
    assert {c.node_name: (_victim_names(c), c.num_pdb_violations) for c in candidates} == derived
    best = select_candidate(candidates)
    assert best is not None
    assert best.node_name in case["expected"]["acceptableNodes"]


# --- PostFilter and Preempt (node statuses given as the tests give them) ---


@pytest.mark.parametrize("case", _cases("scheduler.DefaultPreemption.PostFilter"))
def test_post_filter(case: dict) -> None:
    i = case["input"]
    cl = cluster_of(i["nodes"], i["pods"], i["pdbs"])
    args = i["args"]
    out = preempt(
        cl,
        pod_from_object(i["preemptor"]),
        args=DefaultPreemptionArgs(
            args["minCandidateNodesPercentage"], args["minCandidateNodesAbsolute"]
        ),
        node_statuses=i["nodeStatuses"],
        absent_status=i["absentNodesStatus"],
        settings=DEFAULT_SETTINGS,
    )
    e = case["expected"]
    assert out.nominated_node_name == e["nominatedNodeName"]
    assert out.code == e["statusCode"]
    assert out.message == e["message"]


@pytest.mark.parametrize("case", _cases("scheduler.preemption.Evaluator.Preempt"))
def test_preempt(case: dict) -> None:
    i = case["input"]
    cl = cluster_of(i["nodes"], i["pods"], i["pdbs"])
    out = preempt(
        cl,
        pod_from_object(i["preemptor"]),
        node_statuses=i["nodeStatuses"],
        absent_status=i["absentNodesStatus"],
        settings=DEFAULT_SETTINGS,
    )
    e = case["expected"]
    assert out.nominated_node_name == e["nominatedNodeName"]
    assert sorted(v.name for v in out.victims) == sorted(e["victims"])
    if "statusMessage" in e:
        assert out.message == "preemption: " + e["statusMessage"]


@pytest.mark.parametrize("case", _cases("scheduler.DefaultPreemption.PodEligibleToPreemptOthers"))
def test_pod_eligible_to_preempt_others(case: dict) -> None:
    i = case["input"]
    cl = cluster_of(i["nodes"], i.get("pods") or [])
    eligible, message = pod_eligible_to_preempt_others(
        scheduler_view(cl, settings=DEFAULT_SETTINGS),
        pod_from_object(i["preemptor"]),
        i["nominatedNodeStatusCode"],
    )
    assert eligible == case["expected"]["eligible"]
    assert message == case["expected"]["message"]


# --- potential nodes ---


@pytest.mark.parametrize("case", _cases("scheduler.framework.NodeToStatus.NodesForStatusCode"))
def test_nodes_for_status_code(case: dict) -> None:
    i = case["input"]
    got = nodes_for_status_code(i["nodes"], i["nodeStatuses"], i["absentNodesStatus"], i["code"])
    assert sorted(got) == sorted(case["expected"]["nodes"])


@pytest.mark.parametrize(
    "case", _cases("scheduler.preemption.nodesWherePreemptionMightHelp (LEGACY")
)
def test_nodes_where_preemption_might_help_legacy(case: dict) -> None:
    i = case["input"]
    legacy = nodes_where_preemption_might_help_legacy(i["nodes"], i["nodeStatuses"])
    assert sorted(legacy) == sorted(case["expected"]["nodes"])
    newest = nodes_for_status_code(i["nodes"], i["nodeStatuses"], UNRESOLVABLE, UNSCHEDULABLE)
    assert sorted(newest) == sorted(case["expected"]["newestEquivalent_derived"])


@pytest.mark.parametrize("case", _cases("scheduler.DefaultPreemption.calculateNumCandidates"))
def test_calculate_num_candidates(case: dict) -> None:
    i = case["input"]
    got = calculate_num_candidates(
        i["numNodes"], i["minCandidateNodesPercentage"], i["minCandidateNodesAbsolute"]
    )
    assert got == case["expected"]["numCandidates"]


# --- NodeResourcesFit filter ---


@pytest.mark.parametrize("case", _cases("scheduler.NodeResourcesFit.Filter"))
def test_fits_request(case: dict) -> None:
    i = case["input"]
    cl = cluster_of([i["node"]], i["existingPods"])
    view = scheduler_view(cl, settings=DEFAULT_SETTINGS)
    args = NodeResourcesFitArgs(
        frozenset(i["args"].get("ignoredResources") or ()),
        frozenset(i["args"].get("ignoredResourceGroups") or ()),
    )
    fwk, ctx = cycle(pod_from_object(i["pod"]), view, args)
    ni = view.nodes[0]
    got = fits_request(ctx.read("NodeResourcesFit"), ni.allocatable, ni.requested, ni.pod_count)
    e = case["expected"]
    assert [
        {
            "resourceName": r.resource_name,
            "reason": r.reason,
            "requested": r.requested,
            "used": r.used,
            "capacity": r.capacity,
            "unresolvable_newest": r.unresolvable,
        }
        for r in got
    ] == e["insufficientResources"]
    status = fwk.filter_plugins[5].filter(ctx, ni, ni)
    assert fwk.filter_plugins[5].name == "NodeResourcesFit"
    if e["fits"]:
        assert status is None
    else:
        assert status is not None
        assert list(status.reasons) == e["reasons"]
        assert status.code == e["statusCode_newest_derived"]


# --- scoring ---


def _strategy(raw: dict) -> tuple[str, list[ResourceSpec], list[tuple[int, int]] | None]:
    resources = [ResourceSpec(r["name"], r["weight"]) for r in raw.get("resources") or ()]
    shape = None
    if raw.get("requestedToCapacityRatio"):
        shape = [(p["utilization"], p["score"]) for p in raw["requestedToCapacityRatio"]["shape"]]
    return raw["type"], resources, shape


def _score_cases() -> list:
    out = []
    for prefix in (
        "scheduler.NodeResourcesFit.Score (LeastAllocated)",
        "scheduler.NodeResourcesFit.Score (MostAllocated)",
        "scheduler.NodeResourcesFit.Score (all strategies)",
        "scheduler.NodeResourcesFit.Score (RequestedToCapacityRatio)",
    ):
        out.extend(
            pytest.param(c, id=f"{prefix.split('(')[1].rstrip(')')}: {c['name']}")
            for c in conformance_group(prefix)
        )
    return out


@pytest.mark.parametrize("case", _score_cases())
def test_fit_score(case: dict) -> None:
    i = case["input"]
    strategy, resources, shape = _strategy(i["scoringStrategy"])
    e = case["expected"]
    errors = validate_scoring_strategy(strategy, resources, shape)
    if "configError" in e:
        assert e["configError"]["field"] in [path for path, _ in errors]
        return
    assert errors == []
    cl = cluster_of(i["nodes"], [p for p in i["existingPods"] if p["spec"].get("nodeName")])
    view = scheduler_view(cl, settings=DEFAULT_SETTINGS)
    scorer = ResourceAllocationScorer(strategy, resources, shape)
    prepared = scorer.prepare(pod_from_object(i["pod"]), settings=DEFAULT_SETTINGS)
    got = {}
    for ni in view.nodes:
        try:
            got[ni.name] = scorer.score(
                prepared, ni.allocatable, ni.requested, ni.nz_cpu, ni.nz_mem
            )
        except ScoringError:
            assert e.get("scoreStatusCode") == "Error"
            got[ni.name] = 0
    assert got == e["scores"]


@pytest.mark.parametrize("case", _cases("scheduler.helper.BuildBrokenLinearFunction"))
def test_broken_linear_function(case: dict) -> None:
    f = broken_linear_function([(p["utilization"], p["score"]) for p in case["input"]["shape"]])
    for point in case["expected"]["values"]:
        assert f(point["p"]) == point["f"], point


@pytest.mark.parametrize("case", _cases("scheduler.NodeResourcesBalancedAllocation"))
def test_balanced_allocation(case: dict) -> None:
    i = case["input"]
    resources = [ResourceSpec(r["name"], r["weight"]) for r in i["args"]["resources"]]
    cl = cluster_of(i["nodes"], i["existingPods"])
    view = scheduler_view(cl, settings=DEFAULT_SETTINGS)
    scorer = BalancedAllocationScorer(resources)
    prepared = scorer.prepare(pod_from_object(i["pod"]), settings=DEFAULT_SETTINGS)
    e = case["expected"]
    if e["preScoreStatusCode"] == "Skip":
        assert prepared is None
        return
    assert prepared is not None
    got = {ni.name: scorer.score(prepared, ni.allocatable, ni.requested) for ni in view.nodes}
    assert got == e["scores"]


# --- queue order ---


def _ts(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


@pytest.mark.parametrize("case", _cases("scheduler.PrioritySort.Less"))
def test_priority_sort_less(case: dict) -> None:
    i = case["input"]
    p1, p2 = pod_from_object(i["p1"]["pod"]), pod_from_object(i["p2"]["pod"])
    got = queue_sort_less(
        p1.priority, _ts(i["p1"]["queueTimestamp"]), p2.priority, _ts(i["p2"]["queueTimestamp"])
    )
    assert got == case["expected"]["p1BeforeP2"]


def test_every_group_is_covered() -> None:
    """Sixteen groups in the data file; each prefix above selects exactly one."""
    import json

    from tests.engine.scheduler.helpers import CONFORMANCE

    groups = json.loads(CONFORMANCE.read_text())["groups"]
    assert len(groups) == 16


def _unmodelled_cases() -> list:
    out = []
    for prefix in ("scheduler.preemption.DryRunPreemption", "scheduler.preemption.Evaluator"):
        for case in conformance_group(prefix):
            missing = set(case["input"].get("filters") or ()) & UNMODELLED_FILTERS
            if missing:
                out.append(pytest.param(case, sorted(missing), id=case["name"]))
    return out


@pytest.mark.parametrize(("case", "missing"), _unmodelled_cases())
def test_unmodelled_filters_are_reported(case: dict, missing: list[str]) -> None:
    """The cases Verdict cannot decide still never pass silently: the preemption outcome
    names the filters it did not evaluate."""
    i = case["input"]
    cl = cluster_of(i["nodes"], i["pods"], i["pdbs"])
    raw = i["preemptors"][0] if "preemptors" in i else i["preemptor"]
    out = preempt(cl, pod_from_object(raw), settings=DEFAULT_SETTINGS)
    assert set(missing) <= set(out.not_modelled)
