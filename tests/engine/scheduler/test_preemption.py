"""DefaultPreemption beyond the conformance data: PDB-violating vs non-violating victims and
candidates, each pickOneNodeForPreemption criterion, eligibility, the offset and the early
stop, nominated pods inside preemption, and the fast victim selection against the literal
one on random nodes (with pod constraints, and with volumes)."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
from msgspec.structs import replace

from service.decisions.priority import admit_priority
from service.engine.objects import (
    Cluster,
    LabelSelector,
    LabelSelectorRequirement,
    PodAffinityTerm,
    PodDisruptionBudget,
    TopologySpreadConstraint,
)
from service.engine.quantity import MAX_INT64
from service.engine.scheduler import runtime
from service.engine.scheduler.framework import (
    ERROR,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    Status,
    pod_info,
)
from service.engine.scheduler.holds import Hold, apply_holds, hold_reasons
from service.engine.scheduler.nominated import prepare_nominated
from service.engine.scheduler.plugins.default_preemption import (
    calculate_num_candidates,
    pod_eligible_to_preempt_others,
    select_victims_on_node,
    select_victims_reference,
    terminating_by_preemption,
)
from service.engine.scheduler.preemption import (
    Candidate,
    filter_statuses,
    fit_error_message,
    pick_one_node_for_preemption,
    preempt,
)
from service.engine.scheduler.profile import DefaultPreemptionArgs as PreemptionArgs
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object
from tests.conftest import snapshot_from_objects
from tests.engine.scheduler.helpers import cluster, cycle, node, pdb, pod
from tests.engine.scheduler.random_clusters import random_case
from tests.engine.scheduler.random_volumes import EBS, _claim_volume, _pv, _pvc
from tests.engine.scheduler.random_volumes import _class as _volume_class

HIGH = 1000


def _names(pods) -> list[str]:
    return [p.name for p in pods]


def _assert_same_victims(fast, slow, label) -> None:
    """Two SelectVictimsOnNode answers agree: victims, PDB violations, status code and
    reasons."""
    assert (_names(fast[0]), fast[1], fast[2].code, fast[2].reasons) == (
        _names(slow[0]),
        slow[1],
        slow[2].code,
        slow[2].reasons,
    ), label


# --- PDBs ---


def test_prefers_the_node_without_pdb_violation() -> None:
    """node1's victim is cheaper (lower priority) but violates a PDB; node2 wins."""
    nodes = [node("node1", cpu=1000), node("node2", cpu=1000)]
    pods = [
        pod("guarded", 800, node="node1", priority=1, labels={"app": "db"}),
        pod("plain", 800, node="node2", priority=50),
    ]
    out = preempt(
        cluster(nodes, pods, [pdb("db", {"app": "db"}, 0)]),
        pod("p", 500, priority=HIGH),
        settings=DEFAULT_SETTINGS,
    )
    assert out.nominated_node_name == "node2"
    assert _names(out.victims) == ["plain"]
    assert out.num_pdb_violations == 0
    assert {c.node_name: c.num_pdb_violations for c in out.candidates} == {"node2": 0, "node1": 1}
    # candidates list non-violating first
    assert [c.node_name for c in out.candidates] == ["node2", "node1"]


def test_violating_victims_are_reprieved_first() -> None:
    """Room for one of the two: the PDB-protected pod is tried first and stays, although the
    other one is more important."""
    nodes = [node("n", cpu=1000)]
    pods = [
        pod("important", 400, node="n", priority=100, start=1),
        pod("guarded", 400, node="n", priority=1, start=2, labels={"app": "db"}),
    ]
    cl = cluster(nodes, pods, [pdb("db", {"app": "db"}, 0)])
    out = preempt(cl, pod("p", 500, priority=HIGH), settings=DEFAULT_SETTINGS)
    assert _names(out.victims) == ["important"]
    assert out.num_pdb_violations == 0
    # without the PDB the more important pod stays
    out = preempt(cluster(nodes, pods), pod("p", 500, priority=HIGH), settings=DEFAULT_SETTINGS)
    assert _names(out.victims) == ["guarded"]


def test_reprieved_pods_still_use_up_the_budget() -> None:
    """Classification runs before reprieve: a, b both match a budget of 1; a (more important)
    takes it, so b is violating even though a is then reprieved."""
    nodes = [node("n", cpu=1000)]
    pods = [
        pod("a", 300, node="n", priority=10, start=1, labels={"app": "x"}),
        pod("b", 600, node="n", priority=10, start=2, labels={"app": "x"}),
    ]
    out = preempt(
        cluster(nodes, pods, [pdb("x", {"app": "x"}, 1)]),
        pod("p", 500, priority=HIGH),
        settings=DEFAULT_SETTINGS,
    )
    assert _names(out.victims) == ["b"]
    assert out.num_pdb_violations == 1


def _expr_pdb(operator: str, values: tuple[str, ...]) -> PodDisruptionBudget:
    selector = LabelSelector(
        match_expressions=(LabelSelectorRequirement(key="app", operator=operator, values=values),)
    )
    return PodDisruptionBudget(
        namespace="default", name="x", selector=selector, disruptions_allowed=0
    )


@pytest.mark.parametrize(
    ("budget", "kwargs", "violations"),
    [
        pytest.param(pdb("x", {"app": "x"}, 0), {}, 1, id="matching budget exhausted"),
        pytest.param(pdb("x", {"app": "x"}, 1), {}, 0, id="budget left"),
        pytest.param(pdb("x", None, 0), {}, 0, id="nil selector matches nothing"),
        pytest.param(pdb("x", {}, 0), {}, 0, id="empty selector matches nothing"),
        pytest.param(pdb("x", {"app": "x"}, 0, namespace="other"), {}, 0, id="other namespace"),
        pytest.param(pdb("x", {"app": "x"}, 0, disrupted=("v",)), {}, 0, id="in disruptedPods"),
        pytest.param(pdb("x", {"app": "x"}, 0), {"labels": {}}, 0, id="pod without labels"),
        pytest.param(
            pdb("x", {"tier": "db", "app": "x"}, 0), {}, 0, id="first matchLabels pair missing"
        ),
        pytest.param(
            pdb("x", {"tier": "db", "app": "x"}, 0),
            {"labels": {"app": "x", "tier": "db"}},
            1,
            id="all matchLabels pairs present",
        ),
        pytest.param(_expr_pdb("In", ("x", "y")), {}, 1, id="matchExpressions In"),
        pytest.param(_expr_pdb("NotIn", ("x",)), {}, 0, id="matchExpressions NotIn"),
        pytest.param(_expr_pdb("In", ()), {}, 0, id="invalid selector matches nothing"),
    ],
)
def test_pdb_matching(budget, kwargs, violations) -> None:
    victim = pod("v", 800, node="n", priority=0, **({"labels": {"app": "x"}} | kwargs))
    out = preempt(
        cluster([node("n", cpu=1000)], [victim], [budget]),
        pod("p", 500, priority=HIGH),
        settings=DEFAULT_SETTINGS,
    )
    assert _names(out.victims) == ["v"]
    assert out.num_pdb_violations == violations


# --- pickOneNodeForPreemption, one criterion at a time ---


def _candidate(name: str, victims: list[tuple[int, int | None]], pdbs: int = 0) -> Candidate:
    infos = [
        pod_info(
            pod(f"{name}-{i}", 100, node=name, priority=prio, start=start),
            settings=DEFAULT_SETTINGS,
        )
        for i, (prio, start) in enumerate(victims)
    ]
    return Candidate(name, infos, pdbs)


@pytest.mark.parametrize(
    ("candidates", "winner"),
    [
        pytest.param(
            [_candidate("a", [(1, 1)], pdbs=1), _candidate("b", [(900, 1)], pdbs=0)],
            "b",
            id="1 fewest PDB violations",
        ),
        pytest.param(
            [_candidate("a", [(500, 1)]), _candidate("b", [(400, 1), (300, 1), (300, 1)])],
            "b",
            id="2 lowest highest-priority victim",
        ),
        pytest.param(
            [
                _candidate("a", [(100, 1), (-100, 1), (100, 1), (-100, 1)]),
                _candidate("b", [(100, 1), (-100, 1)]),
            ],
            "b",
            id="3 smallest sum of priorities with the 2^31 offset",
        ),
        pytest.param(
            [_candidate("a", [(5, 1), (5, 1)]), _candidate("b", [(5, 1), (4, 1), (1, 1)])],
            "a",
            id="3 smaller sum even with fewer victims",
        ),
        pytest.param(
            [_candidate("a", [(7, 1), (0, 1)]), _candidate("b", [(7, 1)])],
            "b",
            id="3 fewer victims at equal top priority",
        ),
        pytest.param(
            [_candidate("a", [(7, 4), (7, 2)]), _candidate("b", [(7, 5), (7, 1)])],
            "a",
            id="5 latest earliest start among top-priority victims",
        ),
        pytest.param(
            [_candidate("a", [(7, 10)]), _candidate("b", [(7, None)])],
            "b",
            id="5 missing start time counts as now",
        ),
        pytest.param(
            [_candidate("a", [(7, 3)]), _candidate("b", [(7, 3)]), _candidate("c", [(7, 3)])],
            "a",
            id="6 full tie goes to the first in evaluation order",
        ),
    ],
)
def test_pick_one_node_for_preemption(candidates, winner) -> None:
    chosen = pick_one_node_for_preemption(candidates)
    assert chosen is not None
    assert chosen.node_name == winner


def test_criterion_4_fewest_victims() -> None:
    """Criteria 1-3 tie only when the extra victim has priority -2^31 (its offset term is 0):
    then the node with fewer victims wins."""
    a = _candidate("a", [(10, 1), (-(2**31), 1)])
    b = _candidate("b", [(10, 1)])
    assert pick_one_node_for_preemption([a, b]).node_name == "b"


# --- eligibility ---


def test_preemption_policy_never() -> None:
    cl = cluster([node("n", cpu=1000)], [pod("v", 900, node="n", priority=0)])
    out = preempt(
        cl, pod("p", 500, priority=HIGH, preemption_policy="Never"), settings=DEFAULT_SETTINGS
    )
    assert not out.eligible
    assert out.nominated_node_name is None
    assert out.victims == []
    assert out.message == "preemption: not eligible due to preemptionPolicy=Never."


def test_terminating_by_preemption_needs_the_disruption_condition() -> None:
    cond = SimpleNamespace(type="DisruptionTarget", status="True", reason="PreemptionByScheduler")
    other = SimpleNamespace(type="DisruptionTarget", status="True", reason="EvictionByEvictionAPI")
    assert terminating_by_preemption(SimpleNamespace(deletion_timestamp=1, conditions=(cond,)))
    assert not terminating_by_preemption(
        SimpleNamespace(deletion_timestamp=None, conditions=(cond,))
    )
    assert not terminating_by_preemption(
        SimpleNamespace(deletion_timestamp=1, conditions=(other, cond))
    )
    assert not terminating_by_preemption(pod("v", deleting=True))  # model has no conditions


def test_nominated_node_unresolvable_makes_the_pod_eligible() -> None:
    cl = cluster([node("n")], [pod("v", 100, node="n", priority=0, deleting=True)])
    view = scheduler_view(cl, settings=DEFAULT_SETTINGS)
    p = pod("p", 100, priority=HIGH, nominated="n")
    assert pod_eligible_to_preempt_others(view, p, UNRESOLVABLE) == (True, "")
    assert pod_eligible_to_preempt_others(view, p, None) == (True, "")


# --- the flow ---


def test_pod_that_fits_needs_no_preemption() -> None:
    cl = cluster([node("a", cpu=1000), node("b", cpu=1000)], [pod("v", 900, node="a", priority=0)])
    out = preempt(cl, pod("p", 500, priority=HIGH), settings=DEFAULT_SETTINGS)
    assert out.nominated_node_name is None
    assert out.victims == []
    assert out.fits_without_preemption == ["b"]
    assert out.message.startswith("preemption not needed")


def test_no_potential_node_clears_the_nomination() -> None:
    """Every node rejects the pod unresolvably (too big): no candidates, nomination cleared."""
    cl = cluster([node("a", cpu=1000), node("b", cpu=1000)], [pod("v", 900, node="a", priority=0)])
    out = preempt(cl, pod("p", 5000, priority=HIGH), settings=DEFAULT_SETTINGS)
    assert out.nominated_node_name == ""
    assert out.code == UNSCHEDULABLE
    assert out.message == (
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert out.filter_statuses["a"].code == UNRESOLVABLE


def test_fit_error_histogram_is_sorted_as_strings() -> None:
    statuses = {f"n{i}": Status(UNSCHEDULABLE, ("Insufficient cpu",)) for i in range(10)} | {
        "x": Status(UNRESOLVABLE, ("No preemption victims found for incoming pod",))
    }
    assert fit_error_message(13, statuses) == (
        "0/13 nodes are available: 1 No preemption victims found for incoming pod, "
        "10 Insufficient cpu, 2 Preemption is not helpful for scheduling."
    )


def test_offset_and_early_stop() -> None:
    """Five equal nodes, numCandidates 2: the dry run visits from the offset and stops after two
    candidates."""
    nodes = [node(f"n{i}", cpu=1000) for i in range(5)]
    pods = [pod(f"v{i}", 800, node=f"n{i}", priority=i) for i in range(5)]
    cl = cluster(nodes, pods)
    args = PreemptionArgs(40, 1)
    assert calculate_num_candidates(5, 40, 1) == 2
    out = preempt(cl, pod("p", 500, priority=HIGH), args=args, offset=3, settings=DEFAULT_SETTINGS)
    assert [c.node_name for c in out.candidates] == ["n3", "n4"]
    assert out.nominated_node_name == "n3"  # lower victim priority
    out = preempt(
        cl, pod("p", 500, priority=HIGH), args=args, offset=8, settings=DEFAULT_SETTINGS
    )  # 8 mod 5 = 3
    assert out.offset == 3
    out = preempt(cl, pod("p", 500, priority=HIGH), args=args, offset=0, settings=DEFAULT_SETTINGS)
    assert [c.node_name for c in out.candidates] == ["n0", "n1"]
    assert out.nominated_node_name == "n0"


def test_nominated_pods_need_more_victims() -> None:
    """An equal-priority pod nominated to the node reserves 300m there: two victims instead of
    one. A lower-priority nomination is ignored, and cleared on success."""
    n = node("n", cpu=1000)
    running = [
        pod("a", 300, node="n", priority=1, start=1),
        pod("b", 300, node="n", priority=1, start=2),
    ]
    holder = pod("holder", 300, priority=HIGH, nominated="n")
    out = preempt(
        cluster([n], [*running, holder]), pod("p", 500, priority=HIGH), settings=DEFAULT_SETTINGS
    )
    assert _names(out.victims) == ["a", "b"]
    small = pod("small", 300, priority=5, nominated="n")
    out = preempt(
        cluster([n], [*running, small]), pod("p", 500, priority=HIGH), settings=DEFAULT_SETTINGS
    )
    assert _names(out.victims) == ["b"]
    assert _names(p.pod for p in out.cleared_nominations) == ["small"]


def test_error_when_a_given_unschedulable_node_needs_no_victim() -> None:
    """Statuses given by the caller say Unschedulable but the pod fits once victims are gone
    and every victim can be reprieved: upstream's "expected at least one victim" error."""
    cl = cluster([node("n", cpu=1000)], [pod("v", 100, node="n", priority=0)])
    out = preempt(
        cl,
        pod("p", 100, priority=HIGH),
        node_statuses={"n": UNSCHEDULABLE},
        settings=DEFAULT_SETTINGS,
    )
    assert out.code == ERROR
    assert out.nominated_node_name is None
    assert out.message == 'preemption: expected at least one victim pod on node "n"'


def test_host_port_preemption_picks_the_port_holder() -> None:
    n = node("n", cpu=4000)
    pods = [
        pod("exporter", 10, node="n", priority=10, host_ports=(9100,)),
        pod("app", 10, node="n", priority=5),
    ]
    out = preempt(
        cluster([n], pods),
        pod("p", 10, priority=HIGH, host_ports=(9100,)),
        settings=DEFAULT_SETTINGS,
    )
    assert out.filter_statuses["n"].plugin == "NodePorts"
    assert _names(out.victims) == ["exporter"]


# --- the fast victim selection agrees with the literal one ---


def _random_cluster(rng: random.Random):
    nodes = [
        node(
            f"n{i}",
            cpu=rng.choice([1000, 2000, 4000]),
            memory=rng.choice([1, 2, 4]) * 1024**3,
            pods=rng.choice([3, 5, 8, 110]),
        )
        for i in range(6)
    ]
    pods = []
    for i in range(40):
        nd = rng.choice(nodes).name
        pods.append(
            pod(
                f"p{i}",
                rng.choice([0, 100, 250, 500, 900]),
                rng.choice([0, 128, 512]) * 1024**2,
                node=nd,
                priority=rng.choice([-5, 0, 0, 10, 100, 2000]),
                start=rng.choice([None, 1, 2, 3, 4]),
                labels=rng.choice([{}, {"app": "a"}, {"app": "b"}]),
                host_ports=rng.choice([(), (), (), (9100,)]),
            )
        )
    for i in range(3):
        pods.append(
            pod(
                f"nom{i}",
                rng.choice([100, 400]),
                0,
                priority=rng.choice([0, 100, 500]),
                nominated=rng.choice(nodes).name,
            )
        )
    budgets = [pdb("a", {"app": "a"}, rng.choice([0, 1, 2])), pdb("b", {"app": "b"}, 0)]
    return cluster(nodes, pods, budgets)


def _with_pod_constraints(rng: random.Random, incoming):
    """Now and then a hostname spread constraint or anti-affinity over app "a" (which some
    victims carry, so the literal selection must run there) or app "c" (which none carries,
    so the selection on sums applies with them)."""
    app = rng.choice(["a", "c"])
    selector = LabelSelector(match_labels={"app": app})
    choice = rng.random()
    if choice < 0.3:
        spread = TopologySpreadConstraint(
            max_skew=1,
            topology_key="kubernetes.io/hostname",
            when_unsatisfiable="DoNotSchedule",
            label_selector=selector,
        )
        return replace(incoming, topology_spread_constraints=(spread,))
    if choice < 0.6:
        term = PodAffinityTerm(topology_key="kubernetes.io/hostname", label_selector=selector)
        return replace(incoming, pod_anti_affinity_required=(term,))
    return incoming


@pytest.mark.parametrize("seed", range(40))
def test_fast_victim_selection_matches_reference(seed: int) -> None:
    rng = random.Random(seed)
    cl = _random_cluster(rng)
    view = scheduler_view(cl, settings=DEFAULT_SETTINGS)
    for _ in range(4):
        incoming = pod(
            "incoming",
            rng.choice([100, 500, 1500]),
            rng.choice([0, 256]) * 1024**2,
            priority=rng.choice([0, 50, 500, 5000]),
            host_ports=rng.choice([(), (9100,)]),
        )
        incoming = _with_pod_constraints(rng, incoming)
        fwk, ctx = cycle(incoming, view)
        prepare_nominated(ctx, view)
        for ni in view.nodes:
            fast = select_victims_on_node(fwk, ctx, view, ni)
            slow = select_victims_reference(fwk, ctx, view, ni)
            _assert_same_victims(fast, slow, ni.name)


_VOLUME_FILTERS = {"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"}


def test_fast_victim_selection_matches_reference_with_volumes() -> None:
    """On the differential tests' clusters with volumes (random_volumes.py: bound zonal
    claims, ReadWriteOncePod claims, inline EBS disks, CSI attach limits), the selection on
    sums agrees with the literal one on every node, and it does run with the volume filters
    on: on nodes none of whose victims touches them, and not on the others."""
    on_sums = declined = 0
    for seed in range(4000, 4120):
        case = random_case(seed, "preemption", volumes=True)
        cl = Cluster(snapshot_from_objects(case["objects"]))
        incoming = admit_priority(pod_from_object(case["pod"]), cl)
        view = scheduler_view(cl, whole_pods=True, settings=DEFAULT_SETTINGS)
        fwk, ctx = cycle(incoming, view)
        if ctx.prefilter_status is not None:
            continue  # PreFilter rejected the pod: preemption dry-runs no node
        prepare_nominated(ctx, view)
        with_volumes = not fwk.reprieve_on_sums(ctx) and any(
            name in _VOLUME_FILTERS for name, _ in ctx.filters
        )
        for ni in view.nodes:
            fast = select_victims_on_node(fwk, ctx, view, ni)
            slow = select_victims_reference(fwk, ctx, view, ni)
            _assert_same_victims(fast, slow, (seed, ni.name))
            victims = ni.pods_by_importance()[ni.first_below(ctx.priority) :]
            if with_volumes and victims:
                if fwk.reprieve_on_sums_at(ctx, ni, victims):
                    on_sums += 1
                else:
                    declined += 1
    assert on_sums > 0 and declined > 0, (on_sums, declined)


def _volume_pod(name: str, priority: int, volumes: list[dict], node: str = "") -> dict:
    spec: dict = {
        "priority": priority,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
        "volumes": volumes,
    }
    if node:
        spec["nodeName"] = node
    meta = {"name": name, "namespace": "default", "uid": name}
    status = {"phase": "Running" if node else "Pending", "startTime": "2026-01-01T00:00:00Z"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


@pytest.mark.parametrize(
    ("holder_volume", "incoming_volume"),
    [
        # a ReadWriteOncePod claim the incoming pod wants, held by a victim
        (_claim_volume("data"), _claim_volume("data")),
        # the same EBS disk inline (isVolumeConflict)
        (
            {"name": "disk", "awsElasticBlockStore": {"volumeID": "vol-1"}},
            {"name": "disk", "awsElasticBlockStore": {"volumeID": "vol-1"}},
        ),
    ],
)
def test_a_victim_in_volume_conflict_is_selected_literally(holder_volume, incoming_volume) -> None:
    """VolumeRestrictions depends on a victim holding the wanted claim or disk: that node
    goes the literal way and the holder is the one victim; the bystander is reprieved."""
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "uid": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {
            "allocatable": {"cpu": "1", "memory": "1Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    objects = [
        node,
        _volume_class("gp3", "WaitForFirstConsumer", EBS),
        _pvc("data", "gp3", "1Gi", volume="pv-data", modes=("ReadWriteOncePod",)),
        _pv("pv-data", "gp3", "1Gi", claim="data", modes=("ReadWriteOncePod",)),
        _volume_pod("holder", 0, [holder_volume], "n1"),
        _volume_pod("bystander", 0, [], "n1"),
    ]
    cl = Cluster(snapshot_from_objects(objects))
    incoming = pod_from_object(_volume_pod("incoming", HIGH, [incoming_volume]))
    view = scheduler_view(cl, whole_pods=True, settings=DEFAULT_SETTINGS)
    fwk, ctx = cycle(incoming, view)
    ni = view.by_name["n1"]
    victims = ni.pods_by_importance()
    assert not fwk.reprieve_on_sums_at(ctx, ni, victims)
    fast = select_victims_on_node(fwk, ctx, view, ni)
    assert (_names(fast[0]), fast[2].is_success) == (["holder"], True)


# --- the same at int64's edges, where NodeInfo.Requested wraps ---

_HUGE = (2**62, 3 * 2**61, MAX_INT64 - 1, MAX_INT64)


def _random_edge_cluster(rng: random.Random):
    """Nodes and pods whose cpu (and sometimes memory) requests are near int64's bounds, so
    a node's Requested, the free amount (allocatable - requested) and the nominated pods'
    additions wrap around in Go's int64 as SelectVictimsOnNode re-runs the filters."""
    nodes = [
        node(
            f"n{i}",
            cpu=rng.choice([4000, 2**62, MAX_INT64 - 3000, MAX_INT64]),
            memory=rng.choice([4 * 1024**3, MAX_INT64]),
            pods=rng.choice([3, 8, 110]),
        )
        for i in range(5)
    ]
    pods = []
    for i in range(30):
        pods.append(
            pod(
                f"p{i}",
                rng.choice([0, 100, 900, *_HUGE]),
                rng.choice([0, 512 * 1024**2, 2**62, MAX_INT64]),
                node=rng.choice(nodes).name,
                priority=rng.choice([-5, 0, 10, 100, 2000]),
                start=rng.choice([None, 1, 2, 3]),
                labels=rng.choice([{}, {"app": "a"}, {"app": "b"}]),
            )
        )
    for i in range(2):
        pods.append(
            pod(
                f"nom{i}",
                rng.choice([100, *_HUGE]),
                0,
                priority=rng.choice([0, 100, 500]),
                nominated=rng.choice(nodes).name,
            )
        )
    budgets = [pdb("a", {"app": "a"}, rng.choice([0, 1])), pdb("b", {"app": "b"}, 0)]
    return cluster(nodes, pods, budgets)


@pytest.mark.parametrize("seed", range(60))
def test_fast_victim_selection_matches_reference_at_int64_edges(seed: int) -> None:
    """SelectVictimsOnNode (default_preemption.go) re-runs NodeResourcesFit's fitsRequest on
    a NodeInfo whose Requested is summed with int64 ``+=`` (NodeInfo.update) and compared as
    ``allocatable - requested``, both wrapping: adding a pod back can make the preemptor fit
    again. The selection on sums gives the literal selection's verdict there too."""
    rng = random.Random(seed)
    cl = _random_edge_cluster(rng)
    view = scheduler_view(cl, settings=DEFAULT_SETTINGS)
    for _ in range(4):
        incoming = pod(
            "incoming",
            rng.choice([100, 1500, 2**62, MAX_INT64]),
            rng.choice([0, 256 * 1024**2, MAX_INT64]),
            priority=rng.choice([50, 500, 5000]),
        )
        fwk, ctx = cycle(incoming, view)
        prepare_nominated(ctx, view)
        for ni in view.nodes:
            fast = select_victims_on_node(fwk, ctx, view, ni)
            slow = select_victims_reference(fwk, ctx, view, ni)
            _assert_same_victims(fast, slow, (seed, ni.name))


@pytest.mark.parametrize("seed", range(4200, 4240))
def test_filter_statuses_are_the_node_by_node_ones(monkeypatch, seed: int) -> None:
    """preemption.filter_statuses runs the filters plugin by plugin (Framework.filter_all):
    every node's status, hold reasons included, is RunFilterPluginsWithNominatedPods' on
    that node, on the differential tests' clusters with a pod nominated and a hold."""
    monkeypatch.setattr(runtime, "BATCH_FROM_NODES", 0)
    rng = random.Random(seed)
    case = random_case(seed, "preemption", volumes=seed % 2 == 0)
    cl = Cluster(snapshot_from_objects(case["objects"]))
    incoming = admit_priority(pod_from_object(case["pod"]), cl)
    names = [n.name for n in cl.nodes]
    nominee = replace(incoming, name="nominee", uid="uid-nominee", nominated_node_name="")
    nominee = replace(nominee, nominated_node_name=rng.choice(names))
    cl = Cluster(replace(cl.snapshot, pods=(*cl.snapshot.pods, nominee)))
    view = scheduler_view(cl, whole_pods=True, settings=DEFAULT_SETTINGS)
    hold = Hold(rng.choice(names), "default", "held", requests={"cpu": 10**6}, priority=10**6)
    fwk, ctx = cycle(incoming, view)
    prepare_nominated(ctx, view)
    plan = apply_holds(ctx, view, holds=[hold])
    plain = {}
    for ni in view.nodes:
        status = fwk.run_filter_plugins_with_nominated(ctx, ni)
        extra = tuple(hold_reasons(fwk, ctx, ni, status, plan)) if ni.name in plan.nodes() else ()
        plain[ni.name] = (
            Status(status.code, status.reasons + extra, status.plugin) if extra else status
        )
    assert filter_statuses(fwk, ctx, view, plan) == plain
