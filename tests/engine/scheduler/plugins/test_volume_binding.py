"""VolumeBinding, transcribed from kube-scheduler's volumebinding/volume_binding_test.go
(TestVolumeBinding: PreFilter's status, then Filter's on every node when PreFilter
succeeded; one row per upstream case, named as upstream names it). The rows' expected
scores are left out: VolumeBinding scores only with the StorageCapacityScoring feature
gate, off up to 1.36 (its PreScore answers Skip) and on in 1.37 (hand-made cases below).
Then the binder's cases that
the plugin's Filter decides (binder_test.go's FindPodVolumes rows that a snapshot can
express: bound claims' node affinity, matching available volumes, provisioning with
allowed topologies and storage capacity)."""

from __future__ import annotations

import pytest

from service.engine.objects import Cluster
from service.engine.scheduler.framework import (
    OK,
    SKIP,
    UNRESOLVABLE,
    CycleState,
    Status,
)
from service.engine.scheduler.plugins.volume_binding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    VolumeBinding,
    capacity_score,
)
from service.engine.scheduler.snapshot import SchedulerView
from service.engine.version import DEFAULT_SETTINGS, KNOWN_VERSIONS, settings_for
from service.ingest.kube import pod_from_object
from tests.conftest import snapshot_from_objects
from tests.engine.scheduler.plugins.volumes import (
    BIND_COMPLETED,
    HOSTNAME,
    REGION,
    ZONE,
    claim_volume,
    ephemeral_volume,
    expression,
    k8s_node,
    k8s_pod,
    k8s_pv,
    k8s_pvc,
    k8s_storage_class,
)

CLASSES = [
    k8s_storage_class("immediate-sc", "Immediate"),
    k8s_storage_class("wait-sc", "WaitForFirstConsumer"),
    k8s_storage_class("wait-hdd-sc", "WaitForFirstConsumer"),
]


def _unresolvable(*reasons: str) -> Status:
    return Status(UNRESOLVABLE, reasons)


def _pvc(name, sc, bound_pv="", request=None, phase="", annotations=None, **kw):
    return k8s_pvc(
        name,
        storage_class=sc,
        volume_name=bound_pv,
        annotations={**(BIND_COMPLETED if bound_pv else {}), **(annotations or {})},
        request=request,
        phase=phase,
        **kw,
    )


def _pv(name, sc, capacity=None, affinity=None, phase="Available", access_modes=None, **kw):
    kw["access_modes"] = access_modes or ["ReadWriteOnce"]
    terms = None
    if affinity is not None:
        terms = [{"matchExpressions": [expression(k, "In", v) for k, v in affinity.items()]}]
    return k8s_pv(name, storage_class=sc, capacity=capacity, node_affinity=terms, phase=phase, **kw)


def _node(name, **labels):
    return k8s_node(name, {HOSTNAME: name, **labels})


def decide(pod: dict, nodes: list, objects: list) -> tuple[Status, list[Status] | None]:
    """PreFilter's status, and Filter's on each node (None when PreFilter did not succeed)."""
    view = SchedulerView(
        Cluster(snapshot_from_objects([*nodes, *CLASSES, *objects])), settings=DEFAULT_SETTINGS
    )
    plugin = VolumeBinding(settings=DEFAULT_SETTINGS)
    state = CycleState(pod_from_object(pod), view, settings=DEFAULT_SETTINGS)
    names, pre = plugin.pre_filter(state, view.nodes)
    assert names is None  # no PreFilterResult in 1.35
    pre = Status(pre.code, pre.reasons)
    if not pre.is_success:
        return pre, None
    out = []
    for ni in view.nodes:
        got = plugin.filter(state, ni, ni)
        out.append(OK if got is None else Status(got.code, got.reasons))
    return pre, out


ZONAL_NODES = [
    _node(f"zone-{z}-node-{n}", **{REGION: f"region-{z}", ZONE: f"zone-{z}"})
    for z in "abc"
    for n in "ab"
]
ZONAL_PVS = [
    _pv(f"pv-{z}-{i}", "wait-sc", size, {REGION: [f"region-{z}"], ZONE: [f"zone-{z}"]})
    for z, size in (("a", "200Gi"), ("b", "100Gi"))
    for i in range(2)
]
NO_PV_TO_BIND = _unresolvable(ERR_REASON_BIND_CONFLICT)


@pytest.mark.parametrize(
    ("pod", "nodes", "objects", "want_pre", "want_filter"),
    [
        pytest.param(
            k8s_pod("pod-a"), [_node("node-a")], [], Status(SKIP), None, id="pod has not pvcs"
        ),
        pytest.param(
            k8s_pod("pod-a", [claim_volume("pvc-a")]),
            [_node("node-a")],
            [_pvc("pvc-a", "wait-sc", "pv-a"), _pv("pv-a", "wait-sc")],
            OK,
            [OK],
            id="all bound",
        ),
        pytest.param(
            k8s_pod("pod-a", [claim_volume("pvc-a")]),
            [_node("node-a")],
            [],
            _unresolvable('persistentvolumeclaim "pvc-a" not found'),
            None,
            id="PVC does not exist",
        ),
        pytest.param(
            k8s_pod("pod-a", [claim_volume("pvc-a"), claim_volume("pvc-b")]),
            [_node("node-a")],
            [_pvc("pvc-a", "wait-sc", "pv-a")],
            _unresolvable('persistentvolumeclaim "pvc-b" not found'),
            None,
            id="Part of PVCs do not exist",
        ),
        pytest.param(
            k8s_pod("pod-a", [claim_volume("pvc-a")]),
            [_node("node-a")],
            [_pvc("pvc-a", "immediate-sc")],
            _unresolvable("pod has unbound immediate PersistentVolumeClaims"),
            None,
            id="immediate claims not bound",
        ),
        pytest.param(
            k8s_pod("pod-a", [claim_volume("pvc-a")]),
            [_node("node-a")],
            [_pvc("pvc-a", "wait-sc")],
            OK,
            [NO_PV_TO_BIND],
            id="unbound claims no matches",
        ),
        pytest.param(
            k8s_pod("pod-a", [claim_volume("pvc-a"), claim_volume("pvc-b")]),
            [k8s_node("node-a", {"foo": "barbar"})],
            [
                _pvc("pvc-a", "wait-sc", "pv-a"),
                _pvc("pvc-b", "wait-sc"),
                _pv("pv-a", "wait-sc", affinity={"foo": ["bar"]}),
            ],
            OK,
            [_unresolvable(ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT)],
            id="bound and unbound unsatisfied",
        ),
        pytest.param(
            k8s_pod("pod-a", [claim_volume("pvc-a")]),
            [_node("node-a")],
            [],
            _unresolvable('persistentvolumeclaim "pvc-a" not found'),
            None,
            id="pvc not found",
        ),
        pytest.param(
            k8s_pod("pod-a", [claim_volume("pvc-a")]),
            [_node("node-a")],
            [_pvc("pvc-a", "wait-sc", "pv-a")],
            OK,
            [_unresolvable(ERR_REASON_PV_NOT_EXIST)],
            id="pv not found",
        ),
        pytest.param(
            k8s_pod("pod-a", [claim_volume("pvc-a")]),
            [_node("node-a")],
            [_pvc("pvc-a", "wait-sc", "pv-a", phase="Lost")],
            _unresolvable(
                'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'
            ),
            None,
            id="pv not found claim lost",
        ),
        pytest.param(
            k8s_pod("pod-a", [claim_volume("pvc-a")]),
            [_node("node-a"), _node("node-b"), _node("node-c")],
            [
                _pvc("pvc-a", "wait-sc", request="50Gi"),
                *(
                    _pv(f"pv-{n}-{i}", "wait-sc", size, {HOSTNAME: [f"node-{n}"]})
                    for n, size in (("a", "200Gi"), ("b", "100Gi"))
                    for i in range(2)
                ),
            ],
            OK,
            [OK, OK, NO_PV_TO_BIND],
            id="local volumes with close capacity are preferred",
        ),
        pytest.param(
            k8s_pod("pod-a", [claim_volume("pvc-0"), claim_volume("pvc-1")]),
            [_node("node-a"), _node("node-b"), _node("node-c")],
            [
                _pvc("pvc-0", "wait-sc", request="50Gi"),
                _pvc("pvc-1", "wait-hdd-sc", request="100Gi"),
                *(
                    _pv(f"pv-{n}-{i}", sc, size, {HOSTNAME: [f"node-{n}"]})
                    for n, size in (("a", "200Gi"), ("b", "100Gi"))
                    for i, sc in enumerate(("wait-sc", "wait-sc", "wait-hdd-sc", "wait-hdd-sc"))
                ),
            ],
            OK,
            [OK, OK, NO_PV_TO_BIND],
            id="local volumes with close capacity are preferred (multiple pvcs)",
        ),
        pytest.param(
            k8s_pod("pod-a", [claim_volume("pvc-a")]),
            ZONAL_NODES,
            [_pvc("pvc-a", "wait-sc", request="50Gi"), *ZONAL_PVS],
            OK,
            [OK, OK, OK, OK, NO_PV_TO_BIND, NO_PV_TO_BIND],
            id="zonal volumes with close capacity are preferred",
        ),
        pytest.param(
            k8s_pod("pod-a", [claim_volume("pvc-a")]),
            ZONAL_NODES,
            [_pvc("pvc-a", "wait-sc", request="50Gi"), *ZONAL_PVS],
            OK,
            [OK, OK, OK, OK, NO_PV_TO_BIND, NO_PV_TO_BIND],
            id="zonal volumes with close capacity are preferred (custom shape)",
        ),
    ],
)
def test_volume_binding(pod, nodes, objects, want_pre, want_filter) -> None:
    assert decide(pod, nodes, objects) == (want_pre, want_filter)


@pytest.mark.parametrize("release", KNOWN_VERSIONS)
def test_pre_score_skips_without_the_storage_capacity_scoring_gate(release) -> None:
    """StorageCapacityScoring (alpha and off in 1.33 to 1.36, beta and on in 1.37, KEP-4049):
    without it PreScore skips; with it the Score runs for a pod with claims. A pod without
    claims skips in every release (not upstream, whose Score gives it 0 everywhere)."""
    settings = settings_for(release)
    view = SchedulerView(
        Cluster(snapshot_from_objects([NODE1, SC_PROVISION, _pvc("c", "wait-provision")])),
        settings=settings,
    )
    for pod, scores in ((k8s_pod("p"), False), (k8s_pod("q", [claim_volume("c")]), True)):
        plugin = VolumeBinding(settings=settings)
        state = CycleState(pod_from_object(pod), view, settings=settings)
        plugin.pre_filter(state, view.nodes)
        status = plugin.pre_score(state, view.nodes)
        assert status.is_skip is not (scores and release == "1.37"), (release, pod)


def _capacity(name: str, zone: str, size: str) -> dict:
    return {
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": "kube-system"},
        "storageClassName": "wait-provision",
        "capacity": size,
        "nodeTopology": {"matchLabels": {ZONE: zone}},
    }


TRACKING_DRIVER = {
    "kind": "CSIDriver",
    "metadata": {"name": "test-provisioner"},
    "spec": {"storageCapacity": True},
}


def scores(pod: dict, nodes: list, objects: list, release: str = "1.37") -> list[int]:
    """VolumeBinding's Score on each node (every node must pass its Filter)."""
    settings = settings_for(release)
    view = SchedulerView(
        Cluster(snapshot_from_objects([*nodes, *CLASSES, *objects])), settings=settings
    )
    plugin = VolumeBinding(settings=settings)
    state = CycleState(pod_from_object(pod), view, settings=settings)
    _, pre = plugin.pre_filter(state, view.nodes)
    if not pre.is_skip:  # the framework then skips the Filter
        assert all(plugin.filter(state, ni, ni) is None for ni in view.nodes)
    assert not plugin.pre_score(state, view.nodes).is_skip
    return [plugin.score(state, ni, ni) for ni in view.nodes]


def test_dynamic_provisioning_scores_the_node_with_more_free_storage_higher() -> None:
    """StorageCapacityScoring (beta in 1.37, KEP-4049): a 50Gi claim to provision scores
    100 - 50 = 50 where its class has 100Gi (utilization 50 %) and 75 where it has 200Gi,
    with the default shape (0 % -> 10, 100 % -> 0, scaled to 100)."""
    nodes = [_node("small", **{ZONE: "z1"}), _node("large", **{ZONE: "z2"})]
    objects = [
        SC_PROVISION,
        TRACKING_DRIVER,
        _capacity("c1", "z1", "100Gi"),
        _capacity("c2", "z2", "200Gi"),
        _pvc("claim", "wait-provision", request="50Gi"),
    ]
    pod = k8s_pod("pod", [claim_volume("claim")])
    assert scores(pod, nodes, objects) == [50, 75]


def test_two_claims_of_one_class_share_the_class_capacity() -> None:
    """Score's dynamic part sets (does not add) the class's capacity and sums the claims'
    requests: 2 x 30Gi of a 100Gi class is 60 % used, 40."""
    objects = [
        SC_PROVISION,
        TRACKING_DRIVER,
        _capacity("c1", "zone-1", "100Gi"),
        _pvc("a", "wait-provision", request="30Gi"),
        _pvc("b", "wait-provision", request="30Gi"),
    ]
    pod = k8s_pod("pod", [claim_volume("a"), claim_volume("b")])
    assert scores(pod, [NODE1], objects) == [40]


def test_static_bindings_score_the_chosen_volumes() -> None:
    """Score's static part: the claims bound to available volumes, against the volumes'
    capacity: a 50Gi claim takes the node's 100Gi volume (50) or 200Gi volume (75)."""
    nodes = [_node("n1"), _node("n2")]
    objects = [
        _pv("pv1", "wait-sc", "100Gi", {HOSTNAME: ["n1"]}),
        _pv("pv2", "wait-sc", "200Gi", {HOSTNAME: ["n2"]}),
        _pvc("claim", "wait-sc", request="50Gi"),
    ]
    pod = k8s_pod("pod", [claim_volume("claim")])
    assert scores(pod, nodes, objects) == [50, 75]


def test_without_capacity_tracking_the_score_is_0() -> None:
    """No class to rate: a provisioned claim whose driver does not track capacity (no
    CSIStorageCapacity behind it) scores 0."""
    objects = [SC_PROVISION, _pvc("claim", "wait-provision", request="5Gi")]
    assert scores(k8s_pod("pod", [claim_volume("claim")]), [NODE1], objects) == [0]


def test_capacity_score_rounds_the_mean_half_up_and_scores_overuse_as_full() -> None:
    shape = [(0, 100), (100, 0)]
    assert capacity_score([(1, 2), (1, 4)], shape) == 63  # (50 + 75) / 2 = 62.5 -> 63
    assert capacity_score([(3, 2)], shape) == 0  # requested above capacity: utilization 100
    assert capacity_score([(1, 0)], shape) == 0
    assert capacity_score([], shape) == 0


# --- the binder (binder_test.go) through the plugin's Filter ---

NODE1 = _node("node1", **{ZONE: "zone-1"})
SC_PROVISION = k8s_storage_class("wait-provision", "WaitForFirstConsumer", "test-provisioner")


def _one(objects: list, pod_claims=("claim",), node=NODE1, pod=None):
    pod = pod or k8s_pod("pod", [claim_volume(c) for c in pod_claims])
    return decide(pod, [node], objects)


def test_find_pod_volumes_bound_claim_node_affinity() -> None:
    """checkBoundClaims: a bound volume's required terms against the node's labels."""
    matching = _pv("pv", "wait-sc", affinity={ZONE: ["zone-1"]})
    other = _pv("pv", "wait-sc", affinity={ZONE: ["zone-2"]})
    claim = _pvc("claim", "wait-sc", "pv")
    assert _one([claim, matching]) == (OK, [OK])
    assert _one([claim, other]) == (OK, [_unresolvable(ERR_REASON_NODE_CONFLICT)])


def test_a_claim_without_bind_completed_is_unbound() -> None:
    """isPVCFullyBound: volumeName alone (no pv.kubernetes.io/bind-completed) is a claim
    pre-bound to a volume, treated as an unbound Immediate claim."""
    claim = k8s_pvc("claim", storage_class="wait-sc", volume_name="pv")
    assert _one([claim, _pv("pv", "wait-sc")])[0] == _unresolvable(
        "pod has unbound immediate PersistentVolumeClaims"
    )


@pytest.mark.parametrize(
    ("pvs", "want"),
    [
        pytest.param([_pv("pv", "wait-sc", "10Gi")], OK, id="a volume large enough"),
        pytest.param([_pv("pv", "wait-sc", "1Gi")], NO_PV_TO_BIND, id="too small"),
        pytest.param([_pv("pv", "wait-hdd-sc", "10Gi")], NO_PV_TO_BIND, id="another class"),
        pytest.param(
            [_pv("pv", "wait-sc", "10Gi", phase="Bound")], NO_PV_TO_BIND, id="not available"
        ),
        pytest.param(
            [_pv("pv", "wait-sc", "10Gi", {ZONE: ["zone-2"]})],
            NO_PV_TO_BIND,
            id="node affinity elsewhere",
        ),
        pytest.param(
            [_pv("pv", "wait-sc", "10Gi", access_modes=["ReadOnlyMany"])],
            NO_PV_TO_BIND,
            id="access modes missing",
        ),
        pytest.param(
            [_pv("pv", "wait-sc", "10Gi", volume_mode="Block")],
            NO_PV_TO_BIND,
            id="another volume mode",
        ),
        pytest.param(
            [_pv("pv", "wait-sc", "10Gi", deleting=True)], NO_PV_TO_BIND, id="being deleted"
        ),
        pytest.param(
            [_pv("pv", "wait-sc", "10Gi", phase="Bound", claim=("default", "claim"))],
            OK,
            id="pre-bound to the claim, whatever its phase",
        ),
        pytest.param(
            [_pv("pv", "wait-sc", "10Gi", claim=("default", "other"))],
            NO_PV_TO_BIND,
            id="claimed by another claim",
        ),
        pytest.param(
            [
                _pv("pv", "wait-sc", "10Gi", {ZONE: ["zone-2"]}, claim=("default", "claim")),
                _pv("pv-2", "wait-sc", "10Gi"),
            ],
            NO_PV_TO_BIND,
            id="pre-bound volume elsewhere: no other volume is tried",
        ),
    ],
)
def test_find_matching_volumes(pvs, want) -> None:
    claim = _pvc("claim", "wait-sc", request="5Gi", access_modes=["ReadWriteOnce"])
    assert _one([claim, *pvs]) == (OK, [want])


def test_two_claims_do_not_share_a_volume() -> None:
    """findMatchingVolumes: a chosen volume is not offered to the next claim."""
    claims = [_pvc(f"c{i}", "wait-sc", request="1Gi") for i in range(2)]
    one = [_pv("pv", "wait-sc", "10Gi")]
    two = [*one, _pv("pv-2", "wait-sc", "5Gi")]
    assert _one([*claims, *one], pod_claims=("c0", "c1")) == (OK, [NO_PV_TO_BIND])
    assert _one([*claims, *two], pod_claims=("c0", "c1")) == (OK, [OK])


@pytest.mark.parametrize(
    ("objects", "want"),
    [
        pytest.param([SC_PROVISION], OK, id="provisioned"),
        pytest.param(
            [
                k8s_storage_class(
                    "wait-provision", "WaitForFirstConsumer", "kubernetes.io/no-provisioner"
                )
            ],
            NO_PV_TO_BIND,
            id="no provisioner",
        ),
        pytest.param(
            [
                k8s_storage_class(
                    "wait-provision",
                    "WaitForFirstConsumer",
                    "test-provisioner",
                    [{"matchLabelExpressions": [{"key": ZONE, "values": ["zone-2"]}]}],
                )
            ],
            NO_PV_TO_BIND,
            id="allowed topologies exclude the node",
        ),
        pytest.param(
            [
                k8s_storage_class(
                    "wait-provision",
                    "WaitForFirstConsumer",
                    "test-provisioner",
                    [{"matchLabelExpressions": [{"key": ZONE, "values": ["zone-1"]}]}],
                )
            ],
            OK,
            id="allowed topologies include the node",
        ),
        pytest.param(
            [
                SC_PROVISION,
                {
                    "kind": "CSIDriver",
                    "metadata": {"name": "test-provisioner"},
                    "spec": {"storageCapacity": True},
                },
            ],
            _unresolvable(ERR_REASON_NOT_ENOUGH_SPACE),
            id="capacity tracking without any capacity",
        ),
        pytest.param(
            [
                SC_PROVISION,
                {
                    "kind": "CSIDriver",
                    "metadata": {"name": "test-provisioner"},
                    "spec": {"storageCapacity": True},
                },
                {
                    "kind": "CSIStorageCapacity",
                    "metadata": {"name": "c", "namespace": "kube-system"},
                    "storageClassName": "wait-provision",
                    "capacity": "100Gi",
                    "maximumVolumeSize": "1Gi",
                    "nodeTopology": {"matchLabels": {ZONE: "zone-1"}},
                },
            ],
            _unresolvable(ERR_REASON_NOT_ENOUGH_SPACE),
            id="maximumVolumeSize wins over capacity",
        ),
        pytest.param(
            [
                SC_PROVISION,
                {
                    "kind": "CSIDriver",
                    "metadata": {"name": "test-provisioner"},
                    "spec": {"storageCapacity": True},
                },
                {
                    "kind": "CSIStorageCapacity",
                    "metadata": {"name": "c", "namespace": "kube-system"},
                    "storageClassName": "wait-provision",
                    "capacity": "10Gi",
                    "nodeTopology": {"matchLabels": {ZONE: "zone-1"}},
                },
            ],
            OK,
            id="enough capacity the node reaches",
        ),
        pytest.param(
            [
                SC_PROVISION,
                {
                    "kind": "CSIDriver",
                    "metadata": {"name": "test-provisioner"},
                    "spec": {"storageCapacity": True},
                },
                {
                    "kind": "CSIStorageCapacity",
                    "metadata": {"name": "c", "namespace": "kube-system"},
                    "storageClassName": "wait-provision",
                    "capacity": "10Gi",
                    "nodeTopology": {"matchLabels": {ZONE: "zone-2"}},
                },
            ],
            _unresolvable(ERR_REASON_NOT_ENOUGH_SPACE),
            id="capacity the node does not reach",
        ),
    ],
)
def test_check_volume_provisions(objects, want) -> None:
    claim = _pvc("claim", "wait-provision", request="5Gi")
    assert _one([claim, *objects]) == (OK, [want])


def test_selected_node() -> None:
    """A claim already given a node (volume.kubernetes.io/selected-node) fits only it."""
    claim = _pvc(
        "claim", "wait-provision", annotations={"volume.kubernetes.io/selected-node": "node2"}
    )
    assert _one([claim, SC_PROVISION]) == (OK, [NO_PV_TO_BIND])
    here = _pvc(
        "claim", "wait-provision", annotations={"volume.kubernetes.io/selected-node": "node1"}
    )
    assert _one([here, SC_PROVISION]) == (OK, [OK])


def test_a_claim_without_a_class_binds_immediately() -> None:
    """IsDelayBindingMode: no class (or a class not found) is Immediate binding."""
    for claim in (k8s_pvc("claim"), k8s_pvc("claim", storage_class="missing")):
        assert _one([claim])[0] == _unresolvable("pod has unbound immediate PersistentVolumeClaims")


@pytest.mark.parametrize(
    ("claims", "want"),
    [
        pytest.param(
            [],
            _unresolvable(
                'waiting for ephemeral volume controller to create the persistentvolumeclaim "pod-scratch"'
            ),
            id="ephemeral claim not yet created",
        ),
        pytest.param(
            [k8s_pvc("pod-scratch", storage_class="wait-provision")],
            _unresolvable(
                "PVC default/pod-scratch was not created for pod default/pod (pod is not owner)"
            ),
            id="ephemeral claim of another owner",
        ),
        pytest.param(
            [k8s_pvc("pod-scratch", storage_class="wait-provision", owner_uid="uid-pod")],
            OK,
            id="ephemeral claim of the pod",
        ),
        pytest.param(
            [
                k8s_pvc(
                    "pod-scratch",
                    storage_class="wait-provision",
                    owner_uid="uid-pod",
                    deleting=True,
                )
            ],
            _unresolvable('persistentvolumeclaim "pod-scratch" is being deleted'),
            id="claim being deleted",
        ),
    ],
)
def test_ephemeral_claims(claims, want) -> None:
    pod = k8s_pod("pod", [ephemeral_volume("scratch")])
    assert _one([*claims, SC_PROVISION], pod=pod)[0] == want
