"""Capacity (engine/scheduler/capacity.py) against the real kube-scheduler v1.35.4
(``verdict-oracle --profile full``), replica by replica (issue 27).

Each random cluster of workloads (test_queue_oracle.queue_case) gets one to three templates
copied from its workloads' pods and changed (replica_templates.variant) so that their
replicas spread over zones or hosts (ScheduleAnyway and DoNotSchedule), repel each other,
keep to some zones or tolerate taints; some runs exclude nodes, cap the replicas, break
ties with a seed, or run every replica's full cycle. Verdict runs capacity; then every
replica is asked of the oracle on the state Verdict's earlier replicas produced (the
excluded nodes cordoned): its node must be in the oracle's top set, and a template's
failing replica (its stop) must be unschedulable there too with the same filter reasons on
as many nodes (the stop reason's counts). Over the seeds the walks go through capacity's
group path (score_groups.py), its node-by-node path (incremental.py) and full cycles
(``test_the_walks_take_every_path``). ``VERDICT_ORACLE_SEEDS`` widens the run."""

from __future__ import annotations

import copy
import random
from collections import Counter
from dataclasses import dataclass

import pytest

from service.engine.objects import Cluster, Pod
from service.engine.scheduler.capacity import UNSCHEDULABLE, CapacityRun, capacity, replica
from service.engine.scheduler.profile import DEFAULT_SCHEDULER_NAME
from service.engine.version import settings_for
from service.ingest.kube import pod_from_object
from tests.conftest import snapshot_from_objects
from tests.engine.scheduler.oracle import needs_oracle, oracle_profile, run_oracles
from tests.engine.scheduler.replica_templates import variant
from tests.engine.scheduler.test_queue_oracle import State, queue_case
from tests.oracles import seeds

VERSION = "1.35"
PROFILES = {DEFAULT_SCHEDULER_NAME: oracle_profile("full", VERSION)}
# How a template's replicas place themselves (replica_templates.KINDS); "zonal" and
# "tolerant" are added now and then. "solo" drops the workload's pod (anti-)affinity, which
# the group path needs.
_SHAPES = (
    ("as-is",),
    ("anyway",),
    ("solo", "anyway"),
    ("solo", "anyway"),
    ("solo", "anyway"),
    ("solo", "anyway", "zonal"),
    ("solo",),
    ("hard",),
    ("solo", "hard"),
    ("host-anyway",),
    ("host-hard",),
    ("repel",),
)
_CPU_FLOOR = ("250m", "500m")  # a replica's least CPU request: runs stop within some dozens


@dataclass
class CapacityCase:
    """A cluster (bound pods only), the templates in their order, and capacity's options."""

    objects: list[dict]
    templates: list[dict]
    exclude_nodes: list[str]
    max_replicas: int | None
    tie_break_seed: int | None
    incremental: bool


def capacity_case(seed: int) -> CapacityCase:
    """A random cluster of workloads (queue_case: roomy nodes on even seeds, small ones on
    odd seeds) and templates copied from its pods; the roomy clusters' runs always capped."""
    objects, pods = queue_case(seed)
    rng = random.Random(f"capacity/{seed}")
    templates = []
    for i, source in enumerate(rng.sample(pods, rng.randint(1, min(3, len(pods))))):
        extras = [k for k in ("zonal", "tolerant") if rng.random() < 0.25]
        template = variant(source, *rng.choice(_SHAPES), *extras)
        template["metadata"].update(name=f"t{i}", uid=f"uid-t{i}")
        template["spec"]["priority"] = 0
        _raise_cpu(template, rng.choice(_CPU_FLOOR))
        templates.append(template)
    nodes = [o["metadata"]["name"] for o in objects if o["kind"] == "Node"]
    exclude = rng.sample(nodes, rng.choice((0, 0, 1, 2)))
    if seed % 2 == 0:
        cap: int | None = rng.randint(4, 16)
    else:
        cap = rng.choice((None, None, 2, 6))
    return CapacityCase(
        objects,
        templates,
        exclude,
        cap,
        tie_break_seed=seed if rng.random() < 0.15 else None,
        incremental=rng.random() < 0.8,
    )


def _raise_cpu(template: dict, floor: str) -> None:
    """The first container asks ``floor`` of CPU (its limit too, when it has one)."""
    resources = template["spec"]["containers"][0].setdefault("resources", {})
    resources.setdefault("requests", {})["cpu"] = floor
    if "cpu" in resources.get("limits", {}):
        resources["limits"]["cpu"] = floor


def run_capacity(case: CapacityCase) -> tuple[list[Pod], CapacityRun]:
    """Verdict's capacity run of the case, and its templates as Verdict read them."""
    pods = [pod_from_object(t) for t in case.templates]
    run = capacity(
        Cluster(snapshot_from_objects(case.objects)),
        pods,
        profiles=PROFILES,
        settings=settings_for(VERSION),
        max_replicas=case.max_replicas,
        exclude_nodes=case.exclude_nodes,
        tie_break_seed=case.tie_break_seed,
        incremental=case.incremental,
    )
    return pods, run


@dataclass
class Cycle:
    """One of the run's cycles as the oracle is asked it: the replica, on the state before
    it, and Verdict's answer (its node, or the stop reason's counts)."""

    oracle_case: dict
    name: str
    node: str | None
    reasons: dict[str, int]


def walk(case: CapacityCase, pods: list[Pod], run: CapacityRun) -> list[Cycle]:
    """Every placement and every Unschedulable stop of the run, in order, each on the state
    the earlier placements left (the excluded nodes cordoned)."""
    state = State([_cordoned(o, case.exclude_nodes) for o in case.objects])
    placements = iter(run.placements)
    cycles = []
    for index, (template, answer) in enumerate(zip(case.templates, run.templates, strict=True)):
        for n in range(1, answer.replicas + 1):
            at, name, node = next(placements)
            pod_json = _replica_json(template, pods[index], n)
            assert (at, name) == (index, pod_json["metadata"]["name"])
            cycles.append(Cycle(_oracle_case(state, pod_json), name, node, {}))
            state.bind(pod_json, node)
        if answer.stop == UNSCHEDULABLE:
            pod_json = _replica_json(template, pods[index], answer.replicas + 1)
            oracle_case = _oracle_case(state, pod_json)
            cycles.append(Cycle(oracle_case, pod_json["metadata"]["name"], None, answer.reasons))
    assert next(placements, None) is None
    return cycles


def _cordoned(obj: dict, names: list[str]) -> dict:
    """The object, a node among ``names`` cordoned (capacity's excludeNodes)."""
    if obj["kind"] != "Node" or obj["metadata"]["name"] not in names:
        return obj
    node = copy.deepcopy(obj)
    node["spec"]["unschedulable"] = True
    return node


def _replica_json(template: dict, pod: Pod, n: int) -> dict:
    """The template's n-th replica as capacity names it (capacity.replica), pending."""
    made = replica(pod, n)
    replica_json = copy.deepcopy(template)
    replica_json["metadata"].update(name=made.name, uid=made.uid)
    return replica_json


def _oracle_case(state: State, pod_json: dict) -> dict:
    return {"kind": "placement", "objects": list(state.objects), "pod": pod_json}


def cycle_differences(cycle: Cycle, theirs: dict) -> list[str]:
    """Where one of Verdict's replicas disagrees with the oracle on the same state."""
    if "error" in theirs:
        return [f"{cycle.name}: oracle cycle error {theirs['error']!r}"]
    best = theirs.get("maxSet") or []
    if cycle.node is not None:
        return [] if cycle.node in best else [f"{cycle.name}: on {cycle.node}, oracle {best}"]
    if best:
        return [f"{cycle.name}: verdict stops (unschedulable), oracle places it on {best}"]
    oracle = _reason_counts(theirs)
    if cycle.reasons != oracle:
        return [f"{cycle.name}: stop reasons: verdict {cycle.reasons} oracle {oracle}"]
    return []


def _reason_counts(theirs: dict) -> dict[str, int]:
    """Each filter reason of the oracle's answer with the number of nodes giving it (the
    FitError histogram: queue.reason_counts)."""
    counts: Counter[str] = Counter()
    for node in theirs["nodes"]:
        if not node["feasible"]:
            counts.update(node["reasons"])
    return dict(sorted(counts.items()))


def capacity_differences(seed: int) -> tuple[list[str], int]:
    """Every disagreement of one seed's run, and the number of its cycles checked."""
    case = capacity_case(seed)
    pods, run = run_capacity(case)
    cycles = walk(case, pods, run)
    answers = run_oracles([c.oracle_case for c in cycles], "full", VERSION)
    diffs = [d for c, a in zip(cycles, answers, strict=True) for d in cycle_differences(c, a)]
    return diffs, len(cycles)


@needs_oracle
@pytest.mark.parametrize("seed", seeds(20))
def test_every_replica_of_capacity_matches_the_real_scheduler(seed: int) -> None:
    diffs, _ = capacity_differences(seed)
    assert diffs == [], f"seed {seed}"


def test_the_walks_take_every_path() -> None:
    """The seeds the oracle test runs (by default) have replicas placed by the group path,
    by the node-by-node path and by full cycles, and templates that stop unschedulable."""
    grouped = by_node = full = stops = 0
    for seed in seeds(20):
        case = capacity_case(seed)
        _, run = run_capacity(case)
        grouped += run.grouped
        by_node += run.incremental - run.grouped
        full += len(run.placements) - run.incremental
        stops += sum(t.stop == UNSCHEDULABLE for t in run.templates)
    assert min(grouped, by_node, full, stops) > 0, (grouped, by_node, full, stops)
