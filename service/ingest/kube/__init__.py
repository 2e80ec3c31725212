"""Kubernetes objects → the engine's normalized model, once, at the edge, one module per
family of objects: ``pods``, ``nodes`` (with Leases and the kubelet's Summary stats),
``workloads`` (PDBs, PriorityClasses, Namespaces, Services, workload controllers),
``storage`` (the volume plugins' kinds), ``resource`` (resource.k8s.io, DynamicResources'), the ``selectors`` they share, ``decode`` (JSON into
the wire structs, quantities, the Interner) and ``builder`` (the tables of kinds and the
SnapshotBuilder).

The API server's defaulting that matters for decisions is applied here (a container limit
without a request gets the request), quantities become base-unit integers, and every problem
is reported with the path of the offending field. Nothing downstream sees raw JSON. The names
other packages read are exported here.
"""

from service.ingest.kube.builder import SnapshotBuilder, snapshot_from_objects
from service.ingest.kube.decode import convert_object, decode_json
from service.ingest.kube.nodes import node_from_object, node_stats
from service.ingest.kube.pods import pod_from_object
from service.ingest.kube.selectors import node_selector_term, preferred_terms

__all__ = [
    "SnapshotBuilder",
    "convert_object",
    "decode_json",
    "node_from_object",
    "node_selector_term",
    "node_stats",
    "pod_from_object",
    "preferred_terms",
    "snapshot_from_objects",
]
