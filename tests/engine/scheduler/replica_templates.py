"""Capacity templates made from a workload's pod (a copy of one of random_clusters' pods):
replicas that spread over zones or hosts, repel each other, keep to some zones or tolerate
the taints. Shared by the tests of capacity's fast paths against full cycles
(test_queue_incremental.py) and against the real scheduler (test_capacity_oracle.py)."""

from __future__ import annotations

import copy

from tests.engine.scheduler.random_clusters import TAINTS, ZONES

_ZONE = "topology.kubernetes.io/zone"
_HOST = "kubernetes.io/hostname"
_SPREAD = {
    "anyway": (_ZONE, "ScheduleAnyway"),
    "hard": (_ZONE, "DoNotSchedule"),
    "host-anyway": (_HOST, "ScheduleAnyway"),
    "host-hard": (_HOST, "DoNotSchedule"),
}
KINDS = ("as-is", *_SPREAD, "repel", "solo", "zonal", "tolerant")


def variant(template: dict, *kinds: str) -> dict:
    """A copy of the template changed by each of ``kinds`` in turn: ``as-is`` (unchanged);
    ``anyway`` / ``hard`` (one zone spread constraint over its own labels, ScheduleAnyway /
    DoNotSchedule, replacing its own) and ``host-anyway`` / ``host-hard`` (the same by
    hostname); ``repel`` (required anti-affinity by hostname, preferred by zone, replacing
    its affinity); ``solo`` (no pod affinity or anti-affinity: the group path's templates);
    ``zonal`` (required node affinity to two zones, preferred ssd disks); ``tolerant``
    (tolerates random_clusters' NoSchedule and NoExecute taints: the PreferNoSchedule ones
    still score)."""
    template = copy.deepcopy(template)
    for kind in kinds:
        _change(template, kind)
    return template


def _change(template: dict, kind: str) -> None:
    spec, labels = template["spec"], template["metadata"].setdefault("labels", {})
    labels.setdefault("app", "capacity")
    own = {"matchLabels": dict(labels)}
    if kind in _SPREAD:
        key, when = _SPREAD[kind]
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": key, "labelSelector": own, "whenUnsatisfiable": when}
        ]
    elif kind == "repel":
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": own, "topologyKey": _HOST}
                ],
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 50, "podAffinityTerm": {"labelSelector": own, "topologyKey": _ZONE}}
                ],
            }
        }
    elif kind == "solo":
        affinity = spec.get("affinity") or {}
        for field in ("podAffinity", "podAntiAffinity"):
            affinity.pop(field, None)
    elif kind == "zonal":
        zones = {"key": _ZONE, "operator": "In", "values": list(ZONES[:2])}
        ssd = {"key": "disk", "operator": "In", "values": ["ssd"]}
        spec.setdefault("affinity", {})["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [zones]}]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 30, "preference": {"matchExpressions": [ssd]}}
            ],
        }
    elif kind == "tolerant":
        keys = sorted({t["key"] for t in TAINTS if t["effect"] != "PreferNoSchedule"})
        spec["tolerations"] = [{"key": key, "operator": "Exists"} for key in keys]
    else:
        assert kind == "as-is", kind
