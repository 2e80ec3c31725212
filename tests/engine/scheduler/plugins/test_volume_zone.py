"""VolumeZone, transcribed from kube-scheduler's volumezone/volume_zone_test.go (v1.35):
TestSingleZone, TestMultiZone, TestWithBinding (one row per upstream case, named as
upstream names it). PreFilter then Filter on one node, as upstream's test runs them."""

from __future__ import annotations

import pytest

from service.engine.scheduler.framework import OK, SKIP, UNRESOLVABLE, Status
from service.engine.scheduler.plugins.volume_zone import ERR_REASON_CONFLICT
from tests.engine.scheduler.plugins.volumes import (
    BETA_REGION,
    BETA_ZONE,
    REGION,
    ZONE,
    claim_volume,
    k8s_node,
    k8s_pod,
    k8s_pv,
    k8s_pvc,
    k8s_storage_class,
    run_plugin,
)

CONFLICT = Status(UNRESOLVABLE, (ERR_REASON_CONFLICT,))


def _pod_with(claim: str | None) -> dict:
    return k8s_pod("pod_1", [claim_volume(claim)] if claim else [])


def _run(pvs: list, pvcs: dict, claim: str | None, labels: dict | None, classes=()):
    objects = [
        k8s_node("host1", labels),
        *pvs,
        *(k8s_pvc(name, volume_name=vol) for name, vol in pvcs.items()),
        *classes,
    ]
    _, pre, got = run_plugin("VolumeZone", _pod_with(claim), objects, "host1")
    return pre, got


SINGLE_PVS = [
    k8s_pv("vol-1", labels={BETA_ZONE: "us-west1-a"}),
    k8s_pv("vol-2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
    k8s_pv("vol-3", labels={BETA_REGION: "us-west1"}),
    k8s_pv("vol-stable-1", labels={ZONE: "us-west1-a"}),
    k8s_pv("vol-stable-2", labels={REGION: "us-west1", "uselessLabel": "none"}),
    k8s_pv("vol-stable-3", labels={ZONE: "us-west1-a", REGION: "us-west1-a"}),
]
SINGLE_PVCS = {
    "pvc-1": "vol-1",
    "pvc-2": "vol-2",
    "pvc-3": "vol-3",
    "pvc-4": "vol-not-exist",
    "pvc-stable-1": "vol-stable-1",
    "pvc-stable-2": "vol-stable-2",
    "pvc-stable-3": "vol-stable-3",
}


@pytest.mark.parametrize(
    ("claim", "labels", "want_pre", "want_filter"),
    [
        pytest.param(None, {BETA_ZONE: "us-west1-a"}, Status(SKIP), OK, id="pod without volume"),
        pytest.param("pvc-1", None, OK, OK, id="node without labels"),
        pytest.param(
            "pvc-1",
            {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
            OK,
            OK,
            id="beta zone label matched",
        ),
        pytest.param(
            "pvc-2",
            {BETA_REGION: "us-west1", "uselessLabel": "none"},
            OK,
            OK,
            id="beta region label matched",
        ),
        pytest.param(
            "pvc-2",
            {BETA_REGION: "no_us-west1", "uselessLabel": "none"},
            OK,
            CONFLICT,
            id="beta region label doesn't match",
        ),
        pytest.param(
            "pvc-1",
            {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"},
            OK,
            CONFLICT,
            id="beta zone label doesn't match",
        ),
        pytest.param(
            "pvc-stable-1",
            {ZONE: "us-west1-a", "uselessLabel": "none"},
            OK,
            OK,
            id="zone label matched",
        ),
        pytest.param(
            "pvc-stable-2",
            {REGION: "us-west1", "uselessLabel": "none"},
            OK,
            OK,
            id="region label matched",
        ),
        pytest.param(
            "pvc-stable-2",
            {REGION: "no_us-west1", "uselessLabel": "none"},
            OK,
            CONFLICT,
            id="region label doesn't match",
        ),
        pytest.param(
            "pvc-stable-1",
            {ZONE: "no_us-west1-a", "uselessLabel": "none"},
            OK,
            CONFLICT,
            id="zone label doesn't match",
        ),
        pytest.param(
            "pvc-stable-3",
            {ZONE: "us-west1-a"},
            OK,
            CONFLICT,
            id="pv with zone and region, node with only zone",
        ),
        pytest.param(
            "pvc-stable-1",
            {BETA_ZONE: "us-west1-a"},
            OK,
            CONFLICT,
            id="pv with zone,node with beta zone",
        ),
        pytest.param(
            "pvc-1",
            {ZONE: "us-west1-a"},
            OK,
            OK,
            id="pv with beta label,node with ga label, matched",
        ),
        pytest.param(
            "pvc-1",
            {ZONE: "us-west1-b"},
            OK,
            CONFLICT,
            id="pv with beta label,node with ga label, don't match",
        ),
    ],
)
def test_single_zone(claim, labels, want_pre, want_filter) -> None:
    assert _run(SINGLE_PVS, SINGLE_PVCS, claim, labels) == (want_pre, want_filter)


MULTI_PVS = [
    k8s_pv("vol-1", labels={BETA_ZONE: "us-west1-a"}),
    k8s_pv("vol-2", labels={BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    k8s_pv("vol-3", labels={BETA_ZONE: "us-west1-c__us-west1-a"}),
    k8s_pv("vol-stable-1", labels={ZONE: "us-west1-a"}),
    k8s_pv("vol-stable-2", labels={ZONE: "us-west1-c__us-west1-a"}),
]
MULTI_PVCS = {
    "pvc-1": "vol-1",
    "pvc-2": "vol-2",
    "pvc-3": "vol-3",
    "pvc-4": "vol-not-exist",
    "pvc-stable-1": "vol-stable-1",
    "pvc-stable-2": "vol-stable-2",
}


@pytest.mark.parametrize(
    ("claim", "labels", "want_filter"),
    [
        pytest.param("pvc-3", None, OK, id="node without labels"),
        pytest.param(
            "pvc-3",
            {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
            OK,
            id="beta zone label matched",
        ),
        pytest.param(
            "pvc-1",
            {BETA_ZONE: "us-west1-b", "uselessLabel": "none"},
            CONFLICT,
            id="beta zone label doesn't match",
        ),
        pytest.param(
            "pvc-stable-2",
            {ZONE: "us-west1-a", "uselessLabel": "none"},
            OK,
            id="zone label matched",
        ),
        pytest.param(
            "pvc-stable-1",
            {ZONE: "us-west1-b", "uselessLabel": "none"},
            CONFLICT,
            id="zone label doesn't match",
        ),
    ],
)
def test_multi_zone(claim, labels, want_filter) -> None:
    assert _run(MULTI_PVS, MULTI_PVCS, claim, labels) == (OK, want_filter)


BINDING_CLASSES = [
    # Upstream's class-immediate has no volumeBindingMode at all; a snapshot's StorageClass
    # always has one (the API server defaults it to Immediate), see the row below.
    k8s_storage_class("class-immediate"),
    k8s_storage_class("class-wait", "WaitForFirstConsumer"),
]
BINDING_PVCS = [
    k8s_pvc("pvc-1", volume_name="vol-1"),
    k8s_pvc("pvc-nosc", storage_class="class-0"),
    k8s_pvc("pvc-emptysc"),
    k8s_pvc("pvc-waitsc", storage_class="class-wait"),
    k8s_pvc("pvc-immediatesc", storage_class="class-immediate"),
]


def _unresolvable(message: str) -> Status:
    return Status(UNRESOLVABLE, (message,))


@pytest.mark.parametrize(
    ("claim", "want_pre", "want_filter"),
    [
        pytest.param("pvc-1", OK, OK, id="label zone failure domain matched"),
        pytest.param(
            "pvc-emptysc",
            _unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
            _unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
            id="unbound volume empty storage class",
        ),
        pytest.param(
            "pvc-nosc",
            # the informer lister's NotFound (upstream's fake lister says "storageclasses")
            _unresolvable('storageclass.storage.k8s.io "class-0" not found'),
            _unresolvable('storageclass.storage.k8s.io "class-0" not found'),
            id="unbound volume no storage class",
        ),
        pytest.param(
            "pvc-immediatesc",
            # upstream: "VolumeBindingMode not set for StorageClass" for a class without a
            # mode; the defaulted Immediate class gives the unbound-claim rejection
            _unresolvable("PersistentVolume had no name"),
            _unresolvable("PersistentVolume had no name"),
            id="unbound volume immediate binding mode",
        ),
        pytest.param("pvc-waitsc", Status(SKIP), OK, id="unbound volume wait binding mode"),
    ],
)
def test_with_binding(claim, want_pre, want_filter) -> None:
    objects = [
        k8s_node("host1", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}),
        k8s_pv("vol-1", labels={BETA_ZONE: "us-west1-a"}),
        *BINDING_PVCS,
        *BINDING_CLASSES,
    ]
    _, pre, got = run_plugin("VolumeZone", _pod_with(claim), objects, "host1")
    assert (pre, got) == (want_pre, want_filter)


def test_a_label_listing_an_empty_zone_is_ignored() -> None:
    """LabelZonesToSet fails on an empty zone ("a____b" splits into "a", "", "b"), and getPVTopologies then ignores
    the label: the volume constrains nothing."""
    objects = [
        k8s_node("host1", {ZONE: "b"}),
        k8s_pv("vol", labels={ZONE: "a____b"}),
        k8s_pvc("pvc", volume_name="vol"),
    ]
    _, pre, got = run_plugin("VolumeZone", _pod_with("pvc"), objects, "host1")
    assert (pre, got) == (Status(SKIP), OK)
