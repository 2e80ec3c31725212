"""In-tree volumes as CSI volumes, as k8s.io/csi-translation-lib (v1.35) translates those the
scheduler reads: GCE PD, AWS EBS, Azure Disk and Cinder (plugins/gce_pd.go, aws_ebs.go,
azure_disk.go, openstack_cinder.go, in_tree_volume.go). Written from upstream's behaviour,
checked against the real scheduler (tests/engine/scheduler/test_csi_translation.py).

Two readers: NodeVolumeLimits counts a migrated volume under its CSI driver with the
translated volume handle (CSILimits.getCSIDriverInfo, checkAttachableInlineVolume), and
VolumeBinding checks a bound migrated volume's translated node affinity
(volumeBinder.tryTranslatePVToCSI, checkBoundClaims)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from service.engine.objects import NodeSelectorRequirement, NodeSelectorTerm, PersistentVolume

ZONE_GA = "topology.kubernetes.io/zone"
REGION_GA = "topology.kubernetes.io/region"
ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
REGION_BETA = "failure-domain.beta.kubernetes.io/region"
MULTI_ZONE_DELIMITER = "__"  # labelMultiZoneDelimiter
UNSPECIFIED = "UNSPECIFIED"


@dataclass(frozen=True, slots=True)
class Migration:
    plugin: str  # the in-tree plugin's name (GetInTreePluginName)
    driver: str  # the CSI driver that supersedes it (GetCSIPluginName)
    topology_key: str | None  # the CSI zone key a PV's zones move to; None: not translated


# volume source (as the snapshot names it) -> its translator. Azure Disk's
# TranslateInTreePVToCSI leaves the node affinity as it is.
MIGRATIONS = {
    "gcePersistentDisk": Migration(
        "kubernetes.io/gce-pd", "pd.csi.storage.gke.io", "topology.gke.io/zone"
    ),
    "awsElasticBlockStore": Migration(
        "kubernetes.io/aws-ebs", "ebs.csi.aws.com", "topology.ebs.csi.aws.com/zone"
    ),
    "azureDisk": Migration("kubernetes.io/azure-disk", "disk.csi.azure.com", None),
    "cinder": Migration(
        "kubernetes.io/cinder",
        "cinder.csi.openstack.org",
        "topology.cinder.csi.openstack.org/zone",
    ),
}
DRIVER_OF_PLUGIN = {m.plugin: m.driver for m in MIGRATIONS.values()}


class TranslationError(Exception):
    """The translator refused the volume (upstream's error text)."""


_EBS_VOLUME = re.compile(r"^vol-[^/]*$")


def ebs_volume_id(kubernetes_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: "aws://<zone>/<id>", "aws:///<id>" or a bare id ->
    the EBS volume id; an aws:// URL whose path is not vol-... is an error."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    rest = kubernetes_id[len("aws://") :]
    slash = rest.find("/")
    path = rest[slash:] if slash >= 0 else ""
    for stop in ("?", "#"):
        path = path.split(stop, 1)[0]
    volume = path.strip("/")
    if not _EBS_VOLUME.match(volume):
        raise TranslationError(
            "failed to translate Kubernetes ID to EBS Volume ID "
            f"Invalid format for AWS volume ({kubernetes_id})"
        )
    return volume


def gce_region_from_zones(zones: list[str]) -> str:
    """getRegionFromZones (gce_pd.go): every zone is <locale>-<region>-<zone>, all in one
    region."""
    if not zones:
        raise TranslationError("no zones specified")
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(
                "zone in unexpected format, expected: {locale}-{region}-{zone}, got: " + zone
            )
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        listed = " ".join(sorted(regions))
        raise TranslationError(f"multiple or no regions gotten from zones, got: map[{listed}]")
    return regions.pop()


def _gce_pv_handle(pv: PersistentVolume) -> str:
    """gcePersistentDiskCSITranslator.TranslateInTreePVToCSI's volume id: the beta zone label
    (else the GA one) split on "__": one zone is zonal, several are a regional disk in their
    region, none is UNSPECIFIED."""
    label = pv.labels.get(ZONE_BETA) or pv.labels.get(ZONE_GA) or ""
    zones = label.split(MULTI_ZONE_DELIMITER)
    disk = pv.in_tree_disk
    if len(zones) == 1 and zones[0]:
        return f"projects/{UNSPECIFIED}/zones/{zones[0]}/disks/{disk}"
    if len(zones) > 1:
        try:
            region = gce_region_from_zones(zones)
        except TranslationError as exc:
            raise TranslationError(f"failed to get region from zones: {exc}") from None
        return f"projects/{UNSPECIFIED}/regions/{region}/disks/{disk}"
    return f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{disk}"


def pv_handle(pv: PersistentVolume) -> str:
    """The CSI volume handle TranslateInTreePVToCSI gives a migratable in-tree PV."""
    if pv.in_tree == "gcePersistentDisk":
        return _gce_pv_handle(pv)
    if pv.in_tree == "awsElasticBlockStore":
        return ebs_volume_id(pv.in_tree_disk)
    return pv.in_tree_disk  # Azure Disk's diskURI, Cinder's volumeID


def inline_handle(source: str, disk: str) -> str:
    """The CSI volume handle TranslateInTreeInlineVolumeToCSI gives an inline disk (a GCE PD
    inline knows no zone)."""
    if source == "gcePersistentDisk":
        return f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{disk}"
    if source == "awsElasticBlockStore":
        return ebs_volume_id(disk)
    return disk


def _has_key(terms: tuple[NodeSelectorTerm, ...] | None, key: str) -> bool:
    return any(r.key == key for t in terms or () for r in t.match_expressions)


def _topology_labels(pv: PersistentVolume) -> tuple[str, str]:
    """getTopologyLabel: GA zone/region keys if the node affinity uses the GA zone key, else
    beta if it uses the beta one, else by the PV's labels the same way; GA by default."""
    if _has_key(pv.node_affinity, ZONE_GA):
        return ZONE_GA, REGION_GA
    if _has_key(pv.node_affinity, ZONE_BETA):
        return ZONE_BETA, REGION_BETA
    if ZONE_GA in pv.labels:
        return ZONE_GA, REGION_GA
    if ZONE_BETA in pv.labels:
        return ZONE_BETA, REGION_BETA
    return ZONE_GA, REGION_GA


def _rekey(terms: tuple[NodeSelectorTerm, ...], old: str, new: str) -> tuple[NodeSelectorTerm, ...]:
    """replaceTopology: every requirement on ``old`` now on ``new``."""
    return tuple(
        NodeSelectorTerm(
            match_expressions=tuple(
                NodeSelectorRequirement(new, r.operator, r.values) if r.key == old else r
                for r in t.match_expressions
            ),
            match_fields=t.match_fields,
        )
        for t in terms
    )


def _values_of(terms: tuple[NodeSelectorTerm, ...] | None, key: str) -> bool:
    """Whether getTopologyValues finds any value under ``key``."""
    return any(r.values for t in terms or () for r in t.match_expressions if r.key == key)


def translated_node_affinity(
    pv: PersistentVolume, migration: Migration
) -> tuple[NodeSelectorTerm, ...] | None:
    """The required node affinity of TranslateInTreePVToCSI's PV
    (translateTopologyFromInTreeToCSI): zone requirements move to the driver's topology
    key; with none, the zone label's values (split on "__") become an In requirement on
    that key added to every term (one term when there were none); beta region
    requirements move to the GA region key."""
    terms = pv.node_affinity
    if migration.topology_key is None:
        return terms
    zone_label, region_label = _topology_labels(pv)
    if _values_of(terms, zone_label):
        terms = _rekey(terms or (), zone_label, migration.topology_key)
    elif zone_label in pv.labels:
        zones = sorted({z.strip() for z in pv.labels[zone_label].split("__") if z.strip()})
        if zones:  # addTopology; no valid zone is an error upstream ignores
            added = NodeSelectorRequirement(migration.topology_key, "In", tuple(zones))
            existing = terms or (NodeSelectorTerm(),)
            terms = tuple(
                NodeSelectorTerm(
                    match_expressions=(*t.match_expressions, added), match_fields=t.match_fields
                )
                for t in existing
            )
    if region_label == REGION_BETA and _values_of(terms, REGION_BETA):
        terms = _rekey(terms or (), REGION_BETA, REGION_GA)
    return terms
