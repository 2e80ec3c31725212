"""PodTopologySpread's PreScore, Score and NormalizeScore, transcribed from kube-scheduler's
podtopologyspread/scoring_test.go (TestPodTopologySpreadScore): one row per upstream case,
named as upstream names it. ``nodes`` are the candidates (they passed the filters),
``failed`` the other nodes of the snapshot; PodTopologySpread is the only score plugin."""

from __future__ import annotations

import pytest

from service.engine.objects import Cluster
from service.engine.scheduler.plugins.pod_topology_spread import SCHEDULE_ANYWAY, _constraints
from service.engine.scheduler.profile import DEFAULT_PROFILE
from service.engine.scheduler.runtime import Framework
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object
from tests.conftest import snapshot_from_objects
from tests.engine.scheduler.plugins.helpers import only
from tests.engine.scheduler.random_clusters import random_workload_case

HOSTNAME = "kubernetes.io/hostname"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}


def _incoming(*constraints):
    spec: dict = {"containers": [{"name": "c"}]}
    if constraints:
        spec["topologySpreadConstraints"] = [
            {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway", **sel}
            for skew, key, sel in constraints
        ]
    return {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"foo": ""}},
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def _c(skew, key, selector=FOO):
    return (skew, key, {"labelSelector": selector} if selector is not None else {})


def _pods(**per_node):
    """``node_a=2`` -> two pods labelled foo on node-a."""
    out = []
    for node, count in per_node.items():
        name = node.replace("_", "-")
        out += [
            {
                "kind": "Pod",
                "metadata": {"name": f"p-{name}{i}", "namespace": "default", "labels": {"foo": ""}},
                "spec": {"nodeName": name, "containers": [{"name": "c"}]},
                "status": {"phase": "Running"},
            }
            for i in range(1, count + 1)
        ]
    return out


def _node(name, zone=None, hostname=True):
    labels = {HOSTNAME: name} if hostname else {"n": name}
    if zone:
        labels["zone"] = zone
    return {"kind": "Node", "metadata": {"name": name, "labels": labels}}


def _scores(incoming, existing, nodes, failed=(), objects=()):
    cluster = Cluster(snapshot_from_objects([*nodes, *failed, *existing, *objects]))
    view = scheduler_view(cluster, settings=DEFAULT_SETTINGS)
    candidates = [view.by_name[n["metadata"]["name"]] for n in nodes]
    fwk = Framework(only("PodTopologySpread"), settings=DEFAULT_SETTINGS)
    state = fwk.cycle_state(pod_from_object(incoming), view)
    fwk.run_pre_score_plugins(state, candidates)
    out = fwk.run_score_plugins(state, candidates, candidates)
    return out.normalized.get("PodTopologySpread")


ABCD = [_node(n) for n in ("node-a", "node-b", "node-c", "node-d")]
SPREAD_2103 = _pods(node_a=2, node_b=1, node_d=3)
SPREAD_4321 = _pods(node_a=4, node_b=3, node_c=2, node_d=1)
SPREAD_4213 = _pods(node_a=4, node_b=2, node_x=1, node_y=3)

ROWS = [
    pytest.param(
        _incoming(_c(1, HOSTNAME)),
        [],
        [_node("node-a"), _node("node-b")],
        [],
        [],
        [100, 100],
        id="one constraint on node, no existing pods",
    ),
    pytest.param(
        _incoming(_c(1, HOSTNAME)),
        _pods(node_a=2, node_b=1),
        [_node("node-a")],
        [_node("node-b")],
        [],
        [100],
        id="one constraint on node, only one node is candidate",
    ),
    pytest.param(
        _incoming(_c(1, HOSTNAME)),
        _pods(node_a=1, node_b=1),
        [_node("node-a"), _node("node-b")],
        [],
        [],
        [100, 100],
        id="one constraint on node, all nodes have the same number of matching pods",
    ),
    pytest.param(
        _incoming(_c(1, HOSTNAME)),
        SPREAD_2103,
        ABCD,
        [],
        [],
        [20, 60, 100, 0],
        id="one constraint on node, all 4 nodes are candidates",
    ),
    pytest.param(
        _incoming(_c(1, HOSTNAME, None)),
        SPREAD_2103,
        ABCD,
        [],
        [],
        [100, 100, 100, 100],
        id="one constraint on node, null selector",
    ),
    pytest.param(
        _incoming(_c(2, HOSTNAME)),
        SPREAD_2103,
        ABCD,
        [],
        [],
        [33, 66, 100, 16],
        id="one constraint on node, all 4 nodes are candidates, maxSkew=2",
    ),
    pytest.param(
        _incoming(_c(3, HOSTNAME)),
        SPREAD_4321,
        ABCD,
        [],
        [],
        [44, 66, 77, 100],
        id="one constraint on node, all 4 nodes are candidates, maxSkew=3",
    ),
    pytest.param(
        _incoming(),
        SPREAD_4321,
        ABCD,
        [],
        [
            {
                "kind": "Service",
                "metadata": {"name": "s", "namespace": "default"},
                "spec": {"selector": {"foo": ""}},
            }
        ],
        [44, 66, 77, 100],
        id="system defaulting, nodes don't have zone, pods match service",
    ),
    pytest.param(
        _incoming(_c(1, HOSTNAME)),
        SPREAD_4213,
        [_node("node-a"), _node("node-b"), _node("node-x")],
        [_node("node-y")],
        [],
        [33, 83, 100],
        id="one constraint on node, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        _incoming(_c(1, HOSTNAME)),
        SPREAD_4213,
        [_node("node-a"), _node("node-b", hostname=False), _node("node-x")],
        [_node("node-y")],
        [],
        [16, 0, 100],
        id="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
    ),
    pytest.param(
        _incoming(_c(1, "zone")),
        SPREAD_4213,
        [_node("node-a", "zone1"), _node("node-b", "zone1"), _node("node-x", "zone2")],
        [_node("node-y", "zone2")],
        [],
        [75, 75, 100],
        id="one constraint on zone, 3 out of 4 nodes are candidates",
    ),
]


@pytest.mark.parametrize(("incoming", "existing", "nodes", "failed", "objects", "want"), ROWS)
def test_pod_topology_spread_score(incoming, existing, nodes, failed, objects, want) -> None:
    assert _scores(incoming, existing, nodes, failed, objects) == want


_INCLUSION_NODES = [
    {"kind": "Node", "metadata": {"name": "plain", "labels": {"zone": "a"}}},
    {"kind": "Node", "metadata": {"name": "ssd", "labels": {"zone": "a", "disk": "ssd"}}},
    {
        "kind": "Node",
        "metadata": {"name": "tainted", "labels": {"zone": "b"}},
        "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
    },
]


@pytest.mark.parametrize("node_selector", [None, {"disk": "ssd"}])
@pytest.mark.parametrize("affinity_policy", [None, "Honor", "Ignore"])
@pytest.mark.parametrize("taints_policy", [None, "Honor", "Ignore"])
def test_includes_every_node_only_when_includes_holds_on_every_node(
    node_selector, affinity_policy, taints_policy
) -> None:
    """PreScore's fast path (``includes_every_node``) skips matchNodeInclusionPolicies only
    where it would pass every node."""
    constraint = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
    if affinity_policy:
        constraint["nodeAffinityPolicy"] = affinity_policy
    if taints_policy:
        constraint["nodeTaintsPolicy"] = taints_policy
    spec = {"containers": [{"name": "c"}], "topologySpreadConstraints": [constraint]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    pod = pod_from_object({"metadata": {"name": "p", "namespace": "default"}, "spec": spec})
    nodes = Cluster(snapshot_from_objects(_INCLUSION_NODES)).nodes
    (c,) = _constraints(pod, SCHEDULE_ANYWAY)
    every = all(c.includes(pod, node) for node in nodes)
    assert c.includes_every_node(pod) == every


def _counts_over_every_node(plugin, s, view, pod) -> list[dict[str, int]]:
    """PreScore's domain counts the literal way: every node of the view visited, its
    matching pods added to its domain (the state's domains, from zero)."""
    require_all = bool(pod.topology_spread_constraints) or not plugin.system_defaulted
    counts = [dict.fromkeys(domains, 0) for domains in s.counts]
    for ni in view.nodes:
        labels = ni.node.labels
        if require_all and not all(c.topology_key in labels for c in s.constraints):
            continue
        for i, c in enumerate(s.constraints):
            if not c.includes(pod, ni.node):
                continue
            value = labels.get(c.topology_key, "")
            if value in counts[i]:
                counts[i][value] += s.matching[i].get(ni.name, 0)
    return counts


def test_pre_score_counts_only_nodes_with_matching_pods() -> None:
    """PreScore visits only the nodes holding matching pods: the counts are those of a
    visit of every node (random workloads: spread constraints of every kind, both
    inclusion policies, system defaults)."""
    fwk = Framework(DEFAULT_PROFILE, DEFAULT_SETTINGS)
    plugin = next(p for p in fwk.pre_score_plugins if p.name == "PodTopologySpread")
    counted = 0
    for seed in range(80):
        case = random_workload_case(seed)
        if seed % 2:  # a nodeSelector: nodes outside zone z1 are not included (Honor)
            case["pod"]["spec"]["nodeSelector"] = {"topology.kubernetes.io/zone": "z1"}
        cluster = Cluster(snapshot_from_objects(case["objects"]))
        pod = pod_from_object(case["pod"])
        view = scheduler_view(cluster, DEFAULT_SETTINGS, whole_pods=True)
        state = fwk.cycle_state(pod, view)
        if plugin.pre_score(state, view.nodes).is_skip:
            continue
        s = state.data["PodTopologySpread/score"]
        assert s.counts == _counts_over_every_node(plugin, s, view, pod), seed
        counted += any(any(domains.values()) for domains in s.counts)
    assert counted > 20  # cases where some domain counts matching pods


def test_normalize_without_ignored_nodes_among_those_given() -> None:
    """NormalizeScore over nodes none of which is ignored (capacity's group path passes a
    few such nodes while unlabelled nodes are ignored elsewhere): the scores are those the
    same nodes get beside the ignored ones, which count for neither the lowest nor the
    highest score."""
    cluster = Cluster(
        snapshot_from_objects(
            [
                *[_node(f"node-{z}{i}", zone=f"z{z}") for z in "ab" for i in (1, 2)],
                _node("bare", hostname=False),
                *_pods(node_a1=3, node_a2=1, node_b1=2),
            ]
        )
    )
    view = scheduler_view(cluster, settings=DEFAULT_SETTINGS)
    fwk = Framework(only("PodTopologySpread"), settings=DEFAULT_SETTINGS)
    plugin, _ = fwk.score_plugins[0]
    pod = pod_from_object(_incoming(_c(1, "zone"), _c(1, HOSTNAME)))
    state = fwk.cycle_state(pod, view)
    fwk.run_pre_score_plugins(state, view.nodes)
    assert state.data["PodTopologySpread/score"].ignored == {"bare"}
    out = fwk.run_score_plugins(state, view.nodes, view.nodes)
    raw, every = out.raw["PodTopologySpread"], out.normalized["PodTopologySpread"]
    labelled = [ni for ni in view.nodes if ni.name != "bare"]
    given = [r for r, ni in zip(raw, view.nodes, strict=True) if ni.name != "bare"]
    plugin.normalize_score(state, labelled, given)
    assert given == [s for s, ni in zip(every, view.nodes, strict=True) if ni.name != "bare"]
    assert len(set(given)) > 1


def test_normalize_ignored_nodes_score_zero_whatever_the_others() -> None:
    """An ignored node scores 0 and bounds neither the lowest nor the highest score: also
    when the others all score 0 (each then gets the maximum) and when it alone scores."""
    cluster = Cluster(
        snapshot_from_objects([_node("node-a", zone="za"), _node("bare", hostname=False)])
    )
    view = scheduler_view(cluster, settings=DEFAULT_SETTINGS)
    fwk = Framework(only("PodTopologySpread"), settings=DEFAULT_SETTINGS)
    plugin, _ = fwk.score_plugins[0]
    state = fwk.cycle_state(pod_from_object(_incoming(_c(1, "zone"))), view)
    fwk.run_pre_score_plugins(state, view.nodes)
    assert [ni.name for ni in view.nodes] == ["node-a", "bare"]
    for given, want in (([0, 0], [100, 0]), ([0, 7], [100, 0]), ([4, 0], [100, 0])):
        scores = list(given)
        plugin.normalize_score(state, view.nodes, scores)
        assert scores == want, given
    scores = [9]
    plugin.normalize_score(state, view.nodes[1:], scores)
    assert scores == [0]
