"""What the scheduler's volume plugins read, kept at ingest: pods' volumes, PersistentVolumes,
PersistentVolumeClaims, StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities and
VolumeAttachments; the API server's validation and defaulting of them (422 naming the
field); and snapshots stored before these kinds were read still decode. Through POST
/v1/snapshots they are counted in the summary, and a malformed one stores nothing."""

from __future__ import annotations

import copy

import msgspec
import pytest

from service.engine import objects as m
from service.ingest.errors import IngestError
from service.ingest.kube import pod_from_object, snapshot_from_objects
from tests.conftest import kube_list, node, pod

PV = {
    "kind": "PersistentVolume",
    "metadata": {
        "name": "pv-1",
        "labels": {"topology.kubernetes.io/zone": "a"},
        "annotations": {"volume.beta.kubernetes.io/storage-class": "beta"},
    },
    "spec": {
        "capacity": {"storage": "10Gi"},
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "fast",
        "volumeMode": "Block",
        "claimRef": {"namespace": "db", "name": "data-0", "uid": "u-1"},
        "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
        "nodeAffinity": {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "topology.kubernetes.io/zone",
                                "operator": "In",
                                "values": ["a"],
                            }
                        ]
                    }
                ]
            }
        },
    },
    "status": {"phase": "Bound"},
}
PVC = {
    "kind": "PersistentVolumeClaim",
    "metadata": {
        "name": "data-0",
        "namespace": "db",
        "uid": "u-1",
        "annotations": {
            "pv.kubernetes.io/bind-completed": "yes",
            "volume.kubernetes.io/selected-node": "n1",
        },
        "ownerReferences": [{"kind": "Pod", "name": "p", "uid": "pod-uid", "controller": True}],
    },
    "spec": {
        "accessModes": ["ReadWriteOncePod"],
        "storageClassName": "fast",
        "volumeName": "pv-1",
        "resources": {"requests": {"storage": "1500Mi"}},
        "selector": {"matchLabels": {"tier": "db"}},
    },
    "status": {"phase": "Bound"},
}
SC = {
    "kind": "StorageClass",
    "metadata": {"name": "fast"},
    "provisioner": "ebs.csi.aws.com",
    "volumeBindingMode": "WaitForFirstConsumer",
    "allowedTopologies": [
        {"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["a"]}]}
    ],
}
CSINODE = {
    "kind": "CSINode",
    "metadata": {
        "name": "n1",
        "annotations": {
            "storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs,kubernetes.io/gce-pd"
        },
    },
    "spec": {
        "drivers": [
            {"name": "ebs.csi.aws.com", "nodeID": "i-1", "allocatable": {"count": 25}},
            {"name": "other", "nodeID": "i-1"},
        ]
    },
}
CSIDRIVER = {
    "kind": "CSIDriver",
    "metadata": {"name": "ebs.csi.aws.com"},
    "spec": {"storageCapacity": True},
}
CAPACITY = {
    "kind": "CSIStorageCapacity",
    "metadata": {"name": "cap", "namespace": "kube-system"},
    "storageClassName": "fast",
    "capacity": "100Gi",
    "maximumVolumeSize": "1Ti",
    "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}},
}
ATTACHMENT = {
    "kind": "VolumeAttachment",
    "metadata": {"name": "va"},
    "spec": {
        "attacher": "ebs.csi.aws.com",
        "nodeName": "n1",
        "source": {"persistentVolumeName": "pv-1"},
    },
}
ALL = [PV, PVC, SC, CSINODE, CSIDRIVER, CAPACITY, ATTACHMENT]

# The snapshot's counts of the storage kinds, as POST /v1/snapshots answers them.
STORAGE_COUNTS = (
    "persistentVolumes",
    "persistentVolumeClaims",
    "storageClasses",
    "csiNodes",
    "csiDrivers",
    "csiStorageCapacities",
    "volumeAttachments",
)


def test_storage_objects_keep_what_the_scheduler_reads() -> None:
    snap = snapshot_from_objects([node("n1"), *ALL])
    (pv,) = snap.persistent_volumes
    assert pv.storage_class == "beta"  # the beta annotation wins over spec
    assert (pv.capacity, pv.access_modes, pv.volume_mode, pv.phase) == (
        10 * 2**30,
        ("ReadWriteOnce",),
        "Block",
        "Bound",
    )
    assert (pv.claim_namespace, pv.claim_name, pv.claim_uid, pv.has_claim_ref) == (
        "db",
        "data-0",
        "u-1",
        True,
    )
    assert (pv.csi_driver, pv.csi_handle) == ("ebs.csi.aws.com", "vol-1")
    assert pv.node_affinity[0].match_expressions[0].values == ("a",)
    (pvc,) = snap.persistent_volume_claims
    assert (pvc.volume_name, pvc.bind_completed, pvc.selected_node) == ("pv-1", True, "n1")
    assert (pvc.request, pvc.access_modes, pvc.volume_mode) == (
        1500 * 2**20,
        ("ReadWriteOncePod",),
        "Filesystem",  # the API server's default
    )
    assert pvc.controller_uid == "pod-uid"
    assert pvc.selector == m.LabelSelector(match_labels={"tier": "db"})
    (sc,) = snap.storage_classes
    assert sc.volume_binding_mode == "WaitForFirstConsumer"
    assert sc.allowed_topologies[0].match_label_expressions[0].values == ("a",)
    (csi_node,) = snap.csi_nodes
    assert csi_node.drivers == (
        m.CSINodeDriver("ebs.csi.aws.com", 25),
        m.CSINodeDriver("other", None),
    )
    assert csi_node.migrated_plugins == ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd")
    assert snap.csi_drivers == (m.CSIDriver("ebs.csi.aws.com", True),)
    (cap,) = snap.csi_storage_capacities
    assert (cap.capacity, cap.maximum_volume_size) == (100 * 2**30, 2**40)
    assert snap.volume_attachments == (m.VolumeAttachment("va", "ebs.csi.aws.com", "n1", "pv-1"),)


def test_volume_attributes_class_names_are_kept() -> None:
    """FindMatchingVolume compares the claim's and the volume's volumeAttributesClassName
    (the VolumeAttributesClass objects themselves are not read by the scheduler)."""
    import copy

    pv, pvc = copy.deepcopy(PV), copy.deepcopy(PVC)
    pv["spec"]["volumeAttributesClassName"] = "gold"
    pvc["spec"]["volumeAttributesClassName"] = "silver.example.com"
    snap = snapshot_from_objects([node("n1"), pv, pvc])
    assert snap.persistent_volumes[0].volume_attributes_class == "gold"
    assert snap.persistent_volume_claims[0].volume_attributes_class == "silver.example.com"
    assert snapshot_from_objects([PV]).persistent_volumes[0].volume_attributes_class == ""


def test_a_storage_class_without_a_binding_mode_is_immediate() -> None:
    snap = snapshot_from_objects([{"kind": "StorageClass", "metadata": {"name": "s"}}])
    assert snap.storage_classes[0].volume_binding_mode == "Immediate"


def test_pods_keep_the_volumes_the_scheduler_reads() -> None:
    p = pod_from_object(
        pod(
            "p",
            volumes=[
                {
                    "name": "data",
                    "persistentVolumeClaim": {"claimName": "data-0", "readOnly": True},
                },
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                {"name": "gce", "gcePersistentDisk": {"pdName": "disk", "readOnly": True}},
                {"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-1"}},
                {"name": "rbd", "rbd": {"monitors": ["m1"], "pool": "p", "image": "i"}},
                {"name": "iscsi", "iscsi": {"iqn": "iqn.x", "targetPortal": "t", "lun": 0}},
                {"name": "cm", "configMap": {"name": "cm"}},
                {"name": "tmp", "emptyDir": {}},
            ],
        )
    )
    assert p.volumes == (
        m.PodVolume("data", "persistentVolumeClaim", claim_name="data-0", read_only=True),
        m.PodVolume("scratch", "ephemeral"),
        m.PodVolume("gce", "gcePersistentDisk", disk="disk", read_only=True),
        m.PodVolume("ebs", "awsElasticBlockStore", disk="vol-1"),
        m.PodVolume("rbd", "rbd", disk="i", pool="p", monitors=("m1",)),
        m.PodVolume("iscsi", "iscsi", disk="iqn.x"),
    )


def _bad(obj: dict, mutate) -> list[str]:
    import copy

    changed = copy.deepcopy(obj)
    mutate(changed)
    with pytest.raises(IngestError) as err:
        snapshot_from_objects([node("n1"), changed])
    return [e.path for e in err.value.errors]


@pytest.mark.parametrize(
    ("obj", "mutate", "path"),
    [
        pytest.param(
            PV,
            lambda o: o["spec"]["capacity"].update(storage="10Qi"),
            "objects[1].spec.capacity.storage",
            id="pv-malformed-capacity",
        ),
        pytest.param(
            PV,
            lambda o: o["spec"].update(accessModes=["ReadWriteSometimes"]),
            "objects[1].spec.accessModes[0]",
            id="pv-unknown-access-mode",
        ),
        pytest.param(
            PV,
            lambda o: o["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0][
                "matchExpressions"
            ][0].update(operator="Near"),
            "objects[1].spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator",
            id="pv-node-affinity-operator",
        ),
        pytest.param(
            PV,
            lambda o: o["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0][
                "matchExpressions"
            ][0].pop("values"),
            "objects[1].spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values",
            id="pv-node-affinity-in-without-values",
        ),
        pytest.param(
            PV,
            lambda o: o["spec"]["nodeAffinity"]["required"].update(nodeSelectorTerms=[]),
            "objects[1].spec.nodeAffinity.required.nodeSelectorTerms",
            id="pv-no-terms",
        ),
        pytest.param(
            PV,
            lambda o: o["spec"].update(volumeMode="Tape"),
            "objects[1].spec.volumeMode",
            id="pv-volume-mode",
        ),
        pytest.param(
            PV,
            lambda o: o["spec"].update(volumeAttributesClassName="Gold_Class"),
            "objects[1].spec.volumeAttributesClassName",
            id="pv-attributes-class-name",
        ),
        pytest.param(
            PVC,
            lambda o: o["spec"].update(volumeAttributesClassName="-gold"),
            "objects[1].spec.volumeAttributesClassName",
            id="pvc-attributes-class-name",
        ),
        pytest.param(
            PVC,
            lambda o: o["spec"]["resources"]["requests"].update(storage="-1Gi"),
            "objects[1].spec.resources.requests.storage",
            id="pvc-negative-request",
        ),
        pytest.param(
            PVC,
            lambda o: o["spec"].update(accessModes=["RWO"]),
            "objects[1].spec.accessModes[0]",
            id="pvc-unknown-access-mode",
        ),
        pytest.param(
            PVC,
            lambda o: o["spec"].update(
                selector={"matchExpressions": [{"key": "k", "operator": "Is"}]}
            ),
            "objects[1].spec.selector.matchExpressions[0].operator",
            id="pvc-selector",
        ),
        pytest.param(
            SC,
            lambda o: o.update(volumeBindingMode="Eventually"),
            "objects[1].volumeBindingMode",
            id="unknown-binding-mode",
        ),
        pytest.param(
            CAPACITY,
            lambda o: o.update(capacity="lots"),
            "objects[1].capacity",
            id="capacity-malformed",
        ),
        pytest.param(
            CSINODE,
            lambda o: o["spec"]["drivers"][0]["allocatable"].update(count=-1),
            "objects[1].spec.drivers[0].allocatable.count",
            id="csinode-negative-count",
        ),
        pytest.param(
            PVC,
            lambda o: o["metadata"].pop("name"),
            "objects[1].metadata.name",
            id="pvc-without-name",
        ),
    ],
)
def test_bad_storage_objects_name_the_field(obj, mutate, path) -> None:
    assert path in _bad(obj, mutate)


def test_duplicate_claims_in_one_namespace_are_refused() -> None:
    other_namespace = {**PVC, "metadata": {**PVC["metadata"], "namespace": "other"}}
    snapshot_from_objects([PVC, other_namespace])  # the same name elsewhere is fine
    with pytest.raises(IngestError) as err:
        snapshot_from_objects([PVC, PVC])
    assert err.value.errors[0].path == "objects[1].metadata.name"


def test_a_snapshot_stored_before_the_storage_kinds_still_decodes() -> None:
    """A snapshot encoded without the new fields (an older version's msgpack) decodes
    with none of them: every new field has a default."""

    class OldPod(msgspec.Struct, omit_defaults=True):
        namespace: str
        name: str
        unmodelled: tuple[str, ...] = ()

    class OldSnapshot(msgspec.Struct, omit_defaults=True):
        nodes: tuple[m.Node, ...] = ()
        pods: tuple[OldPod, ...] = ()

    old = msgspec.msgpack.encode(
        OldSnapshot((m.Node("n1"),), (OldPod("default", "p", ("VolumeBinding",)),))
    )
    snap = msgspec.msgpack.decode(old, type=m.Snapshot)
    assert snap.pods[0].volumes == ()
    assert snap.persistent_volumes == () and snap.volume_attachments == ()


def _cluster() -> dict:
    return kube_list(node("n1"), pod("a", "n1", cpu="100m"), *copy.deepcopy(ALL))


def test_storage_objects_are_counted(api) -> None:
    response = api.post("/v1/snapshots", json=_cluster(), role="decide")
    assert response.status_code == 201, response.json
    counts = response.json["counts"]
    assert {key: counts[key] for key in STORAGE_COUNTS} == dict.fromkeys(STORAGE_COUNTS, 1)
    assert (counts["nodes"], counts["pods"]) == (1, 1)


@pytest.mark.parametrize(
    ("index", "mutate", "path"),
    [
        (
            2,
            lambda o: o["spec"]["capacity"].update(storage="ten"),
            "items[2].spec.capacity.storage",
        ),
        (
            3,
            lambda o: o["spec"].update(accessModes=["ReadWriteSome"]),
            "items[3].spec.accessModes[0]",
        ),
        (4, lambda o: o.update(volumeBindingMode="Later"), "items[4].volumeBindingMode"),
        (
            2,
            lambda o: o["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0][
                "matchExpressions"
            ][0].update(operator="Gt", values=["x"]),
            "items[2].spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values",
        ),
        (
            3,
            lambda o: o["spec"].update(volumeAttributesClassName="Gold"),
            "items[3].spec.volumeAttributesClassName",
        ),
    ],
    ids=[
        "pv-quantity",
        "pvc-access-mode",
        "binding-mode",
        "pv-node-affinity",
        "pvc-attributes-class",
    ],
)
def test_bad_storage_objects_are_422_and_store_nothing(api, index, mutate, path) -> None:
    cluster = _cluster()
    mutate(cluster["items"][index])
    response = api.post("/v1/snapshots", json=cluster, role="decide")
    assert response.status_code == 422
    assert response.headers["Content-Type"] == "application/problem+json"
    assert path in [e["path"] for e in response.json["errors"]]
    assert api.get("/v1/snapshots", role="read").json["items"] == []
