"""PodTopologySpread's Filter, transcribed from kube-scheduler's
podtopologyspread/filtering_test.go (TestSingleConstraint). As upstream's test, only the
plugin's own PreFilter and Filter run (a profile of PodTopologySpread alone)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from service.engine.objects import Cluster
from service.engine.scheduler.framework import SUCCESS, UNRESOLVABLE, UNSCHEDULABLE
from service.engine.scheduler.profile import DEFAULT_PROFILE
from service.engine.scheduler.runtime import Framework
from service.engine.scheduler.snapshot import scheduler_view
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


def _incoming(max_skew, key, selector=EXISTS_FOO, labels=None, affinity=None):
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
]


@pytest.mark.parametrize(("incoming", "nodes", "existing", "want"), ROWS)
def test_single_constraint(incoming, nodes, existing, want) -> None:
    view = scheduler_view(Cluster(snapshot_from_objects([*nodes, *existing])))
    fwk = Framework(ONLY_SPREAD)
    state = fwk.cycle_state(pod_from_object(incoming), view)
    assert [fwk.run_filter_plugins(state, ni).code for ni in view.nodes] == want
