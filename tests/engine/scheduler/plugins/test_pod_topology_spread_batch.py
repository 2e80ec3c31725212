"""PodTopologySpread's batch paths (per node class: PreFilter's domains, filter_nodes,
PreScore's domains, score_nodes, NormalizeScore by value, the carried PreScore's memos) held
to the plain node-by-node forms they replace, on random workloads whose nodes are made
awkward on purpose: a hostname label that is not the node's name (or another node's name),
no hostname or zone label, taints, and pods whose node selector reads the hostname or whose
affinity reads the node's name."""

from __future__ import annotations

import math
import random

import pytest

from service.engine.labels import selector_matches
from service.engine.objects import Cluster
from service.engine.scheduler.framework import CycleState
from service.engine.scheduler.plugins import pod_topology_spread as pts
from service.engine.scheduler.plugins.pod_topology_spread import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    MAX_NODE_SCORE,
    SCHEDULE_ANYWAY,
    _CriticalPaths,
    _domain_counts,
    _has_all_keys,
    _matching_per_node,
    _selecting_services,
)
from service.engine.scheduler.profile import DEFAULT_PROFILE
from service.engine.scheduler.runtime import Framework
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object
from tests.conftest import snapshot_from_objects
from tests.engine.scheduler.random_clusters import random_workload_case

SEEDS = range(160)
ZONE = "topology.kubernetes.io/zone"


def _awkward(seed: int) -> dict:
    """A random workload case with awkward nodes and pods (see the module docstring)."""
    case = random_workload_case(seed)
    rng = random.Random(f"pts-batch/{seed}")
    nodes = [o for o in case["objects"] if o["kind"] == "Node"]
    names = [n["metadata"]["name"] for n in nodes]
    for node in nodes:
        labels = node["metadata"]["labels"]
        roll = rng.random()
        if roll < 0.15:
            labels[LABEL_HOSTNAME] = rng.choice([*names, "elsewhere"])
        elif roll < 0.25:
            del labels[LABEL_HOSTNAME]
        if rng.random() < 0.1:
            labels.pop(ZONE, None)
    spec = case["pod"]["spec"]
    roll = rng.random()
    if roll < 0.15:
        spec["nodeSelector"] = {ZONE: rng.choice(("z1", "z2"))}
    elif roll < 0.25:
        spec["nodeSelector"] = {LABEL_HOSTNAME: rng.choice(names)}
    elif roll < 0.35:
        field = {"key": "metadata.name", "operator": "In", "values": [rng.choice(names)]}
        terms = [{"matchFields": [field]}, {"matchExpressions": []}]
        required = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        spec["affinity"] = {**spec.get("affinity", {}), "nodeAffinity": required}
    constraints = [dict(c) for c in spec.get("topologySpreadConstraints", ())]
    for c in constraints:  # copies: the workload's pods share the originals
        if rng.random() < 0.3:
            c["whenUnsatisfiable"] = rng.choice((DO_NOT_SCHEDULE, SCHEDULE_ANYWAY))
            if c["whenUnsatisfiable"] == SCHEDULE_ANYWAY:
                c.pop("minDomains", None)
        if rng.random() < 0.2:
            c["nodeTaintsPolicy"] = "Honor"
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    return case


def _setup(seed: int):
    case = _awkward(seed)
    view = scheduler_view(Cluster(snapshot_from_objects(case["objects"])), DEFAULT_SETTINGS)
    fwk = Framework(DEFAULT_PROFILE, DEFAULT_SETTINGS)
    plugin = next(p for p in fwk.pre_filter_plugins if p.name == "PodTopologySpread")
    return view, plugin, pod_from_object(case["pod"])


def _node_lists(view, rng: random.Random) -> list[list]:
    """The view's nodes, a random part of them, and a shuffled copy."""
    some = [ni for ni in view.nodes if rng.random() < 0.6]
    mixed = list(view.nodes)
    rng.shuffle(mixed)
    return [view.nodes, some, mixed]


# --- the plain forms (the node-by-node code the batch paths replace) ---


def _plain_paths(counts: dict[str, int]) -> _CriticalPaths:
    paths = _CriticalPaths()
    for value, num in counts.items():
        paths.update(value, num)
    return paths


def _plain_pre_score(plugin, state, nodes):
    """initPreScoreState node by node: the ignored nodes, the domains, the weights."""
    pod = state.pod
    constraints = plugin._get_constraints(state, SCHEDULE_ANYWAY)
    require_all = bool(pod.topology_spread_constraints) or not plugin.system_defaulted
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for ni in nodes:
        labels = ni.node.labels
        if require_all and not _has_all_keys(labels, constraints):
            ignored.add(ni.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key != LABEL_HOSTNAME:
                counts[i].setdefault(labels.get(c.topology_key, ""), 0)
    weights = [
        math.log(
            float((len(nodes) - len(ignored) if c.topology_key == LABEL_HOSTNAME else len(d)) + 2)
        )
        for c, d in zip(constraints, counts, strict=True)
    ]
    return ignored, set(map(frozenset, counts)), weights


def _plain_normalize(ignored: set[str], nodes, scores: list[int]) -> list[int]:
    skip = [ni.name in ignored for ni in nodes]
    counted = [v for v, out in zip(scores, skip, strict=True) if not out]
    low, high = min(counted, default=2**63 - 1), max(0, max(counted, default=0))
    if high == 0:
        return [0 if out else MAX_NODE_SCORE for out in skip]
    top = high + low
    pairs = zip(scores, skip, strict=True)
    return [0 if out else (top - v) * MAX_NODE_SCORE // high for v, out in pairs]


# --- PreFilter and Filter ---


@pytest.mark.parametrize("seed", SEEDS)
def test_pre_filter_and_filter_nodes_as_node_by_node(seed: int) -> None:
    view, plugin, pod = _setup(seed)
    state = CycleState(pod, view, DEFAULT_SETTINGS)
    _, status = plugin.pre_filter(state, view.nodes)
    if status.is_skip:
        return
    s = state.data[plugin.name]
    constraints = s.constraints
    matching = [_matching_per_node(view, c.selector, pod.namespace) for c in constraints]
    plain = _domain_counts(pod, constraints, matching, view.nodes)
    assert s.counts == plain
    assert [list(d) for d in s.counts] == [list(d) for d in plain]  # the same order
    assert [p.paths for p in s.paths] == [_plain_paths(d).paths for d in plain]
    rng = random.Random(seed)
    for nodes in _node_lists(view, rng):
        assert plugin.filter_nodes(state, nodes) == [plugin.filter(state, n, n) for n in nodes]
    # after AddPod / RemovePod (nominated pods, preemption's victims)
    other = state.clone()
    for ni in view.nodes:
        for pi in ni.pods:
            if rng.random() < 0.3:
                plugin.remove_pod(other, pi, ni)
    nodes = list(view.nodes)
    assert plugin.filter_nodes(other, nodes) == [plugin.filter(other, n, n) for n in nodes]


def _spread_pod(zone_key: str) -> dict:
    spread = {
        "maxSkew": 1,
        "topologyKey": zone_key,
        "whenUnsatisfiable": DO_NOT_SCHEDULE,
        "labelSelector": {"matchLabels": {"app": "a"}},
    }
    spec = {"containers": [{"name": "c"}], "topologySpreadConstraints": [spread]}
    return {
        "kind": "Pod",
        "metadata": {"name": "in", "namespace": "default", "labels": {"app": "a"}},
        "spec": spec,
    }


@pytest.mark.parametrize("seed", range(20))
def test_domain_counts_per_combination_as_node_by_node(seed: int) -> None:
    """Constraints every node passes decide per combination of the keys' values: nodes of
    many classes (other labels) share one, zones first shown in shuffled order, classes
    made in another order than the view's, nodes lacking a key; the domains, their counts
    and their order are the plain ones."""
    rng = random.Random(f"pts-combination/{seed}")
    objects: list[dict] = []
    for n in range(40):
        labels = {LABEL_HOSTNAME: f"n{n}", "rack": f"r{rng.randrange(6)}"}
        if rng.random() < 0.85:
            labels[ZONE] = rng.choice(("z3", "z1", "z2", "z4"))
        objects.append({"kind": "Node", "metadata": {"name": f"n{n}", "labels": labels}})
        for k in range(rng.randrange(3)):
            objects.append(
                {
                    "kind": "Pod",
                    "metadata": {
                        "name": f"p{n}-{k}",
                        "namespace": "default",
                        "labels": {"app": rng.choice(("a", "b"))},
                    },
                    "spec": {"nodeName": f"n{n}", "containers": [{"name": "c"}]},
                    "status": {"phase": "Running"},
                }
            )
    view = scheduler_view(Cluster(snapshot_from_objects(objects)), DEFAULT_SETTINGS)
    pod = pod_from_object(_spread_pod(ZONE))
    fwk = Framework(DEFAULT_PROFILE, DEFAULT_SETTINGS)
    plugin = next(p for p in fwk.pre_filter_plugins if p.name == "PodTopologySpread")
    shuffled = list(view.nodes)
    rng.shuffle(shuffled)
    pts._classes_for(view).ids_of(shuffled)  # classes (and ids) made out of the view's order
    state = CycleState(pod, view, DEFAULT_SETTINGS)
    plugin.pre_filter(state, view.nodes)
    s = state.data[plugin.name]
    assert s.constraints[0].includes_every_node(pod)
    matching = [_matching_per_node(view, c.selector, pod.namespace) for c in s.constraints]
    plain = _domain_counts(pod, s.constraints, matching, view.nodes)
    assert s.counts == plain
    assert [list(d) for d in s.counts] == [list(d) for d in plain]  # the same order


@pytest.mark.parametrize("seed", range(40))
def test_critical_paths_of_as_every_update(seed: int) -> None:
    """The paths built with the early stop are those of an update per domain: ties, the
    domain "" (the paths' initial value), one domain, none."""
    rng = random.Random(seed)
    for _ in range(50):
        values = rng.sample(["", "a", "b", "c", "d", "e", "f"], rng.randint(0, 7))
        counts = {v: rng.choice((0, 0, 1, 2, 5, 2**31 - 1)) for v in values}
        assert _CriticalPaths.of(counts).paths == _plain_paths(counts).paths, counts


# --- PreScore, Score, NormalizeScore ---


@pytest.mark.parametrize("seed", SEEDS)
def test_pre_score_score_nodes_and_normalize_as_node_by_node(seed: int) -> None:
    view, plugin, pod = _setup(seed)
    rng = random.Random(seed)
    for nodes in _node_lists(view, rng):
        if not nodes:
            continue
        state = CycleState(pod, view, DEFAULT_SETTINGS)
        if plugin.pre_score(state, nodes).is_skip:
            continue
        s = state.data["PodTopologySpread/score"]
        ignored, domains, weights = _plain_pre_score(plugin, state, nodes)
        assert (s.ignored, set(map(frozenset, s.counts)), s.weights) == (
            ignored,
            domains,
            weights,
        )
        for given in (nodes, list(nodes), nodes[::-1]):
            column = plugin.score_nodes(state, given)
            raw = list(map(int, column))
            assert raw == [plugin.score(state, n, n) for n in given]
            scores = list(raw)
            plugin.normalize_score(state, given, scores)
            assert scores == _plain_normalize(s.ignored, given, raw)
            plugin.normalize_score(state, given, column)
            assert list(map(int, column)) == scores
        # scores not from score_nodes (a caller's own, or capacity's kept raw scores)
        scores = [rng.randint(0, 40) for _ in nodes]
        want = _plain_normalize(s.ignored, nodes, scores)
        plugin.normalize_score(state, nodes, scores)
        assert scores == want


def test_score_nodes_after_the_class_registry_is_emptied(monkeypatch) -> None:
    """The registry of node classes may be emptied between a PreScore and its Score (another
    request's nodes): the classes already handed out still score their nodes."""
    for seed in range(40):
        view, plugin, pod = _setup(seed)
        state = CycleState(pod, view, DEFAULT_SETTINGS)
        if plugin.pre_score(state, view.nodes).is_skip:
            continue
        class_map = pts._classes_for(view)
        class_map.clear()
        class_map.generation = pts._Generation()
        nodes = view.nodes
        assert list(plugin.score_nodes(state, nodes)) == [plugin.score(state, n, n) for n in nodes]
        assert list(plugin.score_nodes(state, list(nodes))) == [
            plugin.score(state, n, n) for n in nodes
        ]


def test_class_maps_live_as_long_as_their_base_view() -> None:
    """A view's class map is shared by the views derived from it (the same images_key) and
    goes with its base view: it holds no NodeInfo beyond it."""
    import gc

    view, _, _ = _setup(3)
    pts._view_class_ids(view)
    derived = type(view).__new__(type(view))
    derived.__dict__.update(view.__dict__)
    assert pts._classes_for(derived) is pts._classes_for(view)
    assert len(pts._classes_for(view)) == len(view.nodes)
    before = len(pts._CLASS_MAPS)
    del view, derived
    gc.collect()
    assert len(pts._CLASS_MAPS) < before


def test_carried_pre_score_memos_follow_the_pod() -> None:
    """carry_pre_score keeps the last pod's selector matches and each node's inclusion:
    pods with other labels, or another node selector, are matched and asked again."""
    checked = 0
    for seed in range(80):
        view, plugin, pod = _setup(seed)
        state = CycleState(pod, view, DEFAULT_SETTINGS)
        if plugin.pre_score(state, view.nodes).is_skip:
            continue
        s = state.data["PodTopologySpread/score"]
        rng = random.Random(seed)
        bound = [(pi, ni) for ni in view.nodes for pi in ni.pods if pi.pod is not None]
        for pi, ni in rng.sample(bound, min(6, len(bound))):
            before = [dict(d) for d in s.counts], [dict(d) for d in s.matching]
            plugin.carry_pre_score(state, state, pi, ni)
            counts, matching = before
            same_ns = pi.pod.namespace == pod.namespace and pi.pod.deletion_timestamp is None
            for i, c in enumerate(s.constraints):
                sel = c.selector
                hit = (
                    same_ns
                    and sel is not None
                    and bool(sel.match_labels or sel.match_expressions)
                    and selector_matches(sel, pi.pod.labels)
                )
                if hit:
                    matching[i][ni.name] = matching[i].get(ni.name, 0) + 1
                    value = ni.node.labels.get(c.topology_key, "")
                    require_all = bool(pod.topology_spread_constraints) or not (
                        plugin.system_defaulted
                    )
                    counted = not require_all or _has_all_keys(ni.node.labels, s.constraints)
                    if counted and c.includes(pod, ni.node) and value in counts[i]:
                        counts[i][value] += 1
                        checked += 1
            assert (s.counts, s.matching) == (counts, matching), seed
            nodes = view.nodes
            assert list(plugin.score_nodes(state, nodes)) == [
                plugin.score(state, n, n) for n in nodes
            ]
    assert checked > 10


# --- the default selector ---


@pytest.mark.parametrize("seed", range(30))
def test_selecting_services_as_every_service(seed: int) -> None:
    rng = random.Random(seed)
    from service.engine.objects import Service

    keys, values = ("app", "tier", "x"), ("a", "b", "")
    services = []
    for i in range(rng.randint(0, 12)):
        roll = rng.random()
        if roll < 0.15:
            selector = None
        elif roll < 0.25:
            selector = {}
        else:
            chosen = rng.sample(keys, rng.randint(1, 3))
            selector = {k: rng.choice(values) for k in chosen}
        services.append(Service("ns", f"s{i}", selector))
    for _ in range(20):
        labels = {k: rng.choice(values) for k in rng.sample(keys, rng.randint(0, 3))}
        plain = [
            s.selector
            for s in services
            if s.selector and all(labels.get(k) == v for k, v in s.selector.items())
        ]
        assert _selecting_services(services, labels) == plain
