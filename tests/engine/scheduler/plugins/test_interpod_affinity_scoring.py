"""InterPodAffinity's PreScore, Score and NormalizeScore, transcribed from kube-scheduler's
interpodaffinity/scoring_test.go (TestPreferredAffinity,
TestPreferredAffinityWithHardPodAffinitySymmetricWeight): one row per upstream case, named
as upstream names it, run through the framework with InterPodAffinity the only score plugin.
The rows whose pods carry invalid label values are refused at ingest instead (see
tests/ingest/kube/test_pods.py); upstream's namespaces "subteamN.teamM" are named
"subteamN-teamM" here, since the API server only admits DNS labels as namespace names."""

from __future__ import annotations

import pytest

from service.engine.objects import Cluster
from service.engine.scheduler.profile import InterPodAffinityArgs
from service.engine.scheduler.runtime import Framework
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object, snapshot_from_objects
from tests.engine.scheduler.plugins.helpers import only

RG_CHINA = {"region": "China"}
RG_INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}
NAMESPACES = [
    {"kind": "Namespace", "metadata": {"name": name, "labels": {"team": team}}}
    for name, team in (
        ("subteam1-team1", "team1"),
        ("subteam2-team1", "team1"),
        ("subteam1-team2", "team2"),
        ("subteam2-team2", "team2"),
    )
]


def _in(key, *values):
    return {"key": key, "operator": "In", "values": list(values)}


def _term(key, *requirements, **extra):
    return {"labelSelector": {"matchExpressions": list(requirements)}, "topologyKey": key, **extra}


def _weighted(weight, term):
    return {"weight": weight, "podAffinityTerm": term}


STAY_WITH_S1_IN_REGION = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            _weighted(5, _term("region", _in("security", "S1")))
        ]
    }
}
STAY_WITH_S2_IN_REGION = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            _weighted(6, _term("region", _in("security", "S2")))
        ]
    }
}
AFFINITY3 = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            _weighted(
                8,
                _term(
                    "region",
                    {"key": "security", "operator": "NotIn", "values": ["S1"]},
                    _in("security", "S2"),
                ),
            ),
            _weighted(
                2,
                _term(
                    "region",
                    {"key": "security", "operator": "Exists"},
                    {"key": "wrongkey", "operator": "DoesNotExist"},
                ),
            ),
        ]
    }
}
HARD_AFFINITY = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            _term("region", _in("security", "S1", "value2")),
            _term(
                "region",
                {"key": "security", "operator": "Exists"},
                {"key": "wrongkey", "operator": "DoesNotExist"},
            ),
        ]
    }
}
AWAY_FROM_S1_IN_AZ = {
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            _weighted(5, _term("az", _in("security", "S1")))
        ]
    }
}
AWAY_FROM_S2_IN_AZ = {
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            _weighted(5, _term("az", _in("security", "S2")))
        ]
    }
}
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            _weighted(8, _term("region", _in("security", "S1")))
        ]
    },
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            _weighted(5, _term("az", _in("security", "S2")))
        ]
    },
}
_NS_TERM = _term(
    "region",
    _in("security", "S1"),
    namespaces=["subteam2-team2"],
    namespaceSelector={"matchExpressions": [_in("team", "team1")]},
)
AFFINITY_NAMESPACE_SELECTOR = {
    "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [_weighted(5, _NS_TERM)]}
}
ANTI_AFFINITY_NAMESPACE_SELECTOR = {
    "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [_weighted(5, _NS_TERM)]}
}

_count = iter(range(10**6))


def _pod(labels=None, affinity=None, node="", namespace="default"):
    spec: dict = {"containers": [{"name": "c"}]}
    if node:
        spec["nodeName"] = node
    if affinity:
        spec["affinity"] = affinity
    name = f"p{next(_count)}"
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}, "uid": name},
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def _nodes(*labels):
    return [
        {
            "kind": "Node",
            "metadata": {"name": f"node{i}", "labels": node_labels},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
        for i, node_labels in enumerate(labels, start=1)
    ]


def _run(incoming, existing, nodes, hard=1):
    """Normalized InterPodAffinity scores of every node, None when PreScore skips."""
    cluster = Cluster(snapshot_from_objects([*nodes, *NAMESPACES, *existing]))
    view = scheduler_view(cluster, settings=DEFAULT_SETTINGS)
    fwk = Framework(only("InterPodAffinity", InterPodAffinityArgs(hard)), settings=DEFAULT_SETTINGS)
    state = fwk.cycle_state(pod_from_object(incoming), view)
    fwk.run_pre_score_plugins(state, view.nodes)
    if "InterPodAffinity" in state.skip_score:
        return None
    return fwk.run_score_plugins(state, view.nodes, view.nodes).normalized["InterPodAffinity"]


PREFERRED = [
    pytest.param(
        _pod(S1),
        [],
        _nodes(RG_CHINA, RG_INDIA, AZ1),
        None,
        id="all nodes are same priority as Affinity is nil",
    ),
    pytest.param(
        _pod(S1, STAY_WITH_S1_IN_REGION),
        [_pod(S1, node="node1"), _pod(S2, node="node2"), _pod(S1, node="node3")],
        _nodes(RG_CHINA, RG_INDIA, AZ1),
        [100, 0, 0],
        id="Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
        "which doesn't match either pods in nodes or in topology key",
    ),
    pytest.param(
        _pod(None, STAY_WITH_S1_IN_REGION),
        [_pod(S1, node="node1")],
        _nodes(RG_CHINA, RG_CHINA_AZ1, RG_INDIA),
        [100, 100, 0],
        id="All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
    ),
    pytest.param(
        _pod(S1, STAY_WITH_S2_IN_REGION),
        [_pod(S2, node=n) for n in ("node1", "node1", "node2", "node3", "node4", "node5")],
        _nodes(RG_CHINA, RG_INDIA, RG_CHINA, RG_CHINA, RG_INDIA),
        [100, 0, 100, 100, 0],
        id="Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
    ),
    pytest.param(
        _pod(S1, AFFINITY3),
        [_pod(S1, node="node1"), _pod(S2, node="node2"), _pod(S1, node="node3")],
        _nodes(RG_CHINA, RG_INDIA, AZ1),
        [20, 100, 0],
        id="Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures ",
    ),
    pytest.param(
        _pod(S2),
        [
            _pod(S1, STAY_WITH_S1_IN_REGION, node="node1"),
            _pod(S2, STAY_WITH_S2_IN_REGION, node="node2"),
        ],
        _nodes(RG_CHINA, RG_INDIA, AZ1),
        [0, 100, 0],
        id="Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
    ),
    pytest.param(
        _pod(S1, namespace="subteam1-team1"),
        [
            _pod(S1, AFFINITY_NAMESPACE_SELECTOR, node="node1"),
            _pod(S2, STAY_WITH_S2_IN_REGION, node="node2"),
        ],
        _nodes(RG_CHINA, RG_INDIA, AZ1),
        [100, 0, 0],
        id="Affinity symmetry with namespace selector",
    ),
    pytest.param(
        _pod(S1, namespace="subteam1-team1"),
        [
            _pod(S1, ANTI_AFFINITY_NAMESPACE_SELECTOR, node="node1"),
            _pod(S2, STAY_WITH_S2_IN_REGION, node="node2"),
        ],
        _nodes(RG_CHINA, RG_INDIA, AZ1),
        [0, 100, 100],
        id="AntiAffinity symmetry with namespace selector",
    ),
    pytest.param(
        _pod(S1),
        [_pod(S1, HARD_AFFINITY, node="node1"), _pod(S2, HARD_AFFINITY, node="node2")],
        _nodes(RG_CHINA, RG_INDIA, AZ1),
        [100, 100, 0],
        id="Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
    ),
    pytest.param(
        _pod(S1, AWAY_FROM_S1_IN_AZ),
        [_pod(S1, node="node1"), _pod(S2, node="node2")],
        _nodes(AZ1, RG_CHINA),
        [0, 100],
        id="Anti Affinity: pod that does not match existing pods in node will get high score ",
    ),
    pytest.param(
        _pod(S1, AWAY_FROM_S1_IN_AZ),
        [_pod(S1, node="node1"), _pod(S1, node="node2")],
        _nodes(AZ1, RG_CHINA),
        [0, 100],
        id="Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others ",
    ),
    pytest.param(
        _pod(S1, AWAY_FROM_S1_IN_AZ),
        [_pod(S1, node="node1"), _pod(S1, node="node1"), _pod(S2, node="node2")],
        _nodes(AZ1, RG_INDIA),
        [0, 100],
        id="Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
    ),
    pytest.param(
        _pod(S2),
        [
            _pod(S1, AWAY_FROM_S2_IN_AZ, node="node1"),
            _pod(S2, AWAY_FROM_S1_IN_AZ, node="node2"),
        ],
        _nodes(AZ1, AZ2),
        [0, 100],
        id="Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
    ),
    pytest.param(
        _pod(S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [_pod(S1, node="node1"), _pod(S1, node="node2")],
        _nodes(RG_CHINA, AZ1),
        [100, 0],
        id="Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
    ),
    pytest.param(
        _pod(S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [_pod(S1, node=n) for n in ("node1", "node1", "node2", "node3", "node3", "node4", "node5")],
        _nodes(RG_CHINA_AZ1, RG_INDIA, RG_CHINA, RG_CHINA, RG_INDIA),
        [100, 0, 100, 100, 0],
        id="Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
    ),
    pytest.param(
        _pod(S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [
            _pod(S1, node="node1"),
            _pod(S2, node="node2"),
            _pod(None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, node="node3"),
            _pod(None, AWAY_FROM_S1_IN_AZ, node="node4"),
        ],
        _nodes(RG_CHINA, AZ1, RG_INDIA, AZ2),
        [100, 0, 100, 0],
        id="Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
    ),
    pytest.param(
        _pod(S1),
        [
            _pod(S1, node="node1"),
            _pod(None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, node="node2"),
        ],
        _nodes(RG_CHINA, RG_CHINA),
        [0, 0],
        id="Avoid panic when partial nodes in a topology don't have pods with affinity",
    ),
]


@pytest.mark.parametrize(("incoming", "existing", "nodes", "want"), PREFERRED)
def test_preferred_affinity(incoming, existing, nodes, want) -> None:
    assert _run(incoming, existing, nodes) == want


@pytest.mark.parametrize(
    ("hard", "want"),
    [
        pytest.param(
            1,
            [100, 100, 0],
            id="with default weight, all the nodes with the same topology key & label value get the same score",
        ),
        pytest.param(0, None, id="with zero weight, all the nodes are scored 0"),
    ],
)
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(hard, want) -> None:
    """Existing pods requiring affinity to service=S1 by region: their terms count at
    hardPodAffinityWeight for the incoming pod the terms select (PreScore skips with 0)."""
    required = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                _term("region", _in("service", "S1", "value2"))
            ]
        }
    }
    existing = [_pod(None, required, node="node1"), _pod(None, required, node="node2")]
    nodes = _nodes(RG_CHINA, RG_INDIA, AZ1)
    assert _run(_pod({"service": "S1"}), existing, nodes, hard=hard) == want
