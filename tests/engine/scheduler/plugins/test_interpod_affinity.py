"""InterPodAffinity's Filter, transcribed from kube-scheduler's
interpodaffinity/filtering_test.go (TestRequiredAffinitySingleNode, its first rows). Each row
runs PreFilter then Filter on machine1 (region r1, zone z11) through the framework."""

from __future__ import annotations

import pytest

from service.engine.objects import Cluster
from service.engine.scheduler.framework import UNRESOLVABLE, UNSCHEDULABLE
from service.engine.scheduler.profile import DEFAULT_PROFILE
from service.engine.scheduler.runtime import Framework
from service.engine.scheduler.snapshot import scheduler_view
from service.ingest.kube import pod_from_object, snapshot_from_objects

AFFINITY = "node(s) didn't match pod affinity rules"
ANTI = "node(s) didn't match pod anti-affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"
POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = {
    "kind": "Node",
    "metadata": {"name": "machine1", "labels": {"region": "r1", "zone": "z11"}},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}


def _req(key, op, *values):
    out = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def _term(key, *requirements, namespaces=None):
    term = {"labelSelector": {"matchExpressions": list(requirements)}}
    if key:
        term["topologyKey"] = key
    if namespaces:
        term["namespaces"] = namespaces
    return term


def _pod(labels, affinity=None, anti=None, node="", namespace="default", name="p"):
    spec: dict = {"containers": [{"name": "c"}]}
    if node:
        spec["nodeName"] = node
    aff = {}
    if affinity:
        aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": affinity}
    if anti:
        aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": anti}
    if aff:
        spec["affinity"] = aff
    meta = {"name": name, "namespace": namespace, "labels": labels}
    return {
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


IN_SCAN = _req("service", "In", "securityscan", "value2")
IN_AV = _req("service", "In", "antivirusscan", "value2")

ROWS = [
    pytest.param(
        _pod({}),
        [],
        None,
        id="A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
    ),
    pytest.param(
        _pod(POD_LABEL2, [_term("region", IN_SCAN)]),
        [_pod(POD_LABEL, node="machine1", name="e")],
        None,
        id="satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
    ),
    pytest.param(
        _pod(POD_LABEL2, [_term("region", _req("service", "NotIn", "securityscan3", "value3"))]),
        [_pod(POD_LABEL, node="machine1", name="e")],
        None,
        id="satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
    ),
    pytest.param(
        _pod(POD_LABEL2, [_term("region", IN_SCAN, namespaces=["DiffNameSpace"])]),
        [_pod(POD_LABEL, node="machine1", namespace="ns", name="e")],
        (UNRESOLVABLE, AFFINITY),
        id="Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
    ),
    pytest.param(
        _pod(POD_LABEL, [_term("region", IN_AV)]),
        [_pod(POD_LABEL, node="machine1", name="e")],
        (UNRESOLVABLE, AFFINITY),
        id="Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
    ),
    pytest.param(
        _pod(
            POD_LABEL2,
            [
                _term("region", _req("service", "Exists"), _req("wrongkey", "DoesNotExist")),
                _term(
                    "region",
                    _req("service", "In", "securityscan"),
                    _req("service", "NotIn", "WrongValue"),
                ),
            ],
        ),
        [_pod(POD_LABEL, node="machine1", name="e")],
        None,
        id="satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution",
    ),
    pytest.param(
        _pod(
            POD_LABEL2,
            [
                _term("region", _req("service", "Exists"), _req("wrongkey", "DoesNotExist")),
                _term(
                    "region",
                    _req("service", "In", "securityscan2"),
                    _req("service", "NotIn", "WrongValue"),
                ),
            ],
        ),
        [_pod(POD_LABEL, node="machine1", name="e")],
        (UNRESOLVABLE, AFFINITY),
        id="The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match",
    ),
    pytest.param(
        _pod(POD_LABEL2, [_term("region", IN_SCAN)], [_term("node", IN_AV)]),
        [_pod(POD_LABEL, node="machine1", name="e")],
        None,
        id="satisfies the PodAffinity and PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        _pod(POD_LABEL2, [_term("region", IN_SCAN)], [_term("node", IN_AV)]),
        [_pod(POD_LABEL, anti=[_term("node", IN_AV)], node="machine1", name="e")],
        None,
        id="satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        _pod(POD_LABEL2, [_term("region", IN_SCAN)], [_term("zone", IN_SCAN)]),
        [_pod(POD_LABEL, node="machine1", name="e")],
        (UNSCHEDULABLE, ANTI),
        id="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        _pod(POD_LABEL, [_term("region", IN_SCAN)], [_term("node", IN_AV)]),
        [_pod(POD_LABEL, anti=[_term("zone", IN_SCAN)], node="machine1", name="e")],
        (UNSCHEDULABLE, EXISTING),
        id="satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        _pod(POD_LABEL, [_term("region", _req("service", "NotIn", "securityscan", "value2"))]),
        [_pod(POD_LABEL, node="machine2", name="e")],
        (UNRESOLVABLE, AFFINITY),
        id="pod matches its own Label in PodAffinity and that matches the existing pod Labels",
    ),
    pytest.param(
        _pod(POD_LABEL),
        [_pod(POD_LABEL, anti=[_term("zone", IN_SCAN)], node="machine1", name="e")],
        (UNSCHEDULABLE, EXISTING),
        id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        _pod(POD_LABEL),
        [
            _pod(
                POD_LABEL,
                anti=[_term("zone", _req("service", "NotIn", "securityscan", "value2"))],
                node="machine1",
                name="e",
            )
        ],
        None,
        id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
    ),
]


@pytest.mark.parametrize(("incoming", "existing", "want"), ROWS)
def test_required_affinity_single_node(incoming, existing, want) -> None:
    cluster = Cluster(snapshot_from_objects([NODE1, *existing]))
    view = scheduler_view(cluster)
    fwk = Framework(DEFAULT_PROFILE)
    state = fwk.cycle_state(pod_from_object(incoming), view)
    status = fwk.run_filter_plugins(state, view.nodes[0])
    if want is None:
        assert status.is_success, status
    else:
        assert (status.code, status.reasons, status.plugin) == (
            want[0],
            (want[1],),
            "InterPodAffinity",
        )


def _scores(incoming, existing, hard=1):
    from dataclasses import replace

    from service.engine.scheduler.placement import place
    from service.engine.scheduler.profile import InterPodAffinityArgs

    nodes = [
        {**NODE1, "metadata": {"name": name, "labels": {"region": "r1", "zone": zone}}}
        for name, zone in (("machine1", "z1"), ("machine2", "z2"))
    ]
    args = {**DEFAULT_PROFILE.args, "InterPodAffinity": InterPodAffinityArgs(hard)}
    out = place(
        Cluster(snapshot_from_objects([*nodes, *existing])),
        pod_from_object(incoming),
        profile=replace(DEFAULT_PROFILE, args=args),
    )
    return [(n.scores or {}).get("InterPodAffinity") for n in out.nodes]


def _preferring(pod: dict, weight: int, kind: str = "podAffinity") -> dict:
    term = {"weight": weight, "podAffinityTerm": _term("zone", _req("service", "Exists"))}
    pod["spec"].setdefault("affinity", {})[kind] = {
        "preferredDuringSchedulingIgnoredDuringExecution": [term]
    }
    return pod


def test_existing_pods_terms_score_the_incoming_pod() -> None:
    """scoring.go processExistingPod: an existing pod's required affinity counts at
    hardPodAffinityWeight (not at all with 0); preferred affinity and anti-affinity by their
    weights, each term once per pod; equal and opposite terms still make a score (all 0)."""
    required = _pod(
        POD_LABEL, [_term("zone", _req("service", "Exists"))], node="machine1", name="e1"
    )
    assert _scores(_pod(POD_LABEL), [required], hard=1) == [100, 0]
    assert _scores(_pod(POD_LABEL), [required], hard=0) == [None, None]  # PreScore skips
    both = [
        _preferring(_pod(POD_LABEL, node="machine1", name="e1"), 30),
        _preferring(_pod(POD_LABEL, node="machine1", name="e2"), 30, "podAntiAffinity"),
    ]
    assert _scores(_pod(POD_LABEL), both) == [0, 0]
    twice = [_preferring(_pod(POD_LABEL, node="machine2", name=f"e{i}"), 20) for i in range(3)]
    assert _scores(
        _pod(POD_LABEL), [*twice, _preferring(_pod(POD_LABEL, node="machine1", name="x"), 50)]
    ) == [0, 100]
