"""A node's zone, read from its labels in the two ways Verdict needs, each named for its use.

A node normally carries both zone labels with the same value: the kubelet sets the GA
``topology.kubernetes.io/zone`` and the deprecated ``failure-domain.beta.kubernetes.io/zone``
from the same cloud zone (pkg/kubelet/kubelet_node_status.go, initialNode). They differ only
when someone relabels a node by hand, and then the two readings disagree on purpose:

- ``zone_key`` / ``zone_key_parts``: how the node lifecycle controller groups nodes into
  zones, component-helpers node/topology GetZoneKey (k8s 1.35). It still reads the beta
  labels first, and a present beta key wins even when its value is empty.
- ``zone_label``: the zone shown for a node (GET /v1/snapshots/{id}/nodes): the GA label,
  as the well-known labels reference names it, with the beta label only for a node whose GA
  label is missing or empty (nodes labelled before v1.17).
"""

from __future__ import annotations

from collections.abc import Mapping

LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"


def zone_label(labels: Mapping[str, str]) -> str:
    """The zone shown for a node: the first non-empty of the GA and the beta zone label."""
    return labels.get(LABEL_TOPOLOGY_ZONE) or labels.get(LABEL_FAILURE_DOMAIN_BETA_ZONE) or ""


def zone_key_parts(labels: Mapping[str, str]) -> tuple[str, str]:
    """(region, zone) as GetZoneKey reads them: each taken from the legacy
    failure-domain.beta label when that key is present (even empty), else from the
    topology.kubernetes.io label, else ""."""
    zone = labels.get(LABEL_FAILURE_DOMAIN_BETA_ZONE)
    if zone is None:
        zone = labels.get(LABEL_TOPOLOGY_ZONE, "")
    region = labels.get(LABEL_FAILURE_DOMAIN_BETA_REGION)
    if region is None:
        region = labels.get(LABEL_TOPOLOGY_REGION, "")
    return region, zone


def zone_key(labels: Mapping[str, str] | None) -> str:
    """topology.GetZoneKey (component-helpers, k8s 1.35): region + ":\\x00:" + zone, or ""
    when both parts are empty (and for a node without labels)."""
    if not labels:
        return ""
    region, zone = zone_key_parts(labels)
    if region == "" and zone == "":
        return ""
    return region + ":\x00:" + zone
