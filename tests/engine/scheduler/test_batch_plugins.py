"""Every plugin that filters or scores many nodes at once (framework.FiltersNodes,
FiltersNodesWithPods, ScoresNodes) against its own node-by-node Filter and Score, and
Framework.filter_all (plugin by plugin) against RunFilterPluginsWithNominatedPods node by
node: on the random clusters of the differential tests (taints, affinity, spread, volumes, workloads), for the
default profile of every release."""

from __future__ import annotations

import copy
import random

import pytest

from service.engine.objects import Cluster
from service.engine.scheduler import runtime
from service.engine.scheduler.framework import (
    FiltersNodes,
    FiltersNodesWithPods,
    NodeInfo,
    NodeInfoPods,
    ScoreError,
    ScoresNodes,
    pod_info,
)
from service.engine.scheduler.nominated import prepare_nominated
from service.engine.scheduler.placement import place
from service.engine.scheduler.profile import (
    DEFAULT_PROFILE,
    DEFAULT_SCHEDULER_NAME,
    default_profile,
)
from service.engine.scheduler.queue import run_queue
from service.engine.scheduler.runtime import Framework
from service.engine.scheduler.snapshot import as_scheduler_sees, scheduler_view
from service.engine.version import DEFAULT_SETTINGS, KNOWN_VERSIONS, settings_for
from service.ingest.kube import pod_from_object
from tests.conftest import snapshot_from_objects
from tests.engine.scheduler.helpers import GI, cluster, cycle, node, pod
from tests.engine.scheduler.random_clusters import random_case, random_workload_case
from tests.oracles import seeds


def _with_nominees(case: dict, seed: int) -> dict:
    """``case`` with one to three pending pods nominated to its nodes, copies of its bound
    pods at the incoming pod's priority or above (so pass 1 of the nominated-pods filter
    counts them)."""
    rng = random.Random(f"nominees/{seed}")
    nodes = [o["metadata"]["name"] for o in case["objects"] if o["kind"] == "Node"]
    bound = [o for o in case["objects"] if o["kind"] == "Pod" and o["spec"].get("nodeName")]
    priority = case["pod"]["spec"].get("priority") or 0
    for i in range(rng.randint(1, 3)):
        nominee = copy.deepcopy(rng.choice(bound) if bound else case["pod"])
        nominee["metadata"].update(name=f"nominee-{i}", uid=f"uid-nominee-{i}")
        nominee["spec"].pop("nodeName", None)
        nominee["spec"]["priority"] = priority + rng.choice((0, 100))
        nominee["status"] = {"phase": "Pending", "nominatedNodeName": rng.choice(nodes)}
        case["objects"].append(nominee)
    return case


FAMILIES = {
    "nominated": lambda seed: _with_nominees(random_case(seed), seed),
    "nominated-workloads": lambda seed: _with_nominees(random_workload_case(seed), seed),
    "plain": lambda seed: random_case(seed),
    "spread": lambda seed: random_case(seed, spread=True),
    "volumes": lambda seed: random_case(seed, volumes=True),
    "preemption": lambda seed: random_case(seed, "preemption"),
    "workloads": lambda seed: random_workload_case(seed),
}


def _cycle(case: dict, version: str):
    settings = settings_for(version)
    cluster = Cluster(snapshot_from_objects(case["objects"]))
    view = scheduler_view(cluster, settings, whole_pods=True)
    fwk = Framework(default_profile(settings), settings)
    pod = as_scheduler_sees(pod_from_object(case["pod"]), settings)
    state = fwk.cycle_state(pod, view)
    prepare_nominated(state, view)
    return fwk, state, view


def _scores(run, nodes) -> list | str:
    try:
        return run(nodes)
    except ScoreError as exc:
        return f"ScoreError: {exc}"


@pytest.mark.parametrize("version", KNOWN_VERSIONS)
@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("seed", seeds(12))
def test_batches_equal_their_plugins_node_by_node(family: str, seed: int, version: str) -> None:
    fwk, state, view = _cycle(FAMILIES[family](seed), version)
    if state.prefilter_status is not None:
        return
    nodes = view.nodes
    for name, run in state.filters:
        plugin = fwk._filters_by_name[name]
        if isinstance(plugin, FiltersNodes):
            assert plugin.filter_nodes(state, nodes) == [run(state, ni, ni) for ni in nodes], name
        if isinstance(plugin, FiltersNodesWithPods):  # pass 1: the nominated pods added
            pods = [ni.with_nominated(state.nominated.get(ni.name, ())) for ni in nodes]
            one_by_one = [run(state, ni, ns) for ni, ns in zip(nodes, pods, strict=True)]
            assert plugin.filter_with_pods(state, nodes, pods) == one_by_one, name
    plain = [fwk.run_filter_plugins_with_nominated(state, ni) for ni in nodes]
    assert fwk.filter_all(state, nodes, batch_from=0) == plain
    assert fwk.filter_all(state, nodes) == plain
    feasible = [ni for ni, status in zip(nodes, plain, strict=True) if status.is_success]
    if not feasible:
        return
    fwk.run_pre_score_plugins(state, feasible)
    for plugin, _ in fwk.score_plugins:
        if plugin.name in state.skip_score or not isinstance(plugin, ScoresNodes):
            continue
        batch = _scores(lambda ns, p=plugin: list(p.score_nodes(state, ns)), feasible)
        one_by_one = _scores(lambda ns, p=plugin: [p.score(state, ni, ni) for ni in ns], feasible)
        assert batch == one_by_one, plugin.name


def _outcome(case: dict, version: str) -> tuple:
    settings = settings_for(version)
    outcome = place(
        Cluster(snapshot_from_objects(case["objects"])),
        pod_from_object(case["pod"]),
        profile=default_profile(settings),
        settings=settings,
    )
    nodes = [(n.node_name, n.status, n.scores, n.raw_scores, n.total) for n in outcome.nodes]
    return outcome.selected_node, outcome.message, nodes, outcome.cycle_error


@pytest.mark.parametrize("version", ["1.32", "1.35", "1.37"])
@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("seed", seeds(6))
def test_a_placement_batched_equals_one_node_by_node(
    family: str, seed: int, version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole placement (every node's status and scores, the choice, the message) with
    every cycle batched (BATCH_FROM_NODES 0) and node by node (the random clusters are
    below the default BATCH_FROM_NODES)."""
    case = FAMILIES[family](seed)
    plain = _outcome(copy.deepcopy(case), version)
    monkeypatch.setattr(runtime, "BATCH_FROM_NODES", 0)
    assert _outcome(case, version) == plain


def test_fit_with_pods_equals_its_filter_at_the_edges() -> None:
    """NodeResourcesFit's pass-1 batch against its Filter: too many pods, shortfalls within
    and beyond allocatable, sums whose difference wraps in int64, and a sum beyond int64
    (the batch leaves it to Filter)."""
    c = cluster([node("full", 4000, pods=1), node("small", 500), node("roomy", 8000)],
                [pod("base", 100, node="full")])  # fmt: skip
    view = scheduler_view(c, DEFAULT_SETTINGS)
    fwk, state = cycle(pod("p", 1000, GI), view)
    fit = fwk._filters_by_name["NodeResourcesFit"]
    roomy = view.by_name["roomy"]
    wraps = NodeInfoPods({"cpu": -(2**63), "memory": 2**63 - 1}, 0, None)
    infos = [*view.nodes, roomy]
    pods = [ni.base_state() for ni in view.nodes] + [wraps]
    one_by_one = [fit.filter(state, ni, ns) for ni, ns in zip(infos, pods, strict=True)]
    assert fit.filter_with_pods(state, infos, pods) == one_by_one
    assert sum(status is not None for status in one_by_one) == 3
    beyond = [*pods[:-1], NodeInfoPods({"cpu": 2**64}, 0, None)]
    one_by_one = [fit.filter(state, ni, ns) for ni, ns in zip(infos, beyond, strict=True)]
    assert fit.filter_with_pods(state, infos, beyond) == one_by_one


def test_fit_with_pods_keeps_rows_per_nodeinfo_and_pods() -> None:
    """Pass 1's rows are kept by the identity of the NodeInfo and its NodeInfoPods: the
    same pair again answers alike, another NodeInfoPods of the same NodeInfo by its own
    sums, another pod by its own request."""
    c = cluster([node("a", 4000), node("b", 2000)], [pod("base", 1500, node="b")])
    view = scheduler_view(c, DEFAULT_SETTINGS)
    fwk, state = cycle(pod("p", 1000, GI), view)
    fit = fwk._filters_by_name["NodeResourcesFit"]
    infos = list(view.nodes)
    pods = [ni.base_state() for ni in infos]
    first = fit.filter_with_pods(state, infos, pods)
    assert first == fit.filter_with_pods(state, infos, pods) == [None, first[1]]
    assert first[1] is not None
    fuller = [pods[0].with_pods([view.by_name["b"].pods[0]]), pods[1]]
    one_by_one = [fit.filter(state, ni, ns) for ni, ns in zip(infos, fuller, strict=True)]
    assert fit.filter_with_pods(state, infos, fuller) == one_by_one
    _, small = cycle(pod("q", 100, GI), view)
    one_by_one = [fit.filter(small, ni, ns) for ni, ns in zip(infos, pods, strict=True)]
    assert fit.filter_with_pods(small, infos, pods) == one_by_one == [None, None]


def test_carried_pass_one_states_equal_fresh_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pass 1's NodeInfoPods are carried on the NodeInfos from cycle to cycle
    (NodeInfo.with_nominated): in a queue run whose binds change nodes with nominated pods,
    and whose pods of two priorities see different nominated pods, every cycle's filter_all
    equals RunFilterPluginsWithNominatedPods node by node on states built afresh."""
    nodes = [node(f"n{i}", 4000) for i in range(4)]
    bound = [pod(f"base{i}", 1000, node=f"n{i}") for i in range(4)]
    nominees = [
        pod("nom0", 2000, priority=10, nominated="n0", host_ports=(8080,)),
        pod("nom1", 1000, priority=0, nominated="n1"),
        pod("nom2", 500, priority=10, nominated="n1"),
    ]
    queued = [pod(f"p{i}", 400, priority=10 * (i % 2), host_ports=(8080,) * (i == 3))
              for i in range(10)]  # fmt: skip
    c = cluster(nodes, [*bound, *nominees, *queued])
    monkeypatch.setattr(runtime, "BATCH_FROM_NODES", 0)
    filter_all = Framework.filter_all
    carried = []

    def fresh(ni: NodeInfo, added) -> NodeInfoPods:
        return ni.base_state().with_pods(added)

    def checked(self: Framework, state, nodes, batch_from=None):
        carried.extend(ni.name for ni in nodes if ni._nominated_states)
        got = filter_all(self, state, nodes, batch_from)
        with monkeypatch.context() as m:
            m.setattr(NodeInfo, "with_nominated", fresh)
            assert got == [self.run_filter_plugins_with_nominated(state, ni) for ni in nodes]
        return got

    monkeypatch.setattr(Framework, "filter_all", checked)
    run = run_queue(c, queued, profiles={DEFAULT_SCHEDULER_NAME: DEFAULT_PROFILE},
                    settings=DEFAULT_SETTINGS)  # fmt: skip
    assert len(run.steps) == len(queued)
    assert {"n0", "n1"} <= set(carried)


def test_with_nominated_is_kept_per_added_pods_and_forgotten_with_the_pods() -> None:
    """NodeInfo.with_nominated: the same NodeInfoPods for the same added pods, equal to one
    built afresh; other pods get their own; a NodeInfo changed in place (forget_orders)
    builds it again."""
    c = cluster([node("a", 4000)], [pod("b", 1000, node="a"), pod("x", 300), pod("y", 200)])
    view = scheduler_view(c, DEFAULT_SETTINGS, whole_pods=True)
    ni = view.nodes[0]
    x, y = (pod_info(p, DEFAULT_SETTINGS) for p in c.snapshot.pods[1:])
    first = ni.with_nominated([x])
    assert ni.with_nominated([x]) is first
    assert first == ni.base_state().with_pods([x])
    assert ni.with_nominated([x, y]) == ni.base_state().with_pods([x, y])
    assert ni.with_nominated([x]) is first
    ni.forget_orders()
    assert ni.with_nominated([x]) is not first
    assert ni.with_nominated([x]) == first
