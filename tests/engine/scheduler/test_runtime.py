"""The framework runtime runs what the profile enables: filter order, disabled plugins,
weights, Skip, PreFilterResult node sets, the nodes the scheduler examines with
percentageOfNodesToScore, and the version switch of NodeResourcesFit's score; and that it
knows plugins only by the capabilities they declare."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from service.engine.objects import Taint
from service.engine.scheduler import runtime
from service.engine.scheduler.framework import UNRESOLVABLE, FilterPlugin, IgnoresNodePods, Status
from service.engine.scheduler.nominated import prepare_nominated
from service.engine.scheduler.placement import num_feasible_nodes_to_find, place
from service.engine.scheduler.plugins import REGISTRY, default_preemption
from service.engine.scheduler.preemption import preempt
from service.engine.scheduler.profile import DEFAULT_PROFILE, IN_TREE, Profile
from service.engine.scheduler.queue import WorkingCluster
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS, settings_for
from service.ingest.kube import pod_from_object
from tests.engine.scheduler.helpers import GI, cluster, cluster_of, node, pod


def _without(profile, plugin):
    return replace(
        profile,
        pre_filter=tuple(n for n in profile.pre_filter if n != plugin),
        filter=tuple(n for n in profile.filter if n != plugin),
        pre_score=tuple(n for n in profile.pre_score if n != plugin),
        score=tuple((n, w) for n, w in profile.score if n != plugin),
    )


@pytest.mark.parametrize(
    ("percentage", "num_all_nodes", "want"),
    [
        # schedule_one_test.go TestNumFeasibleNodesToFind
        pytest.param(None, 10, 10, id="not set, not more than 100 nodes"),
        pytest.param(40, 10, 10, id="set, not more than 100 nodes"),
        pytest.param(None, 1000, 420, id="not set, more than 100 nodes"),
        pytest.param(40, 1000, 400, id="set, more than 100 nodes"),
        pytest.param(None, 6000, 300, id="not set, more than 50*125 nodes"),
        pytest.param(40, 6000, 2400, id="set, more than 50*125 nodes"),
    ],
)
def test_num_feasible_nodes_to_find(percentage, num_all_nodes, want) -> None:
    assert num_feasible_nodes_to_find(percentage, num_all_nodes) == want


def test_a_disabled_filter_does_not_reject() -> None:
    tainted = node("t", taints=(Taint(key="k", value="v", effect="NoSchedule"),))
    cl = cluster([tainted], [])
    assert place(cl, pod("p", 100), settings=DEFAULT_SETTINGS).selected_node is None
    out = place(
        cl,
        pod("p", 100),
        profile=_without(DEFAULT_PROFILE, "TaintToleration"),
        settings=DEFAULT_SETTINGS,
    )
    assert out.selected_node == "t"


def test_filter_order_decides_the_reported_plugin() -> None:
    """A node failing two filters reports the first in the profile's order."""
    tainted = node("t", cpu=100, taints=(Taint(key="k", value="v", effect="NoSchedule"),))
    cl = cluster([tainted], [])
    out = place(cl, pod("p", 1000), settings=DEFAULT_SETTINGS)
    assert out.nodes[0].status.plugin == "TaintToleration"
    names = list(DEFAULT_PROFILE.filter)
    names.remove("NodeResourcesFit")
    names.insert(0, "NodeResourcesFit")
    out = place(
        cl,
        pod("p", 1000),
        profile=replace(DEFAULT_PROFILE, filter=tuple(names)),
        settings=DEFAULT_SETTINGS,
    )
    assert out.nodes[0].status.plugin == "NodeResourcesFit"
    assert out.nodes[0].reasons == ["Insufficient cpu"]


def test_weights_multiply_the_normalized_scores() -> None:
    cl = cluster([node("a", cpu=4000, memory=8 * GI)], [])
    weights = tuple((n, 5 if n == "NodeResourcesFit" else w) for n, w in DEFAULT_PROFILE.score)
    out = place(
        cl,
        pod("p", 1000, GI),
        profile=replace(DEFAULT_PROFILE, score=weights),
        settings=DEFAULT_SETTINGS,
    )
    entry = out.nodes[0]
    assert out.weights["NodeResourcesFit"] == 5
    assert entry.total == sum(out.weights[p] * s for p, s in entry.scores.items())
    default = place(cl, pod("p", 1000, GI), settings=DEFAULT_SETTINGS).nodes[0]
    assert entry.total - default.total == 4 * entry.scores["NodeResourcesFit"]


def test_prefilter_result_node_set_leaves_other_nodes_unfiltered() -> None:
    incoming = pod_from_object(
        {
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {
                "containers": [{"name": "c"}],
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchFields": [
                                        {"key": "metadata.name", "operator": "In", "values": ["b"]}
                                    ]
                                }
                            ]
                        }
                    }
                },
            },
        }
    )
    out = place(cluster([node("a"), node("b")], []), incoming, settings=DEFAULT_SETTINGS)
    a, b = out.nodes
    assert b.feasible and out.selected_node == "b"
    assert a.status.code == UNRESOLVABLE
    assert a.reasons == ["node(s) didn't satisfy plugin(s) [NodeAffinity]"]


def test_start_index_examines_what_the_scheduler_would() -> None:
    """Below 100 nodes the scheduler looks for every feasible node; from 100 on, only the
    adaptive share, starting at the start index and wrapping around."""
    nodes = [node(f"n{i:03}") for i in range(200)]
    cl = cluster(nodes, [])
    out = place(cl, pod("p", 100), start_index=150, settings=DEFAULT_SETTINGS)
    assert out.num_nodes_to_find == 100  # max(200 * 48 // 100, 100)
    examined = [n.node_name for n in out.nodes if n.examined]
    assert examined == [f"n{i:03}" for i in (*range(0, 50), *range(150, 200))]
    assert out.next_start_index == 50
    assert all(not n.feasible for n in out.nodes if not n.examined)
    full = place(cl, pod("p", 100), settings=DEFAULT_SETTINGS)
    assert all(n.examined for n in full.nodes) and full.num_nodes_to_find is None


def test_preemption_without_the_resource_filters_runs_them_literally() -> None:
    """A profile without NodePorts takes the literal victim search (no running sums), and
    a pod then needs only the resources freed."""
    n = node("n", cpu=1000)
    low = pod("low", 800, node="n", priority=0, host_ports=(9100,))
    incoming = pod("p", 500, priority=100, host_ports=(9100,))
    cl = cluster([n], [low])
    assert [v.name for v in preempt(cl, incoming, settings=DEFAULT_SETTINGS).victims] == ["low"]
    out = preempt(
        cl, incoming, profile=_without(DEFAULT_PROFILE, "NodePorts"), settings=DEFAULT_SETTINGS
    )
    assert [v.name for v in out.victims] == ["low"]
    small = pod("q", 100, priority=100, host_ports=(9100,))
    assert preempt(
        cl, small, profile=_without(DEFAULT_PROFILE, "NodePorts"), settings=DEFAULT_SETTINGS
    ).fits_without_preemption


def test_fit_score_reads_pod_level_resources_by_version() -> None:
    """scheduler-oracle.json "nodeResourcesFit-score-pod-level-resources": v1.35's Fit score
    ignores pod-level resources (31); BalancedAllocation reads them in both (88 with the pod;
    1.37 scores the change from the empty node's 100: 50 + (50 + 88 - 100) / 2 = 69,
    kubernetes#135573)."""
    n7 = {
        "kind": "Node",
        "metadata": {"name": "n7"},
        "status": {"allocatable": {"cpu": "8", "memory": "1Gi", "pods": "4"}},
    }
    incoming = pod_from_object(
        {
            "metadata": {"name": "incoming", "namespace": "team"},
            "spec": {
                "containers": [
                    {"name": "c0", "resources": {"requests": {"cpu": "1.5", "memory": "128Mi"}}},
                    {"name": "c1", "resources": {"requests": {"cpu": "1500m", "memory": "1G"}}},
                ],
                "resources": {"requests": {"cpu": "200m", "memory": "256Mi"}},
            },
        }
    )
    cl = cluster_of([n7])
    v135 = place(cl, incoming, settings=settings_for("1.35"))
    newest = place(cl, incoming, settings=DEFAULT_SETTINGS)
    assert v135.nodes[0].scores["NodeResourcesFit"] == 31
    assert newest.nodes[0].scores["NodeResourcesFit"] == 86
    assert v135.nodes[0].scores["NodeResourcesBalancedAllocation"] == 88
    assert newest.nodes[0].scores["NodeResourcesBalancedAllocation"] == 69


def test_a_profile_without_a_prefilter_answers_its_filters_error_not_a_crash() -> None:
    """Upstream's NodeResourcesFit and NodePorts Filters read their PreFilter state and
    answer an Error when a profile disabled their PreFilter; scores fall back to computing."""
    profile = replace(
        DEFAULT_PROFILE,
        pre_filter=tuple(n for n in DEFAULT_PROFILE.pre_filter if n != "NodeResourcesFit"),
        pre_score=(),
    )
    out = place(cluster([node("a")], []), pod("p", 100), profile=profile, settings=DEFAULT_SETTINGS)
    status = out.nodes[0].status
    assert (status.code, status.plugin) == ("Error", "NodeResourcesFit")
    assert out.selected_node is None
    scored = place(
        cluster([node("a")], []),
        pod("p", 100),
        profile=replace(DEFAULT_PROFILE, pre_score=()),
        settings=DEFAULT_SETTINGS,
    )
    assert scored.selected_node == "a"
    assert (
        scored.nodes[0].scores["NodeResourcesFit"]
        == place(cluster([node("a")], []), pod("p", 100), settings=DEFAULT_SETTINGS)
        .nodes[0]
        .scores["NodeResourcesFit"]
    )


def test_a_profile_without_score_plugins_places_on_the_first_feasible_node() -> None:
    out = place(
        cluster([node("a", cpu=100), node("b"), node("c")], []),
        pod("p", 500),
        profile=replace(DEFAULT_PROFILE, score=(), pre_score=()),
        settings=DEFAULT_SETTINGS,
    )
    assert out.selected_node == "b"
    assert [n.scores for n in out.nodes] == [None, {}, {}]
    assert [n.total for n in out.nodes] == [None, 0, 0]


# --- the runtime names no plugin: it reads the capabilities plugins declare ---


def test_the_runtime_names_no_plugin() -> None:
    """runtime.py mentions no scheduler plugin by name, in code or prose, and imports no
    plugin module but the registry: what it knows of a plugin is its declared types."""
    source = Path(runtime.__file__).read_text()
    named = sorted(n for n in IN_TREE if re.search(rf"\b{n}\b", source))
    assert named == []
    imported = re.findall(r"^from service\.engine\.scheduler\.plugins(\S*) import", source, re.M)
    assert imported == [""]


def _with_filter(monkeypatch, cls) -> Profile:
    """DEFAULT_PROFILE with ``cls`` registered and enabled as its last filter."""
    monkeypatch.setattr(runtime, "REGISTRY", {**REGISTRY, cls.name: cls})
    return replace(DEFAULT_PROFILE, filter=(*DEFAULT_PROFILE.filter, cls.name))


class _PassesAll(FilterPlugin):
    name = "PassesAll"

    def filter(self, state, ni, ns):
        return None


class _PassesAllIgnoringPods(_PassesAll, IgnoresNodePods):
    name = "PassesAllIgnoringPods"


@pytest.mark.parametrize(("cls", "literal"), [(_PassesAll, True), (_PassesAllIgnoringPods, False)])
def test_preemption_takes_the_fast_path_by_capability(monkeypatch, cls, literal) -> None:
    """A filter of unknown name that declares nothing sends the victim search to the literal
    selection; the same filter declaring IgnoresNodePods keeps the fast path. The victims
    are the same."""
    calls = []
    reference = default_preemption.select_victims_reference

    def counted(*args):
        calls.append(args[3].name)
        return reference(*args)

    monkeypatch.setattr(default_preemption, "select_victims_reference", counted)
    profile = _with_filter(monkeypatch, cls)
    cl = cluster([node("n", cpu=1000)], [pod("low", 800, node="n", priority=0)])
    out = preempt(cl, pod("p", 500, priority=100), profile=profile, settings=DEFAULT_SETTINGS)
    assert [v.name for v in out.victims] == ["low"]
    assert calls == (["n"] if literal else [])


def test_nodes_with_nominated_pods_are_kept_from_cycle_to_cycle(monkeypatch) -> None:
    """The nodes with nominated pods and their pass-1 pods are kept while cycles count the
    same map (Framework._nominated_nodes_of): on the views of a queue run whose binds
    replace a node with nominated pods, every cycle's filter_all equals
    RunFilterPluginsWithNominatedPods node by node; a replaced node gets new pass-1 pods,
    the others keep theirs, and another map (another priority) is looked up afresh."""
    nodes = [node(f"n{i}", 4000) for i in range(4)]
    nominees = [
        pod("nom0", 2000, priority=10, nominated="n0"),
        pod("nom1", 3500, priority=0, nominated="n1"),
        pod("nom2", 500, priority=10, nominated="n3"),
    ]
    c = cluster(nodes, [pod("base", 1000, node="n0"), *nominees])
    monkeypatch.setattr(runtime, "BATCH_FROM_NODES", 0)
    work = WorkingCluster(c, DEFAULT_SETTINGS)
    fwk = runtime.Framework(DEFAULT_PROFILE, DEFAULT_SETTINGS)

    def filtered(incoming):
        view = work.view
        state = fwk.cycle_state(incoming, view)
        prepare_nominated(state, view, shared=True)
        plain = [fwk.run_filter_plugins_with_nominated(state, ni) for ni in view.nodes]
        assert fwk.filter_all(state, view.nodes) == plain
        return fwk._nominated_nodes, plain

    first, plain = filtered(pod("p", 1500, priority=0))
    assert first.names == ["n0", "n1", "n3"]
    assert [s.is_success for s in plain] == [False, False, True, True]
    work.bind(pod("q", 1500), "n0")
    again, plain = filtered(pod("p", 1500, priority=0))
    assert again.positions is first.positions
    assert again.infos[0] is not first.infos[0] and again.pods[1:] == first.pods[1:]
    assert again.pods[0] == again.infos[0].base_state().with_pods(again.nominated["n0"])
    higher, plain = filtered(pod("r", 3600, priority=10))
    assert higher.nominated is not again.nominated and higher.names == ["n0", "n3"]
    assert [s.is_success for s in plain] == [False, True, True, False]


def test_nodes_with_nominated_pods_are_found_again_on_other_nodes(monkeypatch) -> None:
    """A view whose nodes are not the kept ones' (other names at those positions) gets its
    nodes with nominated pods looked up afresh, even given the same map."""
    monkeypatch.setattr(runtime, "BATCH_FROM_NODES", 0)
    waiting = [pod("nom0", 3000, nominated="n0"), pod("nom1", 100, nominated="n1")]
    one = scheduler_view(cluster([node("n0", 4000), node("n1", 4000)], waiting), DEFAULT_SETTINGS)
    other = scheduler_view(cluster([node("n1", 4000), node("n0", 4000)], waiting), DEFAULT_SETTINGS)
    more = scheduler_view(
        cluster([node("n1", 4000), node("n2", 4000), node("n0", 4000)], waiting), DEFAULT_SETTINGS
    )
    other.nominated = more.nominated = one.nominated
    fwk = runtime.Framework(DEFAULT_PROFILE, DEFAULT_SETTINGS)
    for view in (one, other, more, one):
        state = fwk.cycle_state(pod("p", 2000), view)
        prepare_nominated(state, view, shared=True)
        plain = [fwk.run_filter_plugins_with_nominated(state, ni) for ni in view.nodes]
        assert fwk.filter_all(state, view.nodes) == plain
        assert [s.is_success for s in plain] == [ni.name != "n0" for ni in view.nodes]
        known = fwk._nominated_nodes
        assert [view.nodes[i].name for i in known.positions] == known.names == ["n0", "n1"]


@pytest.mark.parametrize("size", [0, 1, 31, 32, 33, 200, 5000])
@pytest.mark.parametrize("share", [0.0, 0.001, 0.01, 1 / 32, 0.05, 0.5, 1.0])
def test_kept_is_the_passed_items_in_order(size, share):
    """_kept, the batch's survivors of a filter (slices between few rejections, a mask for
    many), gives the items the mask passed, in order, as a plain comprehension does."""
    rng = np.random.default_rng(size * 1000 + int(share * 1000))
    items = [object() for _ in range(size)]
    for source in (items, tuple(items)):
        passed = rng.random(size) >= share
        dropped = np.flatnonzero(~passed)
        expected = [x for x, ok in zip(source, passed.tolist(), strict=True) if ok]
        kept = runtime._kept(source, passed, dropped)
        assert type(kept) is list
        assert [id(x) for x in kept] == [id(x) for x in expected]


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 200, 5000])
@pytest.mark.parametrize("share", [0.0, 0.01, 1 / 8, 0.2, 1.0])
def test_rejections_are_the_answers_not_none_in_order(size, share):
    """_rejections (read by position when few, else by testing every answer) gives the
    batch's Status answers in order, as ``compress(found, found)`` does."""
    rng = np.random.default_rng(size * 1000 + int(share * 1000))
    rejected = rng.random(size) < share
    found = [Status(UNRESOLVABLE, (f"r{i}",), "P") if r else None for i, r in enumerate(rejected)]
    dropped = np.flatnonzero(rejected)
    got = runtime._rejections(found, dropped)
    assert [id(s) for s in got] == [id(s) for s in found if s is not None]
