"""PodTopologySpread's Filter, transcribed from kube-scheduler's
podtopologyspread/filtering_test.go (TestSingleConstraint with its minDomains rows,
TestMultipleConstraints, TestPreFilterStateAddPod, TestPreFilterStateRemovePod). As
upstream's test, only the plugin's own PreFilter and Filter run (a profile of
PodTopologySpread alone)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from service.engine.objects import Cluster
from service.engine.scheduler.framework import SUCCESS, UNRESOLVABLE, UNSCHEDULABLE, pod_info
from service.engine.scheduler.profile import DEFAULT_PROFILE
from service.engine.scheduler.runtime import Framework
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object, snapshot_from_objects

ONLY_SPREAD = replace(
    DEFAULT_PROFILE, pre_filter=("PodTopologySpread",), filter=("PodTopologySpread",)
)
EXISTS_FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}


def _node(name, **labels):
    return {"kind": "Node", "metadata": {"name": name, "labels": labels}}


def _existing(name, node, namespace="default", labels=None, terminating=False):
    meta = {
        "name": name,
        "namespace": namespace,
        "labels": {"foo": ""} if labels is None else labels,
    }
    if terminating:
        meta["deletionTimestamp"] = "2026-11-20T10:00:00Z"
    return {
        "kind": "Pod",
        "metadata": meta,
        "spec": {"nodeName": node, "containers": [{"name": "c"}]},
        "status": {"phase": "Running"},
    }


def _incoming(max_skew, key, selector=EXISTS_FOO, labels=None, affinity=None, min_domains=None):
    spec = {
        "containers": [{"name": "c"}],
        "topologySpreadConstraints": [
            {
                "maxSkew": max_skew,
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": selector,
            }
        ],
    }
    if affinity:
        spec["affinity"] = affinity
    if min_domains is not None:
        spec["topologySpreadConstraints"][0]["minDomains"] = min_domains
    meta = {
        "name": "p",
        "namespace": "default",
        "labels": {"foo": ""} if labels is None else labels,
    }
    return {"kind": "Pod", "metadata": meta, "spec": spec}


FOUR_NODES = [
    _node("node-a", zone="zone1", node="node-a"),
    _node("node-b", zone="zone1", node="node-b"),
    _node("node-x", zone="zone2", node="node-x"),
    _node("node-y", zone="zone2", node="node-y"),
]
SPREAD_2_1_0_3 = [
    _existing("p-a1", "node-a"),
    _existing("p-a2", "node-a"),
    _existing("p-b1", "node-b"),
    _existing("p-y1", "node-y"),
    _existing("p-y2", "node-y"),
    _existing("p-y3", "node-y"),
]
THREE_NODES = [_node(f"node-{n}", node=f"node-{n}") for n in "abc"]
SPREAD_2_2_1 = [
    _existing("p-a1", "node-a"),
    _existing("p-a2", "node-a"),
    _existing("p-b1", "node-b"),
    _existing("p-b2", "node-b"),
    _existing("p-c1", "node-c"),
]
SPREAD_ZONES_2_1 = [
    _existing("p-b1", "node-a"),
    _existing("p-b2", "node-b"),
    _existing("p-y1", "node-y"),
]
S, U, UR = SUCCESS, UNSCHEDULABLE, UNRESOLVABLE

ROWS = [
    pytest.param(_incoming(1, "zone"), FOUR_NODES, [], [S, S, S, S], id="no existing pods"),
    pytest.param(
        _incoming(1, "zone", {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}),
        FOUR_NODES,
        [],
        [S, S, S, S],
        id="no existing pods, incoming pod doesn't match itself",
    ),
    pytest.param(
        _incoming(1, "zone"),
        FOUR_NODES,
        [
            _existing("p-a1", "node-a", "ns1"),
            _existing("p-b1", "node-a", "ns2"),
            _existing("p-x1", "node-x"),
            _existing("p-y1", "node-y"),
        ],
        [S, S, U, U],
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        _incoming(1, "zone"),
        FOUR_NODES,
        [
            _existing("p-a1", "node-a"),
            _existing("p-a2", "node-a"),
            _existing("p-b1", "node-b"),
            _existing("p-y1", "node-y"),
            _existing("p-y2", "node-y"),
            _existing("p-y3", "node-y"),
        ],
        [S, S, S, S],
        id="pods spread across zones as 3/3, all nodes fit",
    ),
    pytest.param(
        _incoming(1, "zone"),
        [
            _node("node-a", zone="zone1", node="node-a"),
            _node("node-b", zon="zone1", node="node-b"),
            _node("node-x", zone="zone2", node="node-x"),
            _node("node-y", zone="zone2", node="node-y"),
        ],
        [
            _existing("p-a1", "node-a"),
            _existing("p-b1", "node-b"),
            _existing("p-x1", "node-x"),
            _existing("p-y1", "node-y"),
        ],
        [S, UR, U, U],
        id="pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
    ),
    pytest.param(
        _incoming(1, "rack"),
        [
            _node("node-a", zone="zone1", node="node-a"),
            _node("node-x", zone="zone2", node="node-x"),
        ],
        [],
        [UR, UR],
        id="pod cannot be scheduled as all nodes don't have label 'rack'",
    ),
    pytest.param(
        _incoming(1, "node"),
        FOUR_NODES,
        SPREAD_2_1_0_3,
        [U, U, S, U],
        id="pods spread across nodes as 2/1/0/3, only node-x fits",
    ),
    pytest.param(
        _incoming(2, "node"),
        FOUR_NODES,
        SPREAD_2_1_0_3,
        [U, S, S, U],
        id="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
    ),
    pytest.param(
        _incoming(1, "node", labels={"bar": ""}),
        FOUR_NODES,
        SPREAD_2_1_0_3,
        [U, S, S, U],
        id="pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
    ),
    pytest.param(
        _incoming(
            1,
            "node",
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "node",
                                        "operator": "In",
                                        "values": ["node-a", "node-y"],
                                    }
                                ]
                            }
                        ]
                    }
                }
            },
        ),
        FOUR_NODES,
        SPREAD_2_1_0_3,
        [S, S, S, U],
        id="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
    ),
    pytest.param(
        _incoming(1, "node"),
        [_node("node-a", node="node-a"), _node("node-b", node="node-b")],
        [_existing("p-a", "node-a", terminating=True), _existing("p-b", "node-b")],
        [S, U],
        id="terminating Pods should be excluded",
    ),
    pytest.param(
        _incoming(2, "node", min_domains=4),
        THREE_NODES,
        SPREAD_2_2_1,
        [U, U, S],
        id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
    ),
    pytest.param(
        _incoming(2, "node", min_domains=2),
        THREE_NODES,
        SPREAD_2_2_1,
        [S, S, S],
        id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
    ),
    pytest.param(
        _incoming(2, "zone", min_domains=3),
        FOUR_NODES,
        SPREAD_ZONES_2_1,
        [U, U, S, S],
        id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
    ),
    pytest.param(
        _incoming(2, "zone", min_domains=1),
        FOUR_NODES,
        SPREAD_ZONES_2_1,
        [S, S, S, S],
        id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "existing", "want"), ROWS)
def test_single_constraint(incoming, nodes, existing, want) -> None:
    view = scheduler_view(
        Cluster(snapshot_from_objects([*nodes, *existing])), settings=DEFAULT_SETTINGS
    )
    fwk = Framework(ONLY_SPREAD, settings=DEFAULT_SETTINGS)
    state = fwk.cycle_state(pod_from_object(incoming), view)
    assert [fwk.run_filter_plugins(state, ni).code for ni in view.nodes] == want


# --- TestMultipleConstraints: a "zone" and a "node" constraint, both DoNotSchedule ---

EXISTS_BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}


def _two(zone_selector=EXISTS_FOO, node_selector=EXISTS_FOO, labels=None):
    pod = _incoming(1, "zone", zone_selector, labels)
    pod["spec"]["topologySpreadConstraints"].append(
        {
            "maxSkew": 1,
            "topologyKey": "node",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": node_selector,
        }
    )
    return pod


FOO_BAR = {"foo": "", "bar": ""}
MULTIPLE = [
    pytest.param(
        _two(),
        FOUR_NODES,
        SPREAD_2_1_0_3,
        [U, U, S, U],
        id="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
    ),
    pytest.param(
        _two(),
        FOUR_NODES,
        [*SPREAD_2_1_0_3, _existing("p-y4", "node-y")],
        [U, U, U, U],
        id="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
    ),
    pytest.param(
        _two(EXISTS_FOO, EXISTS_BAR, FOO_BAR),
        FOUR_NODES,
        [_existing("p-a1", "node-a"), _existing("p-y1", "node-y", labels={"bar": ""})],
        [U, U, S, U],
        id="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
    ),
    pytest.param(
        _two(EXISTS_FOO, EXISTS_BAR, FOO_BAR),
        FOUR_NODES,
        [
            _existing("p-a1", "node-a"),
            _existing("p-x1", "node-x", labels={"bar": ""}),
            _existing("p-y1", "node-y", labels={"bar": ""}),
        ],
        [U, U, U, U],
        id="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
    ),
    pytest.param(
        _two(EXISTS_FOO, EXISTS_BAR, FOO_BAR),
        FOUR_NODES,
        [
            _existing("p-a1", "node-a"),
            _existing("p-a2", "node-a", labels=FOO_BAR),
            _existing("p-y1", "node-y"),
            _existing("p-y2", "node-y", labels=FOO_BAR),
            _existing("p-y3", "node-y"),
        ],
        [U, S, U, U],
        id="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
    ),
    pytest.param(
        _two(EXISTS_FOO, EXISTS_BAR, {"bar": ""}),
        FOUR_NODES,
        [
            _existing("p-a1", "node-a"),
            _existing("p-x1", "node-x", labels={"bar": ""}),
            _existing("p-y1", "node-y", labels={"bar": ""}),
        ],
        [S, S, U, U],
        id="Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
    ),
    pytest.param(
        _two(),
        [
            _node("node-a", zone="zone1", node="node-a"),
            _node("node-b", zone="zone1", node="node-b"),
            _node("node-x", zone="zone2"),
            _node("node-y", zone="zone2", node="node-y"),
        ],
        [_existing("p-a1", "node-a"), _existing("p-y3", "node-y")],
        [U, S, UR, U],
        id="two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "existing", "want"), MULTIPLE)
def test_multiple_constraints(incoming, nodes, existing, want) -> None:
    view = scheduler_view(
        Cluster(snapshot_from_objects([*nodes, *existing])), settings=DEFAULT_SETTINGS
    )
    fwk = Framework(ONLY_SPREAD, settings=DEFAULT_SETTINGS)
    state = fwk.cycle_state(pod_from_object(incoming), view)
    assert [fwk.run_filter_plugins(state, ni).code for ni in view.nodes] == want


# --- TestPreFilterStateAddPod / TestPreFilterStateRemovePod, as filter outcomes ---
# Upstream compares the PreFilter state after AddPod / RemovePod (the pods matched per domain
# and the critical paths); here the same state is read through Filter on every node: with
# the preemptor matching itself, a node fits while its domain's count + 1 - the global
# minimum is at most maxSkew. The rows with NodeInclusionPolicy disabled are left out: the
# gate is locked on in v1.35, which Verdict models.

NOT_IN_BAR = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "foo", "operator": "NotIn", "values": ["bar"]}]}
            ]
        }
    }
}
A_B = [_node("node-a", zone="zone1", node="node-a"), _node("node-b", zone="zone1", node="node-b")]
A_X = [_node("node-a", zone="zone1", node="node-a"), _node("node-x", zone="zone2", node="node-x")]
A_B_X = [*A_B, _node("node-x", zone="zone2", node="node-x")]
A_BAR_B = [
    _node("node-a", zone="zone1", node="node-a", foo="bar"),
    _node("node-b", zone="zone2", node="node-b", foo=""),
]
TAINTED_A_B = [
    {
        **_node("node-a", zone="zone1", node="node-a"),
        "spec": {"taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]},
    },
    _node("node-b", zone="zone2", node="node-b"),
]


def _zoned(name, node, zone, labels=None):
    return _existing(name, node, labels={"foo": "", "zone": zone} if labels is None else labels)


def _tolerating(pod):
    pod["spec"]["tolerations"] = [
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
    ]
    return pod


ADD_POD = [
    pytest.param(
        _incoming(1, "node"),
        A_B,
        [],
        _existing("p-a1", "node-a"),
        [U, S],
        id="node a and b both impact current min match",
    ),
    pytest.param(
        _incoming(1, "node"),
        A_B,
        [_existing("p-b1", "node-b")],
        _existing("p-a1", "node-a"),
        [S, S],
        id="only node a impacts current min match",
    ),
    pytest.param(
        _incoming(1, "node"),
        A_B,
        [_existing("p-b1", "node-b")],
        _existing("p-a1", "node-a", "ns1"),
        [S, U],
        id="add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
    ),
    pytest.param(
        _incoming(1, "node"),
        A_B,
        [_existing("p-b1", "node-b")],
        _existing("p-b2", "node-b"),
        [S, U],
        id="add pod on non-critical node won't trigger re-calculation",
    ),
    pytest.param(
        _two(),
        A_X,
        [],
        _existing("p-a1", "node-a"),
        [U, S],
        id="node a and x both impact topologyKeyToMinPodsMap on zone and node",
    ),
    pytest.param(
        _two(),
        A_X,
        [_existing("p-x1", "node-x")],
        _existing("p-a1", "node-a"),
        [S, S],
        id="only node a impacts topologyKeyToMinPodsMap on zone and node",
    ),
    pytest.param(
        _two(),
        A_B_X,
        [
            _existing("p-b1", "node-b"),
            _existing("p-b2", "node-b"),
            _existing("p-x1", "node-x"),
        ],
        _existing("p-a1", "node-a"),
        [U, U, S],
        id="node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
    ),
    pytest.param(
        _two(EXISTS_FOO, EXISTS_BAR, FOO_BAR),
        A_B_X,
        [
            _existing("p-b1", "node-b", labels=FOO_BAR),
            _existing("p-x1", "node-x", labels=FOO_BAR),
            _existing("p-x2", "node-x", labels={"bar": ""}),
        ],
        _existing("p-a1", "node-a"),
        [U, U, U],
        id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
    ),
    pytest.param(
        _two(EXISTS_FOO, EXISTS_BAR, FOO_BAR),
        A_B_X,
        [
            _existing("p-b1", "node-b", labels={"bar": ""}),
            _existing("p-x1", "node-x", labels=FOO_BAR),
            _existing("p-x2", "node-x", labels={"bar": ""}),
        ],
        _existing("p-a1", "node-a", labels=FOO_BAR),
        [S, S, U],
        id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
    ),
    pytest.param(
        # upstream's Filter alone: NodeAffinity would reject node-a
        _incoming(1, "zone", affinity=NOT_IN_BAR),
        A_BAR_B,
        [_zoned("p-a2", "node-a", "zone1"), _zoned("p-b1", "node-b", "zone2")],
        _zoned("p-a1", "node-a", "zone1"),
        [S, S],
        id="add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        _incoming(1, "zone"),
        A_BAR_B,
        [_zoned("p-a1", "node-a", "zone1"), _zoned("p-b2", "node-b", "zone2")],
        _zoned("p-b1", "node-b", "zone2"),
        [S, U],
        id="add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        _incoming(1, "zone"),
        A_BAR_B,
        [_zoned("p-a1", "node-a", "zone1"), _zoned("p-b2", "node-b", "zone2")],
        _zoned("p-b1", "node-b", "zone2", labels={"zone": "zone2"}),
        [S, S],
        id="add a label selector not matched pod when with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        _tolerating(_incoming(1, "zone")),
        TAINTED_A_B,
        [_zoned("p-a1", "node-a", "zone1"), _zoned("p-b2", "node-b", "zone2")],
        _zoned("p-b1", "node-b", "zone2"),
        [S, U],
        id="add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
    ),
]

REMOVE_POD = [
    pytest.param(
        _incoming(1, "zone"),
        A_B_X,
        [
            _existing("p-a1", "node-a"),
            _existing("p-b1", "node-b"),
            _existing("p-x1", "node-x"),
        ],
        0,
        [S, S, S],
        id="one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
    ),
    pytest.param(
        _incoming(1, "zone"),
        FOUR_NODES,
        [
            _existing("p-a1", "node-a"),
            _existing("p-b1", "node-b"),
            _existing("p-x1", "node-x"),
            _existing("p-y1", "node-y"),
        ],
        0,
        [S, S, U, U],
        id="one spreadConstraint on node, topologyKeyToMinPodsMap changed",
    ),
    pytest.param(
        _incoming(1, "zone"),
        FOUR_NODES,
        [
            _existing("p-a0", "node-a", labels={"bar": ""}),
            _existing("p-a1", "node-a"),
            _existing("p-b1", "node-b"),
            _existing("p-x1", "node-x"),
            _existing("p-y1", "node-y"),
        ],
        0,
        [S, S, S, S],
        id="delete an irrelevant pod won't help",
    ),
    pytest.param(
        _incoming(1, "zone"),
        FOUR_NODES,
        [
            _existing("p-a1", "node-a"),
            _existing("p-b1", "node-b"),
            _existing("p-x1", "node-x"),
            _existing("p-y1", "node-y"),
        ],
        _existing("p-a0", "node-a", labels={"bar": ""}),
        [S, S, S, S],
        id="delete a non-existing pod won't help",
    ),
    pytest.param(
        _two(),
        A_B_X,
        [
            _existing("p-a1", "node-a"),
            _existing("p-a2", "node-a"),
            _existing("p-b1", "node-b"),
            _existing("p-x1", "node-x"),
            _existing("p-x2", "node-x"),
        ],
        3,
        [U, U, S],
        id="two spreadConstraints",
    ),
    pytest.param(
        # upstream's Filter alone: NodeAffinity would reject node-a
        _incoming(1, "zone", affinity=NOT_IN_BAR),
        A_BAR_B,
        [_zoned("p-a2", "node-a", "zone1"), _zoned("p-b1", "node-b", "zone2")],
        _zoned("p-a1", "node-a", "zone1"),
        [S, S],
        id="remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        _incoming(1, "zone"),
        A_BAR_B,
        [_zoned("p-a1", "node-a", "zone1"), _zoned("p-b2", "node-b", "zone2")],
        _zoned("p-b1", "node-b", "zone2"),
        [U, S],
        id="remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
    ),
]


def _after(incoming, nodes, existing, change, pod, want) -> None:
    """PreFilter, then AddPod / RemovePod of ``pod`` on its node, then Filter on each node."""
    view = scheduler_view(
        Cluster(snapshot_from_objects([*nodes, *existing])), settings=DEFAULT_SETTINGS
    )
    fwk = Framework(ONLY_SPREAD, settings=DEFAULT_SETTINGS)
    state = fwk.cycle_state(pod_from_object(incoming), view)
    changed = pod_from_object(pod)
    (ni,) = [ni for ni in view.nodes if ni.node.name == changed.node_name]
    change(fwk, state, pod_info(changed, settings=DEFAULT_SETTINGS), ni)
    assert [fwk.run_filter_plugins(state, n).code for n in view.nodes] == want


@pytest.mark.parametrize(("incoming", "nodes", "existing", "added", "want"), ADD_POD)
def test_pre_filter_state_add_pod(incoming, nodes, existing, added, want) -> None:
    _after(incoming, nodes, existing, Framework.add_pod, added, want)


@pytest.mark.parametrize(("incoming", "nodes", "existing", "deleted", "want"), REMOVE_POD)
def test_pre_filter_state_remove_pod(incoming, nodes, existing, deleted, want) -> None:
    """``deleted`` is an index into ``existing`` (upstream's deletedPodIdx) or a pod."""
    pod = existing[deleted] if isinstance(deleted, int) else deleted
    _after(incoming, nodes, existing, Framework.remove_pod, pod, want)
