"""PodTopologySpread's node classes read by view index (``_class_ids``: the class ids of a
view's nodes kept between the views a queue run derives, patched where a step replaced
NodeInfos) held to the plain forms, on clusters of more nodes than the by-index path
needs: filter_nodes and score_nodes node by node, on the view's nodes, on subsets with and
without the indexes the cycle gives, and on lists holding NodeInfos that are not the
view's at their index (another view's, or one with other labels); with the class registry
emptied in the middle of a run."""

from __future__ import annotations

import random

import msgspec
import numpy as np
import pytest

from service.engine.objects import (
    Cluster,
    LabelSelector,
    Node,
    Pod,
    Service,
    Snapshot,
    Taint,
    TopologySpreadConstraint,
)
from service.engine.scheduler.framework import CycleState, NodeInfo
from service.engine.scheduler.plugins import pod_topology_spread as pts
from service.engine.scheduler.plugins.helper import give_node_indexes
from service.engine.scheduler.plugins.pod_topology_spread import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    SCHEDULE_ANYWAY,
)
from service.engine.scheduler.profile import DEFAULT_PROFILE
from service.engine.scheduler.queue import WorkingCluster
from service.engine.scheduler.runtime import Framework
from service.engine.version import DEFAULT_SETTINGS

ZONE = "topology.kubernetes.io/zone"
NODES = 150  # above the by-index path's threshold (_BY_INDEX_FROM)
WEB = {"app": "web"}


def _node(rng: random.Random, i: int) -> Node:
    """A node whose hostname label is mostly its name (else another node's, or missing),
    mostly in a zone, in one of two pools, sometimes tainted."""
    name = f"n{i}"
    labels = {"pool": rng.choice("ab")}
    roll = rng.random()
    if roll < 0.8:
        labels[LABEL_HOSTNAME] = name
    elif roll < 0.9:
        labels[LABEL_HOSTNAME] = f"n{rng.randrange(NODES)}"
    if rng.random() < 0.9:
        labels[ZONE] = rng.choice(("z1", "z2", "z3"))
    taints = (Taint("dedicated", "NoSchedule"),) if rng.random() < 0.1 else ()
    allocatable = {"cpu": 64000, "memory": 2**40, "pods": 110}
    return Node(name=name, labels=labels, taints=taints, allocatable=allocatable)


def _cluster(rng: random.Random) -> Cluster:
    nodes = tuple(_node(rng, i) for i in range(NODES))
    pods = tuple(
        Pod(
            namespace="default",
            name=f"p{i}",
            uid=f"u{i}",
            node_name=rng.choice(nodes).name,
            labels={"app": rng.choice(("web", "db"))},
        )
        for i in range(NODES)
    )
    services = (Service("default", "web", {"app": "web"}),)
    return Cluster(Snapshot(nodes=nodes, pods=pods, services=services))


def _incoming(rng: random.Random, i: int) -> Pod:
    """A web pod with hostname and zone constraints of either kind (none: the default
    constraints, from the Service), maybe a node selector and honoured taints."""
    constraints = tuple(
        TopologySpreadConstraint(
            rng.choice((1, 2)),
            key,
            rng.choice((DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)),
            LabelSelector(match_labels=WEB),
            node_taints_policy=rng.choice((None, "Honor")),
        )
        for key in rng.sample((LABEL_HOSTNAME, ZONE), rng.randint(0, 2))
    )
    selector = {"pool": "a"} if rng.random() < 0.3 else {}
    return Pod(
        namespace="default",
        name=f"in{i}",
        uid=f"in{i}",
        labels=dict(WEB),
        node_selector=selector,
        topology_spread_constraints=constraints,
    )


def _relabelled(ni: NodeInfo) -> NodeInfo:
    """A NodeInfo at ``ni``'s index whose node has other labels (another class)."""
    labels = {**ni.node.labels, ZONE: "elsewhere", LABEL_HOSTNAME: "elsewhere"}
    return NodeInfo(msgspec.structs.replace(ni.node, labels=labels), ni.index, ni.pods)


def _lists(rng: random.Random, view, before) -> list[tuple[list[NodeInfo], bool]]:
    """(nodes, whether the cycle gives their indexes): the view's nodes, a subset in view
    order, a shuffled copy, and the view's nodes with some replaced by NodeInfos not the
    view's at their index (the view before's, relabelled ones)."""
    nodes = view.nodes
    some = sorted(rng.sample(nodes, rng.randint(110, len(nodes))), key=lambda ni: ni.index)
    mixed = list(nodes)
    rng.shuffle(mixed)
    strays = list(nodes)
    for at in rng.sample(range(len(nodes)), 12):
        strays[at] = before[at] if rng.random() < 0.5 else _relabelled(nodes[at])
    return [(nodes, True), (some, True), (some, False), (mixed, False), (strays, True)]


@pytest.mark.parametrize("limit", [pts._Classes.LIMIT, NODES + 7])
@pytest.mark.parametrize("seed", range(8))
def test_filter_and_score_by_index_as_node_by_node(seed: int, limit: int, monkeypatch) -> None:
    """Along a queue run (cordons, binds), with the class registry emptied now and then
    when ``limit`` is small."""
    monkeypatch.setattr(pts._Classes, "LIMIT", limit)
    rng = random.Random(f"pts-by-index/{seed}")
    cluster = _cluster(rng)
    names = [node.name for node in cluster.nodes]
    work = WorkingCluster(cluster, DEFAULT_SETTINGS, cordoned=rng.sample(names, 3))
    fwk = Framework(DEFAULT_PROFILE, DEFAULT_SETTINGS)
    plugin = next(p for p in fwk.pre_filter_plugins if p.name == "PodTopologySpread")
    before = list(work.view.nodes)
    for step in range(10):
        view = work.view
        pod = _incoming(rng, step)
        for nodes, given in _lists(rng, view, before):
            state = CycleState(pod, view, DEFAULT_SETTINGS)
            if given:
                give_node_indexes(state, nodes, np.array([ni.index for ni in nodes]))
            _, status = plugin.pre_filter(state, view.nodes)
            if not status.is_skip:
                want = [plugin.filter(state, ni, ni) for ni in nodes]
                assert plugin.filter_nodes(state, nodes) == want, (seed, step)
            if plugin.pre_score(state, nodes).is_skip:
                continue
            want = [plugin.score(state, ni, ni) for ni in nodes]
            assert list(plugin.score_nodes(state, nodes)) == want, (seed, step)
            assert list(plugin.score_nodes(state, list(nodes))) == want, (seed, step)
        assert pts._classes_for(view).last.nodes is view.nodes  # the by-index path ran
        before = list(view.nodes)
        bound = Pod(namespace="default", name=f"b{step}", uid=f"b{step}", labels=dict(WEB))
        work.bind(bound, rng.choice(names))


def _relabelled_view(rng: random.Random, view, count: int):
    """A view derived from ``view`` whose nodes differ in ``count`` NodeInfos of another
    class (what a queue step never makes: the patch must look them up all the same)."""
    derived = type(view).__new__(type(view))
    derived.__dict__.update(view.__dict__)
    derived.nodes = list(view.nodes)
    for at in rng.sample(range(len(view.nodes)), count):
        derived.nodes[at] = _relabelled(view.nodes[at])
    return derived


@pytest.mark.parametrize("seed", range(4))
def test_view_class_ids_as_one_lookup_per_node(seed: int) -> None:
    """The ids kept for a view and patched for the views derived from it are each node's
    own class; a view asked again after another gets its own ids back."""
    rng = random.Random(f"pts-view-ids/{seed}")
    cluster = _cluster(rng)
    names = [node.name for node in cluster.nodes]
    work = WorkingCluster(cluster, DEFAULT_SETTINGS, cordoned=rng.sample(names, 3))
    views = []
    for step in range(6):
        views.append(work.view)
        views.append(_relabelled_view(rng, work.view, rng.choice((1, 5, NODES // 2))))
        bound = Pod(namespace="default", name=f"b{step}", uid=f"b{step}", labels=dict(WEB))
        work.bind(bound, rng.choice(names))
    for view in (*views, *reversed(views)):
        classes = pts._classes_for(view)
        by_index = pts._view_class_ids(view)
        assert by_index.generation is classes.generation
        assert by_index.ids.tolist() == [classes[ni].id for ni in view.nodes]


def test_view_class_ids_of_a_view_whose_nodes_are_no_list() -> None:
    """A view holding its nodes in a tuple gets them as a list first (engine/addresses.py
    reads a list's items)."""
    rng = random.Random("pts-view-ids/tuple")
    work = WorkingCluster(_cluster(rng), DEFAULT_SETTINGS)
    view = type(work.view).__new__(type(work.view))
    view.__dict__.update(work.view.__dict__)
    view.nodes = tuple(_relabelled(ni) if ni.index % 7 == 0 else ni for ni in work.view.nodes)
    classes = pts._classes_for(view)
    for _ in range(2):
        assert pts._view_class_ids(view).ids.tolist() == [classes[ni].id for ni in view.nodes]
