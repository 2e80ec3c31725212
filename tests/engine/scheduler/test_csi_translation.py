"""In-tree volumes migrated to CSI, as the v1.35 scheduler reads them (csi_translation.py):
csi-translation-lib's volume handles (TranslateInTreePVToCSI, TranslateInTreeInlineVolumeToCSI)
in NodeVolumeLimits, the translated node affinity (translateTopologyFromInTreeToCSI) in
VolumeBinding's checkBoundClaims where the CSINode lists the plugin as migrated
(tryTranslatePVToCSI / isPluginMigratedToCSIOnNode), which VolumeAttachments
getNodeVolumeAttachmentInfo counts, and FindMatchingVolume's volumeAttributesClassName.

Each case states Verdict's answer and, where the oracle binary is present, that the real
scheduler (full profile) answers the same."""

from __future__ import annotations

import copy

import pytest

from service.decisions.priority import admit_priority
from service.engine.objects import (
    Cluster,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
)
from service.engine.scheduler.csi_translation import (
    MIGRATIONS,
    TranslationError,
    ebs_volume_id,
    inline_handle,
    pv_handle,
    translated_node_affinity,
)
from service.engine.scheduler.preemption import preempt
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object, snapshot_from_objects
from tests.conftest import node, pod
from tests.engine.scheduler.oracle import (
    BINARY,
    placement_differences,
    preemption_differences,
    verdict_placement,
)

GA = "topology.kubernetes.io/zone"
BETA = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
GCE = "pd.csi.storage.gke.io"
EBS = "ebs.csi.aws.com"
MIGRATED = "storage.alpha.kubernetes.io/migrated-plugins"
FITS = (True, "", "Success", [])
AFFINITY = (
    False,
    "VolumeBinding",
    "UnschedulableAndUnresolvable",
    ["node(s) didn't match PersistentVolume's node affinity"],
)
LIMIT = (False, "NodeVolumeLimits", "Unschedulable", ["node(s) exceed max volume count"])
NO_PV = (
    False,
    "VolumeBinding",
    "UnschedulableAndUnresolvable",
    ["node(s) didn't find available persistent volumes to bind"],
)


# --- the translator's own answers ---


def _pv(**kw) -> PersistentVolume:
    return PersistentVolume(name="pv", in_tree="gcePersistentDisk", in_tree_disk="d1", **kw)


@pytest.mark.parametrize(
    ("labels", "handle"),
    [
        ({GA: "us-central1-a"}, "projects/UNSPECIFIED/zones/us-central1-a/disks/d1"),
        (
            {GA: "us-central1-a__us-central1-b"},
            "projects/UNSPECIFIED/regions/us-central1/disks/d1",
        ),
        # the beta label wins over the GA one
        (
            {BETA: "europe-west1-b__europe-west1-c", GA: "us-central1-a"},
            "projects/UNSPECIFIED/regions/europe-west1/disks/d1",
        ),
        ({}, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d1"),
    ],
)
def test_gce_pd_handle_as_translate_in_tree_pv_to_csi(labels, handle) -> None:
    assert pv_handle(_pv(labels=labels)) == handle


def test_gce_pd_regional_handle_of_zones_in_no_one_region_is_an_error() -> None:
    with pytest.raises(TranslationError, match="got: bad"):
        pv_handle(_pv(labels={GA: "bad__zone"}))
    with pytest.raises(TranslationError, match="multiple or no regions"):
        pv_handle(_pv(labels={GA: "us-east1-b__europe-west1-c"}))


def test_ebs_volume_ids_as_kubernetes_volume_id_to_ebs_volume_id() -> None:
    assert ebs_volume_id("vol-1") == "vol-1"
    assert ebs_volume_id("aws://us-east-1a/vol-1") == "vol-1"
    assert ebs_volume_id("aws:///vol-1?x=1") == "vol-1"
    with pytest.raises(TranslationError, match=r"Invalid format for AWS volume \(aws://z/x\)"):
        ebs_volume_id("aws://z/x")
    assert (
        inline_handle("gcePersistentDisk", "d") == "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d"
    )


def test_translated_node_affinity_as_translate_topology_from_in_tree_to_csi() -> None:
    zone = NodeSelectorRequirement(BETA, "In", ("us-central1-a",))
    region = NodeSelectorRequirement(BETA_REGION, "In", ("us-central1",))
    pv = _pv(node_affinity=(NodeSelectorTerm(match_expressions=(zone, region)),))
    (term,) = translated_node_affinity(pv, MIGRATIONS["gcePersistentDisk"])
    assert [(r.key, r.values) for r in term.match_expressions] == [
        ("topology.gke.io/zone", ("us-central1-a",)),
        ("topology.kubernetes.io/region", ("us-central1",)),
    ]
    # no zone requirement: the zone label's zones are added to a new term
    labelled = _pv(labels={GA: "us-east-1b__us-east-1a"})
    (term,) = translated_node_affinity(labelled, MIGRATIONS["awsElasticBlockStore"])
    assert term.match_expressions == (
        NodeSelectorRequirement(
            "topology.ebs.csi.aws.com/zone", "In", ("us-east-1a", "us-east-1b")
        ),
    )
    # Azure Disk's translator leaves the node affinity as it is
    assert translated_node_affinity(labelled, MIGRATIONS["azureDisk"]) is None


# --- clusters, against the real scheduler ---


def _csinode(name: str, drivers=(), migrated: str | None = None) -> dict:
    meta: dict = {"name": name}
    if migrated is not None:
        meta["annotations"] = {MIGRATED: migrated}
    listed = []
    for driver, count in drivers:
        entry: dict = {"name": driver, "nodeID": name}
        if count is not None:
            entry["allocatable"] = {"count": count}
        listed.append(entry)
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": meta,
        "spec": {"drivers": listed},
    }


def _k8s_pv(name: str, source: dict, labels=None, affinity=None, claim=None) -> dict:
    spec = {
        "capacity": {"storage": "10Gi"},
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "",
        "volumeMode": "Filesystem",
        "persistentVolumeReclaimPolicy": "Retain",
        **source,
    }
    if affinity:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": affinity}}
    if claim:
        spec["claimRef"] = {"namespace": "default", "name": claim, "uid": f"uid-{claim}"}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": {"phase": "Bound" if claim else "Available"},
    }


def _bound_pvc(name: str, volume: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
        },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "10Gi"}},
            "storageClassName": "",
            "volumeMode": "Filesystem",
            "volumeName": volume,
        },
        "status": {"phase": "Bound"},
    }


def _with_volumes(p: dict, *volumes: dict) -> dict:
    p = copy.deepcopy(p)
    p["spec"]["volumes"] = list(volumes)
    return p


def _claim(name: str) -> dict:
    return {"name": f"v-{name}", "persistentVolumeClaim": {"claimName": name}}


def _case(objects: list[dict], *volumes: dict) -> dict:
    incoming = _with_volumes(pod("in", None, cpu="100m"), *volumes)
    return {"kind": "placement", "objects": objects, "pod": incoming}


def _answer(case: dict) -> tuple:
    (n1,) = verdict_placement(case)["nodes"]
    return n1["feasible"], n1["plugin"], n1["code"], n1["reasons"]


def _check(case: dict, expected: tuple) -> None:
    assert _answer(case) == expected
    if BINARY.exists():
        assert placement_differences(case) == []


SOURCES = {
    "gce": ({"gcePersistentDisk": {"pdName": "d1"}}, "kubernetes.io/gce-pd", AFFINITY),
    "aws": ({"awsElasticBlockStore": {"volumeID": "vol-1"}}, "kubernetes.io/aws-ebs", AFFINITY),
    "azure": (
        {"azureDisk": {"diskName": "d1", "diskURI": "/subscriptions/s/disks/d1"}},
        "kubernetes.io/azure-disk",
        FITS,  # its translator keeps the GA zone affinity, which the node has
    ),
    "cinder": ({"cinder": {"volumeID": "c1"}}, "kubernetes.io/cinder", AFFINITY),
}


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("form", ["affinity", "labels"])
@pytest.mark.parametrize("migrated", [False, True])
def test_check_bound_claims_reads_the_translated_affinity_where_the_csinode_migrated_it(
    source, form, migrated
) -> None:
    """checkBoundClaims / tryTranslatePVToCSI: the node has only the GA zone label, so a
    migrated PV whose zone moved to the driver's topology key does not match it; without
    the plugin in the CSINode's migrated-plugins annotation the PV is read as stored."""
    spec, plugin, when_migrated = SOURCES[source]
    zone = [{"matchExpressions": [{"key": GA, "operator": "In", "values": ["us-central1-a"]}]}]
    volume = _k8s_pv(
        "pv1",
        spec,
        labels={GA: "us-central1-a"},
        affinity=zone if form == "affinity" else None,
        claim="c1",
    )
    objects = [
        node("n1", labels={GA: "us-central1-a"}),
        _csinode("n1", migrated=plugin if migrated else "kubernetes.io/other"),
        volume,
        _bound_pvc("c1", "pv1"),
    ]
    _check(_case(objects, _claim("c1")), when_migrated if migrated else FITS)


@pytest.mark.parametrize(
    ("node_labels", "expected"),
    [
        ({GA: "us-central1-a", BETA_REGION: "us-central1"}, AFFINITY),
        (
            {
                GA: "us-central1-a",
                "topology.kubernetes.io/region": "us-central1",
                "topology.gke.io/zone": "us-central1-a",
            },
            FITS,
        ),
        (
            {BETA: "us-central1-a", BETA_REGION: "us-central1", "topology.gke.io/zone": "x"},
            AFFINITY,
        ),
    ],
)
def test_beta_zone_and_region_requirements_move_to_the_csi_and_ga_keys(
    node_labels, expected
) -> None:
    affinity = [
        {
            "matchExpressions": [
                {"key": BETA, "operator": "In", "values": ["us-central1-a"]},
                {"key": BETA_REGION, "operator": "In", "values": ["us-central1"]},
            ]
        }
    ]
    objects = [
        node("n1", labels=node_labels),
        _csinode("n1", [(GCE, 5)], migrated="kubernetes.io/gce-pd"),
        _k8s_pv("pv1", {"gcePersistentDisk": {"pdName": "d1"}}, affinity=affinity, claim="c1"),
        _bound_pvc("c1", "pv1"),
    ]
    _check(_case(objects, _claim("c1")), expected)


@pytest.mark.parametrize(
    ("labels", "existing_handle", "expected"),
    [
        # the same regional disk, once as CSI and once in-tree: counted once
        (
            {GA: "us-central1-a__us-central1-b"},
            "projects/UNSPECIFIED/regions/us-central1/disks/d1",
            FITS,
        ),
        (
            {GA: "us-central1-a__us-central1-b"},
            "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d1",
            LIMIT,
        ),
        ({GA: "us-central1-a"}, "projects/UNSPECIFIED/zones/us-central1-a/disks/d1", FITS),
        ({}, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d1", FITS),
        ({}, "projects/UNSPECIFIED/zones/us-central1-a/disks/d1", LIMIT),
        # zones in no one region: the translator refuses it, so it is not counted
        ({GA: "us-central1-a__bad"}, "projects/UNSPECIFIED/zones/us-central1-a/disks/d9", FITS),
    ],
    ids=["regional-same", "regional-other", "zonal-same", "unspecified", "zonal-other", "bad"],
)
def test_get_csi_driver_info_counts_a_migrated_gce_pd_under_its_translated_handle(
    labels, existing_handle, expected
) -> None:
    """CSILimits.getCSIDriverInfo: an existing pod holds a CSI volume; the incoming pod's
    in-tree PV is the same disk exactly when its translated handle is equal (limit 1)."""
    node_zone = {GA: "us-central1-a"}  # one of each label's zones: VolumeZone lets it be
    objects = [
        node("n1", labels=node_zone),
        _csinode("n1", [(GCE, 1)]),
        _k8s_pv("pv-csi", {"csi": {"driver": GCE, "volumeHandle": existing_handle}}, claim="c0"),
        _bound_pvc("c0", "pv-csi"),
        _with_volumes(pod("old", "n1", cpu="100m"), _claim("c0")),
        _k8s_pv("pv-in", {"gcePersistentDisk": {"pdName": "d1"}}, labels=labels, claim="c1"),
        _bound_pvc("c1", "pv-in"),
    ]
    _check(_case(objects, _claim("c1")), expected)


def _attachment(source: dict) -> dict:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": "va1"},
        "spec": {"attacher": GCE, "nodeName": "n1", "source": source},
        "status": {"attached": True},
    }


@pytest.mark.parametrize(
    ("attached", "expected"),
    [
        ("csi-pv", LIMIT),
        ("inline", FITS),  # inlineVolumeSpec: no persistentVolumeName, not counted
        ("in-tree-pv", FITS),  # a PV without a CSI source: not counted
    ],
)
def test_get_node_volume_attachment_info_counts_only_csi_persistent_volumes(
    attached, expected
) -> None:
    objects = [node("n1"), _csinode("n1", [(GCE, 1)])]
    if attached == "csi-pv":
        objects += [
            _k8s_pv("pv-x", {"csi": {"driver": GCE, "volumeHandle": "h-x"}}),
            _attachment({"persistentVolumeName": "pv-x"}),
        ]
    elif attached == "in-tree-pv":
        objects += [
            _k8s_pv("pv-x", {"gcePersistentDisk": {"pdName": "dx"}}),
            _attachment({"persistentVolumeName": "pv-x"}),
        ]
    else:
        objects.append(_attachment({"inlineVolumeSpec": {"gcePersistentDisk": {"pdName": "dx"}}}))
    objects += [
        _k8s_pv("pv-new", {"csi": {"driver": GCE, "volumeHandle": "h-new"}}, claim="c1"),
        _bound_pvc("c1", "pv-new"),
    ]
    _check(_case(objects, _claim("c1")), expected)


def _cycle_error(case: dict, wrapped: str) -> None:
    """Verdict's placement fails the cycle with ``wrapped``; so does the real scheduler (the
    oracle prints the error instead of an answer)."""
    assert verdict_placement(case)["cycleError"] == wrapped
    if BINARY.exists():
        assert placement_differences(case) == []


@pytest.mark.parametrize(
    ("pv_source", "labels", "message"),
    [
        (
            {"gcePersistentDisk": {"pdName": "d1"}},
            {GA: "bad__zone"},
            "could not translate pv: failed to get region from zones: zone in unexpected "
            "format, expected: {locale}-{region}-{zone}, got: bad",
        ),
        (
            {"awsElasticBlockStore": {"volumeID": "aws://z/notvol"}},
            {},
            "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID "
            "Invalid format for AWS volume (aws://z/notvol)",
        ),
    ],
)
def test_a_migrated_pv_the_translator_refuses_is_an_error_of_volume_binding(
    pv_source, labels, message
) -> None:
    """tryTranslatePVToCSI's error fails FindPodVolumes: the filter answers Error (the real
    scheduler aborts the cycle: the oracle prints the error instead of an answer)."""
    objects = [
        node("n1", labels={GA: "us-central1-a"}),
        _csinode("n1", migrated="kubernetes.io/gce-pd,kubernetes.io/aws-ebs"),
        _k8s_pv("pv-in", pv_source, labels=labels, claim="c1"),
        _bound_pvc("c1", "pv-in"),
    ]
    case = _case(objects, _claim("c1"))
    assert _answer(case) == (False, "VolumeBinding", "Error", [message])
    _cycle_error(case, f'running "VolumeBinding" filter plugin: {message}')


def test_an_inline_ebs_disk_the_translator_refuses_is_an_error_of_node_volume_limits() -> None:
    objects = [node("n1"), _csinode("n1", [(EBS, 5)])]
    case = _case(objects, {"name": "x", "awsElasticBlockStore": {"volumeID": "aws://z/notvol"}})
    message = (
        "converting volume(x) from inline to csi: failed to translate Kubernetes ID to EBS "
        "Volume ID Invalid format for AWS volume (aws://z/notvol)"
    )
    assert _answer(case) == (False, "NodeVolumeLimits", "Error", [message])
    _cycle_error(case, f'running "NodeVolumeLimits" filter plugin: {message}')


@pytest.mark.parametrize(
    ("claim_class", "volume_class", "pre_bound", "expected"),
    [
        (None, None, False, FITS),
        ("gold", None, False, NO_PV),
        (None, "gold", False, NO_PV),
        ("gold", "gold", False, FITS),
        ("gold", "silver", False, NO_PV),
        ("gold", None, True, NO_PV),  # even the volume pre-bound to the claim
        ("gold", "gold", True, FITS),
    ],
)
def test_find_matching_volume_compares_volume_attributes_class_names(
    claim_class, volume_class, pre_bound, expected
) -> None:
    """FindMatchingVolume with the VolumeAttributesClass gate on (GA, 1.35's default)."""
    local = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "local"},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    zone = [{"matchExpressions": [{"key": GA, "operator": "In", "values": ["z1"]}]}]
    volume = _k8s_pv(
        "pv-a", {"local": {"path": "/x"}}, affinity=zone, claim="c1" if pre_bound else None
    )
    volume["status"]["phase"] = "Available"
    volume["spec"]["storageClassName"] = "local"
    if volume_class:
        volume["spec"]["volumeAttributesClassName"] = volume_class
    claim = _bound_pvc("c1", "")
    del claim["metadata"]["annotations"]
    claim["spec"]["storageClassName"] = "local"
    claim["status"]["phase"] = "Pending"
    if claim_class:
        claim["spec"]["volumeAttributesClassName"] = claim_class
    objects = [node("n1", labels={GA: "z1"}), local, volume, claim]
    _check(_case(objects, _claim("c1")), expected)


def test_a_filter_error_fails_the_cycle_before_preemption() -> None:
    """findNodesThatFitPod returns the Error, not a FitError: PostFilter never runs, even
    though the other node is only full (where preemption could help)."""
    message = (
        "converting volume(x) from inline to csi: failed to translate Kubernetes ID to EBS "
        "Volume ID Invalid format for AWS volume (aws://z/notvol)"
    )
    low = pod("low", "n2", cpu="4")
    low["spec"]["priority"] = 0
    objects = [node("n1"), _csinode("n1", [(EBS, 5)]), node("n2", cpu="4"), low]
    case = _case(objects, {"name": "x", "awsElasticBlockStore": {"volumeID": "aws://z/notvol"}})
    case["kind"] = "preemption"
    case["pod"]["spec"]["priority"] = 1000
    cluster = Cluster(snapshot_from_objects(case["objects"]))
    out = preempt(
        cluster, admit_priority(pod_from_object(case["pod"]), cluster), settings=DEFAULT_SETTINGS
    )
    assert out.cycle_error is not None
    assert out.cycle_error.message == f'running "NodeVolumeLimits" filter plugin: {message}'
    assert (out.candidates, out.victims, out.nominated_node_name) == ([], [], None)
    if BINARY.exists():
        assert preemption_differences(case) == []


@pytest.mark.parametrize("nominated", [None, "n2"])
def test_an_error_on_one_node_fails_the_cycle_unless_the_nominated_node_passes(nominated):
    """n2 fits, yet n1's Error fails the cycle (findNodesThatPassFilters cancels on it)...
    unless the pod is nominated to n2: evaluateNominatedNode takes it before any other node
    is filtered."""
    objects = [node("n1"), _csinode("n1", [(EBS, 5)]), node("n2")]
    case = _case(objects, {"name": "x", "awsElasticBlockStore": {"volumeID": "aws://z/notvol"}})
    if nominated:
        case["pod"]["status"] = {"phase": "Pending", "nominatedNodeName": nominated}
    mine = verdict_placement(case)
    if nominated:
        assert (mine["cycleError"], mine["selected"]) == (None, "n2")
    else:
        assert mine["cycleError"].startswith('running "NodeVolumeLimits" filter plugin: ')
        assert mine["selected"] is None
    cluster = Cluster(snapshot_from_objects(case["objects"]))
    out = preempt(
        cluster, admit_priority(pod_from_object(case["pod"]), cluster), settings=DEFAULT_SETTINGS
    )
    assert (out.cycle_error is None) == bool(nominated)
    assert bool(out.fits_without_preemption) == bool(nominated)
    # The oracle's driver filters every node even after the nominated one passes (it reports
    # both), so only the case without a nomination is its to answer.
    if BINARY.exists() and not nominated:
        assert placement_differences(case) == []
