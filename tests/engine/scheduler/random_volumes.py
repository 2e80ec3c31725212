"""Volumes for the random clusters of the differential tests (random_clusters.py calls
``add_volumes``): StatefulSet pods claiming zonal volumes, as a cluster on a cloud runs them.

What varies: StorageClasses binding WaitForFirstConsumer (a CSI provisioner, some with
allowed topologies, one with capacity tracking) or Immediate, and local volumes without a
provisioner; CSINodes with an attach limit on some nodes (others without a limit, or none),
most of them listing aws-ebs among the kubelet's migrated plugins, and half the nodes carrying
the EBS CSI driver's own zone label; bound pods holding zonal volumes (older ones labelled
with their zone but without node affinity, which VolumeZone checks), about a third of them
in-tree EBS volumes (aws://zone/vol-..., aws:///vol-... or bare ids) that the scheduler
reads as migrated to CSI, bound to their claims (some ReadWriteOncePod), with
VolumeAttachments (of in-tree PVs too, which are not counted); inline in-tree EBS disks on a
quarter of them, most with the VolumeAttachment of their translated inlineVolumeSpec (not
counted); and an incoming pod that claims a bound zonal volume (CSI or in-tree), an unbound
WaitForFirstConsumer claim (matched to available local or zonal volumes, or provisioned), a
ReadWriteOncePod claim another pod holds, a generic ephemeral volume, or (rarely) a claim
that does not exist or binds Immediate, sometimes with an inline EBS disk.

Bound claims carry ``spec.volumeName`` and the PV controller's bind-completed annotation,
as docs/ORACLES.md asks. A separate random stream (seeded from the case's seed) keeps
the rest of a case as random_clusters.py draws it.
"""

from __future__ import annotations

import random

EBS = "ebs.csi.aws.com"
ZONE = "topology.kubernetes.io/zone"
EBS_ZONE = "topology.ebs.csi.aws.com/zone"  # the zone key EBS's CSI translation uses
MIGRATED = "storage.alpha.kubernetes.io/migrated-plugins"
MIGRATED_LISTS = ("kubernetes.io/aws-ebs", "kubernetes.io/aws-ebs,kubernetes.io/gce-pd")
HOSTNAME = "kubernetes.io/hostname"
BOUND = {"pv.kubernetes.io/bind-completed": "yes"}
SIZES = ("1Gi", "5Gi", "10Gi", "20Gi")


def _class(name: str, mode: str, provisioner: str, topology: list[str] | None = None) -> dict:
    out: dict = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
        "reclaimPolicy": "Delete",
    }
    if topology:
        out["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": topology}]}]
    return out


def _pvc(name: str, sc: str, size: str, *, volume: str = "", modes=("ReadWriteOnce",)) -> dict:
    meta: dict = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if volume:
        meta["annotations"] = dict(BOUND)
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": {
            "accessModes": list(modes),
            "resources": {"requests": {"storage": size}},
            "storageClassName": sc,
            "volumeMode": "Filesystem",
            "volumeName": volume,
        },
        "status": {"phase": "Bound" if volume else "Pending"},
    }


def _pv(
    name: str,
    sc: str,
    size: str,
    *,
    zone: str | None = None,
    host: str | None = None,
    claim: str | None = None,
    modes=("ReadWriteOnce",),
    csi: bool = True,
    labels_only: bool = False,
    in_tree: dict | None = None,
) -> dict:
    spec: dict = {
        "capacity": {"storage": size},
        "accessModes": list(modes),
        "storageClassName": sc,
        "volumeMode": "Filesystem",
        "persistentVolumeReclaimPolicy": "Delete",
    }
    if in_tree is not None:
        spec.update(in_tree)
    elif csi:
        spec["csi"] = {"driver": EBS, "volumeHandle": f"vol-{name}"}
    else:
        spec["local"] = {"path": f"/mnt/{name}"}
    labels = {}
    if zone is not None:
        labels[ZONE] = zone
    if zone is not None and not labels_only:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
                ]
            }
        }
    if host is not None:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [host]}]}
                ]
            }
        }
    if claim is not None:
        spec["claimRef"] = {"namespace": "default", "name": claim, "uid": f"uid-{claim}"}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {"phase": "Bound" if claim else "Available"},
    }


def _attachment(pv: str, node: str, inline: dict | None = None) -> dict:
    """A VolumeAttachment of a PV, or (``inline``) of an inline volume migrated to CSI, as
    the attach/detach controller creates it: its source is the translated inlineVolumeSpec."""
    source = {"inlineVolumeSpec": inline} if inline is not None else {"persistentVolumeName": pv}
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": f"va-{pv}-{node}"},
        "spec": {"attacher": EBS, "nodeName": node, "source": source},
        "status": {"attached": True},
    }


def _ebs_id(rng: random.Random, zone: str, name: str) -> str:
    """An in-tree EBS volumeID in one of the forms KubernetesVolumeIDToEBSVolumeID takes."""
    return rng.choice((f"aws://{zone}/vol-{name}", f"aws:///vol-{name}", f"vol-{name}"))


def _in_tree_ebs(rng: random.Random, zone: str, name: str) -> dict:
    return {"awsElasticBlockStore": {"volumeID": _ebs_id(rng, zone, name), "fsType": "ext4"}}


def _claim_volume(claim: str) -> dict:
    return {"name": f"vol-{claim}", "persistentVolumeClaim": {"claimName": claim}}


def _statefulset_owner(name: str) -> list[dict]:
    return [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": name,
            "uid": f"sts-{name}",
            "controller": True,
        }
    ]


def add_volumes(seed: int, objects: list[dict], incoming: dict) -> None:
    """Add storage objects to a random case and volumes to its pods, in place."""
    rng = random.Random(f"volumes-{seed}")
    nodes = [o for o in objects if o["kind"] == "Node"]
    zone_of = {n["metadata"]["name"]: n["metadata"]["labels"][ZONE] for n in nodes}
    zones = sorted(set(zone_of.values()))
    storage: list[dict] = [
        _class("gp3", "WaitForFirstConsumer", EBS),
        _class("gp3-some-zones", "WaitForFirstConsumer", EBS, rng.sample(zones, 1)),
        _class("standard", "Immediate", EBS),
        _class("local", "WaitForFirstConsumer", "kubernetes.io/no-provisioner"),
        _class("tracked", "WaitForFirstConsumer", "tracked.csi.example.com"),
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "db"}}},
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"name": "tracked.csi.example.com"},
            "spec": {"storageCapacity": True, "attachRequired": False},
        },
    ]
    for zone in rng.sample(zones, rng.randint(0, len(zones))):
        storage.append(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSIStorageCapacity",
                "metadata": {"name": f"cap-{zone}", "namespace": "kube-system"},
                "storageClassName": "tracked",
                "capacity": rng.choice(("4Gi", "50Gi")),
                "nodeTopology": {"matchLabels": {ZONE: zone}},
            }
        )
    migrated_zones: list[str] = []  # the zone of each node whose CSINode migrated aws-ebs
    for n in nodes:
        name = n["metadata"]["name"]
        if rng.random() < 0.5:  # the EBS CSI node plugin's own zone label
            n["metadata"]["labels"][EBS_ZONE] = zone_of[name]
        roll = rng.random()
        if roll < 0.6:
            limit = {"count": rng.randint(1, 3)} if roll < 0.45 else None
            driver: dict = {"name": EBS, "nodeID": f"i-{name}", "topologyKeys": [EBS_ZONE]}
            if limit is not None:
                driver["allocatable"] = limit
            meta: dict = {"name": name}
            if rng.random() < 0.6:  # the kubelet lists the in-tree plugins it migrated
                meta["annotations"] = {MIGRATED: rng.choice(MIGRATED_LISTS)}
                migrated_zones.append(zone_of[name])
            storage.append(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "CSINode",
                    "metadata": meta,
                    "spec": {"drivers": [driver]},
                }
            )
    # bound pods: a share are StatefulSet replicas holding a zonal volume on their node
    held: list[tuple[str, str]] = []  # (claim, node) of ReadWriteOncePod claims in use
    inline_attached: set[tuple[str, str]] = set()  # (inline disk, node) with an attachment
    for pod in (o for o in objects if o["kind"] == "Pod" and o["spec"].get("nodeName")):
        if pod["metadata"]["namespace"] != "default" or rng.random() > 0.4:
            continue
        node = pod["spec"]["nodeName"]
        claim = f"data-{pod['metadata']['name']}"
        modes = ("ReadWriteOncePod",) if rng.random() < 0.3 else ("ReadWriteOnce",)
        pv = f"pv-{claim}"
        zone = zone_of[node]
        in_tree = _in_tree_ebs(rng, zone, pv) if rng.random() < 0.3 else None
        storage += [
            _pvc(claim, "gp3", "10Gi", volume=pv, modes=modes),
            _pv(
                pv,
                "gp3",
                "10Gi",
                zone=zone,
                claim=claim,
                modes=modes,
                in_tree=in_tree,
                labels_only=in_tree is not None and rng.random() < 0.5,
            ),
        ]
        if rng.random() < 0.7:  # of an in-tree PV too: not counted (no CSI source)
            storage.append(_attachment(pv, node))
        pod["metadata"]["ownerReferences"] = _statefulset_owner("db")
        pod["spec"].setdefault("volumes", []).append(_claim_volume(claim))
        if modes[0] == "ReadWriteOncePod":
            held.append((claim, node))
        if rng.random() < 0.25:  # an inline EBS disk, migrated: counted under ebs.csi.aws.com
            disk_name = f"inline-{rng.randint(0, 2)}"
            disk = {"volumeID": _ebs_id(rng, zone, disk_name)}
            pod["spec"]["volumes"].append({"name": "inline", "awsElasticBlockStore": disk})
            # its VolumeAttachment's inlineVolumeSpec (not counted): one per disk and node,
            # as the attach/detach controller names it by driver, handle and node
            if rng.random() < 0.7 and (disk_name, node) not in inline_attached:
                inline_attached.add((disk_name, node))
                translated = {
                    "csi": {"driver": EBS, "volumeHandle": f"vol-{disk_name}"},
                    "accessModes": ["ReadWriteOnce"],
                }
                storage.append(_attachment(disk_name, node, inline=translated))
    # spare volumes a WaitForFirstConsumer claim may bind to
    for i in range(rng.randint(0, 4)):
        if rng.random() < 0.5:
            host = rng.choice(nodes)["metadata"]["name"]
            storage.append(_pv(f"local-{i}", "local", rng.choice(SIZES), host=host, csi=False))
        else:
            storage.append(_pv(f"spare-{i}", "gp3", rng.choice(SIZES), zone=rng.choice(zones)))
    _claim_for_incoming(rng, incoming, storage, zones, held, migrated_zones)
    objects.extend(storage)


def _claim_for_incoming(
    rng: random.Random,
    incoming: dict,
    storage: list[dict],
    zones: list[str],
    held: list[tuple[str, str]],
    migrated_zones: list[str],
) -> None:
    """Give the incoming pod its volumes (a StatefulSet replica most of the time)."""
    volumes = incoming["spec"].setdefault("volumes", [])
    incoming["metadata"]["ownerReferences"] = _statefulset_owner("db")
    roll = rng.random()
    if roll < 0.35:  # a replica coming back to its bound zonal volume
        zone = rng.choice(zones)
        # an in-tree EBS volume half the time: where the node's CSINode lists the plugin as
        # migrated, its zone is read under the CSI driver's topology key (mostly a zone
        # where such a node is, so that the translation decides)
        in_tree = None
        if rng.random() < 0.5:
            if migrated_zones and rng.random() < 0.7:
                zone = rng.choice(migrated_zones)
            in_tree = _in_tree_ebs(rng, zone, "db-0")
        storage += [
            _pvc("data-db-0", "gp3", "10Gi", volume="pv-data-db-0"),
            _pv(
                "pv-data-db-0",
                "gp3",
                "10Gi",
                zone=zone,
                claim="data-db-0",
                labels_only=rng.random() < 0.4,  # an older volume: zone label, no affinity
                in_tree=in_tree,
            ),
        ]
        volumes.append(_claim_volume("data-db-0"))
    elif roll < 0.65:  # a new replica: an unbound WaitForFirstConsumer claim
        sc = rng.choice(("gp3", "gp3-some-zones", "local", "tracked"))
        storage.append(_pvc("data-db-0", sc, rng.choice(SIZES)))
        volumes.append(_claim_volume("data-db-0"))
    elif roll < 0.8 and held:  # a claim another pod holds ReadWriteOncePod
        claim, _ = rng.choice(held)
        volumes.append(_claim_volume(claim))
    elif roll < 0.9:  # a generic ephemeral volume, its claim created for the pod
        volumes.append({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}})
        claim = _pvc("incoming-scratch", "gp3", "1Gi")
        claim["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": "incoming",
                "uid": "uid-incoming",
                "controller": True,
            }
        ]
        storage.append(claim)
    elif roll < 0.95:
        volumes.append(_claim_volume("missing"))
    else:
        storage.append(_pvc("data-db-0", "standard", "1Gi"))
        volumes.append(_claim_volume("data-db-0"))
    if rng.random() < 0.2:
        disk = {"volumeID": _ebs_id(rng, rng.choice(zones), f"inline-{rng.randint(0, 2)}")}
        volumes.append({"name": "inline", "awsElasticBlockStore": disk})
