"""The scheduling queue (engine/scheduler/queue.py): order, binds, preemption and retry,
ties, truncation, and that a run never changes the cluster it starts from."""

from __future__ import annotations

from collections import Counter

import msgspec

from service.engine.scheduler import framework
from service.engine.scheduler.framework import Status
from service.engine.scheduler.placement import PlacementOutcome, place
from service.engine.scheduler.profile import DEFAULT_PROFILE, DEFAULT_SCHEDULER_NAME
from service.engine.scheduler.queue import (
    BOUND,
    NOMINATED,
    UNSCHEDULABLE,
    queue_order,
    reason_counts,
    run_queue,
)
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.scheduler.helpers import at, cluster, cluster_of, node, pod

PROFILES = {DEFAULT_SCHEDULER_NAME: DEFAULT_PROFILE}


def _run(c, pods=None, **kwargs):
    if pods is None:
        pods = [p for p in c.snapshot.pods if not p.node_name]
    return run_queue(c, pods, profiles=PROFILES, settings=DEFAULT_SETTINGS, **kwargs)


def test_queue_order_is_priority_then_creation_time_then_given_order():
    from msgspec.structs import replace

    pods = [
        replace(pod("late", priority=5), creation_timestamp=at(200)),
        replace(pod("early", priority=5), creation_timestamp=at(100)),
        pod("untimed", priority=5),
        pod("high", priority=9),
        pod("low", priority=0),
        pod("untimed-2", priority=5),
    ]
    order = [pods[i].name for i in queue_order(pods)]
    assert order == ["high", "early", "late", "untimed", "untimed-2", "low"]


def test_each_pod_sees_the_binds_before_it():
    c = cluster([node("a", 1000), node("b", 1000)], [pod(f"p{i}", 600) for i in range(3)])
    run = _run(c)
    assert [(s.pod_key, s.outcome, s.node) for s in run.steps] == [
        ("default/p0", BOUND, "a"),
        ("default/p1", BOUND, "b"),
        ("default/p2", UNSCHEDULABLE, None),
    ]
    assert run.steps[2].message == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )
    assert run.steps[2].reasons == {"Insufficient cpu": 2}
    assert run.counts() == {BOUND: 2, UNSCHEDULABLE: 1}
    usage = {n.name: n for n in run.nodes}
    assert usage["a"].requested_before == {} and usage["a"].requested_after == {"cpu": 600}
    assert usage["a"].pods_after == 1 and usage["a"].allocatable["cpu"] == 1000
    final = {p.name: p.node_name for p in run.cluster.snapshot.pods}
    assert final == {"p0": "a", "p1": "b", "p2": ""}
    assert run.cluster.pod_count == 3
    assert not run.truncated


def test_the_starting_cluster_is_left_as_it_was():
    c = cluster([node("a", 1000), node("b", 1000)], [pod("p0", 600), pod("p1", 600)])
    before = place(c, c.snapshot.pods[0], settings=DEFAULT_SETTINGS).selected_node
    _run(c)
    assert place(c, c.snapshot.pods[0], settings=DEFAULT_SETTINGS).selected_node == before
    assert all(not p.node_name for p in c.snapshot.pods)


def test_preemption_nominates_then_the_retry_binds_after_the_queued_pods():
    c = cluster(
        [node("a", 2000), node("b", 2000)],
        [
            pod("low1", 1500, node="a", priority=0),
            pod("low2", 1500, node="b", priority=0),
            pod("small", 300),
            pod("hi", 1500, priority=1000),
        ],
    )
    run = _run(c)
    steps = [(s.pod_key, s.outcome, s.node, s.attempt) for s in run.steps]
    assert steps == [
        ("default/hi", NOMINATED, "a", 1),
        ("default/small", BOUND, "a", 1),  # the nominated 1500m counts: 300 still fits
        ("default/hi", BOUND, "a", 2),
    ]
    assert [v.key for v in run.steps[0].victims] == ["default/low1"]
    assert "preemption nominates" in run.steps[0].message
    assert run.counts() == {BOUND: 2}
    names = {p.name for p in run.cluster.snapshot.pods}
    assert "low1" not in names and {"low2", "small", "hi"} <= names


def test_without_preemption_the_pod_stays_unschedulable():
    c = cluster(
        [node("a", 2000)], [pod("low", 1500, node="a", priority=0), pod("hi", 1500, priority=9)]
    )
    run = _run(c, preemption=False)
    assert [(s.outcome, s.victims) for s in run.steps] == [(UNSCHEDULABLE, [])]
    assert {p.name for p in run.cluster.snapshot.pods} == {"low", "hi"}


def test_a_lower_priority_pod_cannot_take_the_nominated_room():
    c = cluster(
        [node("a", 2000)],
        [pod("low", 1500, node="a", priority=0), pod("hi", 1500, priority=9), pod("lo2", 800)],
    )
    run = _run(c)
    assert [(s.pod_key, s.outcome) for s in run.steps] == [
        ("default/hi", NOMINATED),
        ("default/lo2", UNSCHEDULABLE),
        ("default/hi", BOUND),
    ]


def test_ties_are_named_and_the_first_is_taken_without_a_seed():
    c = cluster([node(n, 4000) for n in "abc"], [pod("p", 100)])
    (step,) = _run(c).steps
    assert step.node == "a" and step.ties == ("a", "b", "c")


def test_a_seed_picks_among_the_tied_nodes_reproducibly():
    c = cluster([node(n, 4000) for n in "abc"], [pod("p", 100)])
    picks = Counter(_run(c, tie_break_seed=seed).steps[0].node for seed in range(60))
    assert set(picks) == {"a", "b", "c"}
    assert all(count > 5 for count in picks.values())
    again = [_run(c, tie_break_seed=7).steps[0].node for _ in range(3)]
    assert len(set(again)) == 1


def test_a_run_past_max_steps_is_truncated_with_the_pods_left():
    c = cluster([node("a", 4000)], [pod(f"p{i}", 100) for i in range(5)])
    run = _run(c, max_steps=2)
    assert run.truncated and len(run.steps) == 2
    assert run.pending == ["default/p2", "default/p3", "default/p4"]


def test_cordoned_nodes_take_no_pod():
    c = cluster([node("a", 4000), node("b", 4000)], [pod("p", 100)])
    run = _run(c, cordoned=["a"])
    assert run.steps[0].node == "b"
    assert run.cluster.node("a").unschedulable


def test_a_pod_of_another_scheduler_gets_no_cycle():
    from msgspec.structs import replace

    c = cluster([node("a")], [replace(pod("p", 100), scheduler_name="other")])
    (step,) = _run(c).steps
    assert step.outcome == UNSCHEDULABLE and "no profile" in step.message


def _spread_pod(name: str, key: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"u-{name}",
                     "labels": {"app": "web"}},
        "spec": {
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
            "topologySpreadConstraints": [{
                "maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }],
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }]}},
        },
        "status": {"phase": "Pending"},
    }  # fmt: skip


def _node_json(name: str, zone: str) -> dict:
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                              "topology.kubernetes.io/zone": zone}},
        "status": {"capacity": alloc, "allocatable": alloc,
                   "conditions": [{"type": "Ready", "status": "True"}]},
    }  # fmt: skip


def test_spread_and_anti_affinity_count_the_pods_the_run_bound():
    nodes = [_node_json("a1", "za"), _node_json("a2", "za"), _node_json("b1", "zb")]
    c = cluster_of(nodes, [_spread_pod(f"w{i}", "topology.kubernetes.io/zone") for i in range(4)])
    run = _run(c)
    placed = [(s.outcome, s.node) for s in run.steps]
    # zone spread alternates zones; anti-affinity keeps one replica per node: the 4th has none
    assert placed[:3] == [(BOUND, "a1"), (BOUND, "b1"), (BOUND, "a2")]
    assert placed[3][0] == UNSCHEDULABLE
    assert "didn't match pod anti-affinity rules" in run.steps[3].message


def test_a_cycle_whose_preemption_finds_no_node_clears_the_pods_nomination():
    c = cluster(
        [node("a", 2000)],
        [pod("top", 1500, node="a", priority=100), pod("p", 1000, priority=5, nominated="a")],
    )
    run = _run(c)
    (step,) = run.steps
    assert step.outcome == UNSCHEDULABLE and step.nomination == ""
    assert step.message.endswith('The nomination to "a" is cleared.')
    assert {p.name: p.nominated_node_name for p in run.cluster.snapshot.pods}["p"] == ""


def test_a_cycle_without_preemption_keeps_the_nomination():
    c = cluster(
        [node("a", 2000)],
        [pod("top", 1500, node="a", priority=100), pod("p", 1000, priority=5, nominated="a")],
    )
    (step,) = _run(c, preemption=False).steps
    assert step.outcome == UNSCHEDULABLE and step.nomination == "a"


def test_binding_pods_at_once_leaves_the_cluster_binding_them_in_turn_leaves():
    """WorkingCluster.bind_all (capacity's group path) against bind one pod at a time: the
    same NodeInfos, nominations, usage and snapshot; a bound pod's own nomination goes."""
    from service.engine.scheduler.framework import NodeInfo, pod_info
    from service.engine.scheduler.queue import WorkingCluster

    pods = [pod("a0", 100, node="a"), pod("n0", 300, nominated="b", priority=10, uid="u-n0")]
    binds = [(pod("r1", 200), "a"), (pod("r2", 250), "b"), (pod("r3", 100), "a"),
             (pod("n0", 300, nominated="b", priority=10, uid="u-n0"), "b")]  # fmt: skip
    works = [
        WorkingCluster(cluster([node("a", 1000), node("b", 1000)], pods), DEFAULT_SETTINGS)
        for _ in range(2)
    ]
    for p, name in binds:
        works[0].bind(p, name)
    # what bind_all's caller makes: the pods bound, their PodInfos, the nodes with them
    bound = [
        msgspec.structs.replace(p, node_name=name, nominated_node_name="") for p, name in binds
    ]
    infos = [pod_info(b, DEFAULT_SETTINGS) for b in bound]
    view = works[1].view
    changed = {}
    for b, info in zip(bound, infos, strict=True):
        ni = changed.get(view.by_name[b.node_name].index) or view.by_name[b.node_name]
        changed[ni.index] = NodeInfo(ni.node, ni.index, [*ni.pods, info])
    works[1].bind_all(list(zip(bound, infos, strict=True)), changed)
    one, all_ = (w.view for w in works)
    for ni, nj in zip(one.nodes, all_.nodes, strict=True):
        assert [pi.key for pi in ni.pods] == [pj.key for pj in nj.pods]
        assert (ni.requested, ni.pod_count, ni.nz_cpu) == (nj.requested, nj.pod_count, nj.nz_cpu)
    assert one.nominated == all_.nominated == {}
    assert [(u.name, u.requested_after, u.pods_after) for u in works[0].usage()] == [
        (u.name, u.requested_after, u.pods_after) for u in works[1].usage()
    ]
    final = [sorted((p.name, p.node_name) for p in w.cluster.snapshot.pods) for w in works]
    assert final[0] == final[1]
    assert dict(final[1])["r3"] == "a"
    assert works[0].cluster.pod_count == works[1].cluster.pod_count == 5


def test_a_nomination_leaves_the_views_before_it_unchanged():
    """WorkingCluster.nominate gives the next view its own list of the node's nominated
    pods: the view before keeps its nominations (a step's view is read after later steps,
    e.g. by run_queue(keep_outcomes=True)), and a later bind of an unrelated pod keeps them."""
    from service.engine.scheduler.queue import WorkingCluster

    pods = [pod("n0", 300, nominated="b", priority=10, uid="u-n0")]
    work = WorkingCluster(cluster([node("a", 1000), node("b", 1000)], pods), DEFAULT_SETTINGS)
    before = work.view
    work.nominate(pod("n1", 200, priority=20, uid="u-n1"), "b", [], [])
    assert [pi.key for pi in before.nominated["b"]] == ["default/n0"]
    assert [pi.key for pi in work.view.nominated["b"]] == ["default/n0", "default/n1"]
    nominated = work.view.nominated
    work.bind(pod("r1", 100), "a")
    assert work.view.nominated is nominated  # an unnominated pod's bind keeps the map
    work.bind(pod("n1", 200, priority=20, uid="u-n1"), "b")
    assert [pi.key for pi in work.view.nominated["b"]] == ["default/n0"]
    assert [pi.key for pi in nominated["b"]] == ["default/n0", "default/n1"]


def test_a_queue_run_pauses_the_collector_and_leaves_no_cyclic_garbage():
    """run_queue runs with the collector paused, as capacity does: its steps (binds,
    preemption with a retry, unschedulable pods, on enough nodes for the batched filters and
    scores) leave nothing for gc.collect() to find; it leaves the collector enabled, and
    does not pause it for fresh_views (views built anew leave cyclic garbage)."""
    import gc

    nodes = [node(f"n{i:03d}", 2000) for i in range(120)]
    bound = [pod(f"low{i:03d}", 1500, node=f"n{i:03d}", priority=0) for i in range(120)]
    pending = [pod("hi", 1500, priority=1000), pod("big", 5000)]
    pending += [pod(f"small{i}", 300) for i in range(30)]
    c = cluster(nodes, bound + pending)
    states: list[bool] = []
    run = _run(c, pending, between_steps=lambda: states.append(gc.isenabled()))
    assert {s.outcome for s in run.steps} == {BOUND, NOMINATED, UNSCHEDULABLE}
    assert states and not any(states)
    assert gc.isenabled()
    # the collector kept off from before the run to the count: an automatic collection in
    # between would free the garbage and hide it
    gc.collect()
    gc.collect()  # twice: an earlier test's weakly keyed caches are freed by the first
    gc.disable()
    try:
        del run
        _run(c, pending)
        assert gc.collect() == 0
    finally:
        gc.enable()
    states.clear()
    _run(c, pending[:3], fresh_views=True, between_steps=lambda: states.append(gc.isenabled()))
    assert states and all(states)


def test_a_bind_keeps_interpod_affinitys_topology_and_a_cordon_looks_again():
    """The nodes' domains (InterPodAffinity's topology, by node index) pass to the next view
    while a step keeps every Node object (a bind); a step that replaces a Node (a cordon)
    leaves the next view to find it again: the same domains, as its labels did not change."""
    from service.engine.scheduler.plugins.interpod_affinity import TOPOLOGY, _topology
    from service.engine.scheduler.queue import WorkingCluster

    nodes = [node(f"n{i}", 1000, labels={"zone": f"z{i % 2}"}) for i in range(3)]
    work = WorkingCluster(cluster(nodes, []), DEFAULT_SETTINGS)
    topology = _topology(work.view)
    work.bind(pod("r1", 100), "n1")
    assert work.view._derived.get(TOPOLOGY) is topology
    assert _topology(work.view).domains("zone") is topology.domains("zone")
    cordoned = WorkingCluster(cluster(nodes, []), DEFAULT_SETTINGS, cordoned=["n0"])
    assert TOPOLOGY not in cordoned.view._derived
    assert _topology(cordoned.view).nodes[0] is cordoned.view.nodes[0].node


def test_reason_counts_count_every_node_reason() -> None:
    """Counted per distinct tuple of reasons, each reason gets the number of nodes giving
    it, as counting node by node does (a reason twice in a tuple counts twice)."""
    statuses = {
        "a": Status(framework.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory")),
        "b": Status(framework.UNSCHEDULABLE, ("Insufficient cpu",)),
        "c": Status(framework.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory")),
        "d": Status(framework.UNSCHEDULABLE, ("Too many pods", "Too many pods")),
        "e": Status(framework.UNSCHEDULABLE, ()),
    }
    outcome = PlacementOutcome(None, [], "", statuses=statuses)
    by_node: Counter[str] = Counter()
    for status in statuses.values():
        by_node.update(status.reasons)
    assert reason_counts(outcome) == dict(sorted(by_node.items()))
    assert list(reason_counts(outcome)) == sorted(by_node)
