"""InterPodAffinity's Filter, transcribed from kube-scheduler's
interpodaffinity/filtering_test.go (TestRequiredAffinitySingleNode, its first rows, and
TestRequiredAffinityMultipleNodes). Each row runs PreFilter then Filter through the framework:
on machine1 (region r1, zone z11), or on every node of the row."""

from __future__ import annotations

import pytest

from service.engine.objects import Cluster
from service.engine.scheduler.framework import UNRESOLVABLE, UNSCHEDULABLE
from service.engine.scheduler.profile import DEFAULT_PROFILE
from service.engine.scheduler.runtime import Framework
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
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
        # upstream names the namespace "DiffNameSpace", which is not a DNS label
        _pod(POD_LABEL2, [_term("region", IN_SCAN, namespaces=["diff-namespace"])]),
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
    view = scheduler_view(cluster, settings=DEFAULT_SETTINGS)
    fwk = Framework(DEFAULT_PROFILE, settings=DEFAULT_SETTINGS)
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


# --- TestRequiredAffinityMultipleNodes: one PreFilter, then Filter on every node ---


def _node(name, **labels):
    """A node named as upstream names it, lowercased (``nodeA`` is not a DNS subdomain)."""
    return {**NODE1, "metadata": {"name": name.lower(), "labels": labels}}


CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}
FOO_EXISTS = _req("foo", "Exists")
BAR_EXISTS = _req("bar", "Exists")
FOO_ABC = _req("foo", "In", "abc")
R1_Z1 = [
    _node("nodeA", region="r1", zone="z1", hostname="nodeA"),
    _node("nodeB", region="r1", zone="z1", hostname="nodeB"),
]
R1_Z1_Z2 = [
    _node("nodeA", region="r1", zone="z1", hostname="nodeA"),
    _node("nodeB", region="r1", zone="z2", hostname="nodeB"),
]
FOO_BAR_EMPTY = {"foo": "", "bar": ""}

MULTIPLE_NODES = [
    pytest.param(
        _pod({}, [_term("region", _req("foo", "In", "bar"))]),
        [_pod({"foo": "bar"}, node="machine1", name="p1")],
        [_node("machine1", **CHINA), _node("machine2", **CHINA_AZ1), _node("machine3", **INDIA)],
        [None, None, (UNRESOLVABLE, AFFINITY)],
        id="A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
    ),
    pytest.param(
        _pod(
            {"foo": "bar", "service": "securityscan"},
            [
                _term("zone", _req("foo", "In", "bar")),
                _term("zone", _req("service", "In", "securityscan")),
            ],
        ),
        [_pod({"foo": "bar"}, node="nodea", name="p1")],
        [
            _node("nodeA", zone="az1", hostname="h1"),
            _node("nodeB", zone="az2", hostname="h2"),
        ],
        [None, None],
        id="The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
    ),
    pytest.param(
        _pod({}, anti=[_term("region", FOO_ABC)]),
        [_pod({"foo": "abc"}, node="nodea", name="e")],
        [
            _node("nodeA", region="r1", hostname="nodeA"),
            _node("nodeB", region="r1", hostname="nodeB"),
        ],
        [(UNSCHEDULABLE, ANTI), (UNSCHEDULABLE, ANTI)],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
    ),
    pytest.param(
        _pod(
            {},
            anti=[_term("region", FOO_ABC), _term("zone", _req("service", "In", "securityscan"))],
        ),
        [_pod({"foo": "abc", "service": "securityscan"}, node="nodea", name="e")],
        [
            _node("nodeA", region="r1", zone="z1", hostname="nodeA"),
            _node("nodeB", region="r1", zone="z2", hostname="nodeB"),
        ],
        [(UNSCHEDULABLE, ANTI), (UNSCHEDULABLE, ANTI)],
        id="This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
    ),
    pytest.param(
        _pod({}, anti=[_term("region", FOO_ABC)]),
        [_pod({"foo": "abc"}, node="nodea", name="e")],
        [_node("nodeA", **CHINA), _node("nodeB", **CHINA_AZ1), _node("nodeC", **INDIA)],
        [(UNSCHEDULABLE, ANTI), (UNSCHEDULABLE, ANTI), None],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
    ),
    pytest.param(
        # upstream's namespaces "NS1" and "NS2" are not DNS labels
        _pod({"foo": "123"}, anti=[_term("region", _req("foo", "In", "bar"))], namespace="ns1"),
        [
            _pod({"foo": "bar"}, node="nodea", namespace="ns1", name="e1"),
            _pod(
                {},
                anti=[_term("region", _req("foo", "In", "123"))],
                node="nodec",
                namespace="ns2",
                name="e2",
            ),
        ],
        [_node("nodeA", **CHINA), _node("nodeB", **CHINA_AZ1), _node("nodeC", **INDIA)],
        [(UNSCHEDULABLE, ANTI), (UNSCHEDULABLE, ANTI), None],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
    ),
    pytest.param(
        _pod({"foo": ""}),
        [_pod({}, anti=[_term("invalid-node-label", FOO_EXISTS)], node="nodea", name="e")],
        R1_Z1,
        [None, None],
        id="Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
    ),
    pytest.param(
        _pod({}, anti=[_term("invalid-node-label", FOO_EXISTS)]),
        [_pod({"foo": ""}, node="nodea", name="e")],
        R1_Z1,
        [None, None],
        id="Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
    ),
    pytest.param(
        _pod(FOO_BAR_EMPTY),
        [
            _pod({}, anti=[_term("zone", FOO_EXISTS)], node="nodea", name="e1"),
            _pod({}, anti=[_term("region", BAR_EXISTS)], node="nodea", name="e2"),
        ],
        R1_Z1_Z2,
        [(UNSCHEDULABLE, EXISTING), (UNSCHEDULABLE, EXISTING)],
        id="Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
    ),
    pytest.param(
        _pod({}, anti=[_term("zone", FOO_EXISTS), _term("region", BAR_EXISTS)]),
        [
            _pod({"foo": ""}, node="nodea", name="e1"),
            _pod({"bar": ""}, node="nodeb", name="e2"),
        ],
        R1_Z1_Z2,
        [(UNSCHEDULABLE, ANTI), (UNSCHEDULABLE, ANTI)],
        id="Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod",
    ),
    pytest.param(
        _pod(FOO_BAR_EMPTY),
        [
            _pod(
                {},
                anti=[_term("invalid-node-label", FOO_EXISTS), _term("zone", BAR_EXISTS)],
                node="nodea",
                name="e",
            )
        ],
        R1_Z1_Z2,
        [(UNSCHEDULABLE, EXISTING), None],
        id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
    ),
    pytest.param(
        _pod({}, anti=[_term("invalid-node-label", FOO_EXISTS), _term("zone", BAR_EXISTS)]),
        [_pod(FOO_BAR_EMPTY, node="nodea", name="poda")],
        R1_Z1_Z2,
        [(UNSCHEDULABLE, ANTI), None],
        id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
    ),
    pytest.param(
        _pod(FOO_BAR_EMPTY),
        [
            _pod(
                {},
                anti=[_term("region", FOO_EXISTS), _term("zone", BAR_EXISTS)],
                node="nodea",
                name="e",
            )
        ],
        R1_Z1_Z2,
        [(UNSCHEDULABLE, EXISTING), (UNSCHEDULABLE, EXISTING)],
        id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
    ),
    pytest.param(
        _pod({}, anti=[_term("region", FOO_EXISTS), _term("zone", BAR_EXISTS)]),
        [_pod(FOO_BAR_EMPTY, node="nodea", name="e")],
        R1_Z1_Z2,
        [(UNSCHEDULABLE, ANTI), (UNSCHEDULABLE, ANTI)],
        id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
    ),
    pytest.param(
        _pod(FOO_BAR_EMPTY),
        [
            _pod(
                {},
                anti=[_term("zone", FOO_EXISTS), _term("zone", _req("labelA", "Exists"))],
                node="nodea",
                name="e1",
            ),
            _pod(
                {},
                anti=[_term("zone", BAR_EXISTS), _term("zone", _req("labelB", "Exists"))],
                node="nodeb",
                name="e2",
            ),
        ],
        [*R1_Z1_Z2, _node("nodeC", region="r1", zone="z3", hostname="nodeC")],
        [(UNSCHEDULABLE, EXISTING), (UNSCHEDULABLE, EXISTING), None],
        id="Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
    ),
    pytest.param(
        _pod({}, [_term("region", FOO_EXISTS), _term("zone", BAR_EXISTS)]),
        [_pod(FOO_BAR_EMPTY, node="nodea", name="pod1")],
        R1_Z1,
        [None, None],
        id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
    ),
    pytest.param(
        _pod({}, [_term("region", FOO_EXISTS), _term("zone", BAR_EXISTS)]),
        [
            _pod({"foo": ""}, node="nodea", name="pod1"),
            _pod({"bar": ""}, node="nodeb", name="pod2"),
        ],
        R1_Z1_Z2,
        [(UNRESOLVABLE, AFFINITY), (UNRESOLVABLE, AFFINITY)],
        id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod",
    ),
]


@pytest.mark.parametrize(("incoming", "existing", "nodes", "wants"), MULTIPLE_NODES)
def test_required_affinity_multiple_nodes(incoming, existing, nodes, wants) -> None:
    view = scheduler_view(
        Cluster(snapshot_from_objects([*nodes, *existing])), settings=DEFAULT_SETTINGS
    )
    fwk = Framework(DEFAULT_PROFILE, settings=DEFAULT_SETTINGS)
    state = fwk.cycle_state(pod_from_object(incoming), view)
    got = []
    for ni in view.nodes:
        status = fwk.run_filter_plugins(state, ni)
        got.append(None if status.is_success else (status.code, status.reasons[-1], status.plugin))
    assert got == [None if w is None else (*w, "InterPodAffinity") for w in wants]


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
        settings=DEFAULT_SETTINGS,
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
