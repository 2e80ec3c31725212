"""Volumes for the synthetic cluster: ``python -m bench.generate ... --volumes``.

The cluster of ``bench.generate`` with about a fifth of its pods in StatefulSets, each
replica claiming a zonal EBS volume bound to it, as a cluster on AWS runs them:

* StatefulSets are drawn for half of the application workloads instead of 8 %, which puts
  about 20 % of all pods in them (measured: see bench/RESULTS.md, issue 18);
* every replica's claim ``<template>-<pod>`` (the name the pod already uses) is bound
  (``spec.volumeName`` and the PV controller's bind-completed annotation) to a gp3 volume of
  the ebs.csi.aws.com driver in the zone of the replica's node (a pending replica's volume
  sits in a zone of its own choosing), with the zone labels and node affinity the driver
  sets, and a VolumeAttachment on the node running it;
* the StorageClass gp3 (WaitForFirstConsumer) and the CSIDriver;
* a CSINode for every node: 90 % with the driver's attach limit (25, 27 or 39, as Nitro
  instance types report), the rest without one.

Every random choice comes from a ``random.Random`` seeded from ``--seed``, as in
``bench.generate``; the storage objects follow its items.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from bench.generate.cluster import Cluster

__all__ = ["STATEFULSET_SHARE", "VolumeCluster"]

STATEFULSET_SHARE = 0.5
EBS = "ebs.csi.aws.com"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
CLASS = "gp3"
ATTACH_LIMITS = (25, 27, 39)
SIZES = ("10Gi", "20Gi", "50Gi", "100Gi")


class VolumeCluster(Cluster):
    """The cluster plan with more StatefulSets, and their storage rendered after the other
    items (so that every other object stays as the plain cluster renders it)."""

    statefulset_share = STATEFULSET_SHARE

    def items(self) -> Iterator[dict]:
        """The plain cluster's items, then the storage objects."""
        yield from super().items()
        yield from storage_items(self)


def storage_items(cluster: Cluster) -> Iterator[dict]:
    """The StorageClass, the CSIDriver, a CSINode per node, and per StatefulSet replica its
    claim, its volume and (on a node) its VolumeAttachment."""
    rng = random.Random(f"bench.generate/{cluster.seed}/volumes")
    yield {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": CLASS},
        "provisioner": EBS,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": True,
        "parameters": {"type": "gp3"},
    }
    yield {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": EBS},
        "spec": {"attachRequired": True, "podInfoOnMount": False, "storageCapacity": False},
    }
    for nd in cluster.nodes:
        driver: dict = {"name": EBS, "nodeID": nd.instance_id or nd.name, "topologyKeys": [ZONE]}
        if rng.random() < 0.9:
            driver["allocatable"] = {"count": rng.choice(ATTACH_LIMITS)}
        yield {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": nd.name},
            "spec": {"drivers": [driver]},
        }
    zones = sorted({(nd.region, nd.zone) for nd in cluster.nodes})
    for pod in cluster.pods:
        if pod.wl.kind != "StatefulSet":
            continue
        region, zone = (pod.node.region, pod.node.zone) if pod.node else rng.choice(zones)
        claim = f"{pod.wl.hash}-{pod.name}"
        volume = f"pvc-{pod.uid}"
        size = rng.choice(SIZES)
        yield _claim(pod.wl.ns, claim, volume, size)
        yield _volume(pod.wl.ns, claim, volume, size, region, zone, rng)
        if pod.node is not None:
            yield {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "VolumeAttachment",
                "metadata": {"name": f"csi-{volume}"},
                "spec": {
                    "attacher": EBS,
                    "nodeName": pod.node.name,
                    "source": {"persistentVolumeName": volume},
                },
                "status": {"attached": True},
            }


def _claim(namespace: str, name: str, volume: str, size: str) -> dict:
    """A PersistentVolumeClaim bound to ``volume``, as the PV controller leaves it."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{volume}",
            "annotations": {
                "pv.kubernetes.io/bind-completed": "yes",
                "pv.kubernetes.io/bound-by-controller": "yes",
                "volume.kubernetes.io/storage-provisioner": EBS,
            },
        },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": size}},
            "storageClassName": CLASS,
            "volumeMode": "Filesystem",
            "volumeName": volume,
        },
        "status": {
            "phase": "Bound",
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": size},
        },
    }


def _volume(
    namespace: str, claim: str, name: str, size: str, region: str, zone: str, rng: random.Random
) -> dict:
    """The EBS PersistentVolume bound to ``claim``, confined to ``zone`` by node affinity."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": name,
            "labels": {ZONE: zone, REGION: region},
            "annotations": {"pv.kubernetes.io/provisioned-by": EBS},
        },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": size},
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "name": claim,
                "namespace": namespace,
                "uid": f"uid-{name}",
            },
            "csi": {
                "driver": EBS,
                "fsType": "ext4",
                "volumeHandle": f"vol-{rng.getrandbits(68):017x}",
            },
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
                    ]
                }
            },
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": CLASS,
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Bound"},
    }
