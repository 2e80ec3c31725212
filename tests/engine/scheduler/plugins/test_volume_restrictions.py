"""VolumeRestrictions, transcribed from kube-scheduler's
volumerestrictions/volume_restrictions_test.go (v1.35): TestGCEDiskConflicts,
TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts (a pod without volumes
skips at PreFilter; Filter then decides), TestAccessModeConflicts (PreFilter, then Filter
when PreFilter succeeded), and the PreFilterExtensions preemption relies on."""

from __future__ import annotations

import pytest

from service.engine.objects import Cluster
from service.engine.scheduler.framework import (
    OK,
    SKIP,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    CycleState,
    Status,
)
from service.engine.scheduler.plugins.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    VolumeRestrictions,
)
from service.engine.scheduler.snapshot import SchedulerView
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object, snapshot_from_objects
from tests.engine.scheduler.plugins.volumes import (
    claim_volume,
    k8s_node,
    k8s_pod,
    k8s_pvc,
    run_plugin,
)

DISK_CONFLICT = Status(UNSCHEDULABLE, (ERR_REASON_DISK_CONFLICT,))
SKIPPED = Status(SKIP)

GCE = ({"gcePersistentDisk": {"pdName": "foo"}}, {"gcePersistentDisk": {"pdName": "bar"}})
AWS = (
    {"awsElasticBlockStore": {"volumeID": "foo"}},
    {"awsElasticBlockStore": {"volumeID": "bar"}},
)
RBD = (
    {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}},
    {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}},
)
ISCSI = (
    {
        "iscsi": {
            "targetPortal": "127.0.0.1:3260",
            "iqn": "iqn.2016-12.server:storage.target01",
            "fsType": "ext4",
            "lun": 0,
        }
    },
    {
        "iscsi": {
            "targetPortal": "127.0.0.1:3260",
            "iqn": "iqn.2017-12.server:storage.target01",
            "fsType": "ext4",
            "lun": 0,
        }
    },
)


def _volumes(source: dict | None) -> list:
    return [{"name": "v", **source}] if source else []


def _disk_case(pod_source, existing_source, want_pre, want_filter):
    existing = (
        []
        if existing_source is False
        else [k8s_pod("existing", _volumes(existing_source), node="node")]
    )
    _, pre, got = run_plugin(
        "VolumeRestrictions",
        k8s_pod("pod", _volumes(pod_source)),
        [k8s_node("node"), *existing],
        "node",
    )
    assert pre == want_pre
    if pre.is_success:
        assert got == want_filter


def _disk_rows(state, state2):
    return [
        pytest.param(None, False, SKIPPED, OK, id="nothing"),
        pytest.param(None, state, SKIPPED, OK, id="one state"),
        pytest.param(state, state, OK, DISK_CONFLICT, id="same state"),
        pytest.param(state2, state, OK, OK, id="different state"),
    ]


@pytest.mark.parametrize(("pod", "existing", "want_pre", "want_filter"), _disk_rows(*GCE))
def test_gce_disk_conflicts(pod, existing, want_pre, want_filter) -> None:
    _disk_case(pod, existing, want_pre, want_filter)


@pytest.mark.parametrize(("pod", "existing", "want_pre", "want_filter"), _disk_rows(*AWS))
def test_aws_disk_conflicts(pod, existing, want_pre, want_filter) -> None:
    _disk_case(pod, existing, want_pre, want_filter)


@pytest.mark.parametrize(("pod", "existing", "want_pre", "want_filter"), _disk_rows(*RBD))
def test_rbd_disk_conflicts(pod, existing, want_pre, want_filter) -> None:
    _disk_case(pod, existing, want_pre, want_filter)


@pytest.mark.parametrize(("pod", "existing", "want_pre", "want_filter"), _disk_rows(*ISCSI))
def test_iscsi_disk_conflicts(pod, existing, want_pre, want_filter) -> None:
    _disk_case(pod, existing, want_pre, want_filter)


def test_gce_disks_mounted_read_only_by_both_do_not_conflict() -> None:
    read_only = {"gcePersistentDisk": {"pdName": "foo", "readOnly": True}}
    _disk_case(read_only, read_only, OK, OK)
    _disk_case(read_only, GCE[0], OK, DISK_CONFLICT)


RWOP_PVC = k8s_pvc("claim-with-rwop", access_modes=["ReadWriteOncePod"])
RWX_PVC = k8s_pvc("claim-with-rwx", access_modes=["ReadWriteMany"])


def _rwop_pod(name: str, node: str = "") -> dict:
    return k8s_pod(name, [claim_volume("claim-with-rwop")], node=node)


@pytest.mark.parametrize(
    ("pod", "existing", "pvcs", "want_pre", "want_filter"),
    [
        pytest.param(k8s_pod("pod"), [], [], SKIPPED, None, id="nothing"),
        pytest.param(
            _rwop_pod("pod-with-rwop"),
            [],
            [],
            Status(UNRESOLVABLE, ('persistentvolumeclaim "claim-with-rwop" not found',)),
            None,
            id="failed to get PVC",
        ),
        pytest.param(
            _rwop_pod("pod-with-rwop"),
            [k8s_pod("pod-with-rwx", [claim_volume("claim-with-rwx")], node="node-1")],
            [RWOP_PVC, RWX_PVC],
            SKIPPED,
            None,
            id="no access mode conflict",
        ),
        pytest.param(
            _rwop_pod("pod-with-rwop"),
            [
                _rwop_pod("pod-with-rwop-1", node="node-1"),
                k8s_pod("pod-with-rwx", [claim_volume("claim-with-rwx")], node="node-1"),
            ],
            [RWOP_PVC, RWX_PVC],
            OK,
            Status(UNSCHEDULABLE, (ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,)),
            id="access mode conflict, unschedulable",
        ),
    ],
)
def test_access_mode_conflicts(pod, existing, pvcs, want_pre, want_filter) -> None:
    _, pre, got = run_plugin(
        "VolumeRestrictions", pod, [k8s_node("node-1"), *existing, *pvcs], "node-1"
    )
    assert pre == want_pre
    if pre.is_success:
        assert got == want_filter


def test_removing_the_holder_frees_the_claim() -> None:
    """RemovePod / AddPod (what preemption's dry run calls): removing the pod that uses the
    ReadWriteOncePod claim lets the pod fit; adding it back, or a nominated pod using the
    same claim, makes it conflict again. A clone keeps its own count."""
    objects = [k8s_node("node-1"), _rwop_pod("holder", node="node-1"), RWOP_PVC]
    view = SchedulerView(Cluster(snapshot_from_objects(objects)), settings=DEFAULT_SETTINGS)
    plugin = VolumeRestrictions(settings=DEFAULT_SETTINGS)
    state = CycleState(pod_from_object(_rwop_pod("pod")), view, settings=DEFAULT_SETTINGS)
    assert plugin.pre_filter(state, view.nodes)[1] == OK
    ni = view.by_name["node-1"]
    holder = ni.pods[0]
    assert plugin.filter(state, ni, ni).reasons == (ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,)
    copy = state.clone()
    plugin.remove_pod(copy, holder, ni)
    assert plugin.filter(copy, ni, ni) is None
    assert plugin.filter(state, ni, ni) is not None  # the original cycle is unchanged
    plugin.add_pod(copy, holder, ni)
    assert plugin.filter(copy, ni, ni) is not None
