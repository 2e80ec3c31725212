"""Nodes: a v1 Node → the model ``Node``, a node's Lease, and a node's kubelet Summary
stats."""

from __future__ import annotations

import msgspec

from service.engine import objects as m
from service.ingest import wire
from service.ingest.errors import IngestError
from service.ingest.kube.decode import convert_object, name_errors, require_name, resource_list


def to_node(raw: wire.Node, prefix: str = "") -> m.Node:
    meta, spec, status = raw.metadata, raw.spec, raw.status
    errors = name_errors(meta, "a node")
    formats: dict[str, str] = {}
    capacity_given: dict[str, str] = {}
    allocatable_given: dict[str, str] = {}
    capacity = resource_list(status.capacity, "status.capacity", errors, formats, capacity_given)
    allocatable = resource_list(
        status.allocatable, "status.allocatable", errors, formats, allocatable_given
    )
    if errors:
        raise IngestError(errors).prefixed(prefix)
    return m.Node(
        name=meta.name,
        uid=meta.uid,
        labels=meta.labels or {},
        unschedulable=spec.unschedulable,
        taints=tuple(
            m.Taint(key=t.key, value=t.value, effect=t.effect, time_added=t.time_added)
            for t in spec.taints or ()
        ),
        capacity=capacity,
        # Taken as reported: the scheduler and the kubelet read status.allocatable as is, and
        # a node without it fits nothing (NodeResourcesFit compares with zero), so Verdict does not invent one.
        allocatable=allocatable,
        conditions=tuple(
            m.NodeCondition(
                type=c.type,
                status=c.status,
                last_heartbeat_time=c.last_heartbeat_time,
                last_transition_time=c.last_transition_time,
                reason=c.reason,
            )
            for c in status.conditions or ()
        ),
        creation_timestamp=meta.creation_timestamp,
        formats=formats,
        capacity_given=capacity_given,
        allocatable_given=allocatable_given,
        images=tuple(
            m.ContainerImage(names=tuple(i.names or ()), size_bytes=i.size_bytes)
            for i in status.images or ()
        ),
    )


def node_from_object(obj: dict, prefix: str = "") -> m.Node:
    return to_node(convert_object(obj, wire.Node, prefix), prefix)


def to_lease(raw: wire.Lease, prefix: str = "") -> m.Lease:
    require_name(raw, "a Lease", prefix)
    return m.Lease(
        namespace=raw.metadata.namespace or "default",
        name=raw.metadata.name,
        holder_identity=raw.spec.holder_identity or "",
        renew_time=raw.spec.renew_time,
        lease_duration_seconds=raw.spec.lease_duration_seconds,
    )


def node_stats(node_name: str, raw: wire.Summary) -> m.NodeStats:
    """A node's Summary API object → the fields the eviction manager reads. The node's and
    the pods' stats are already the model's fields (the wire's twins); the few the model
    places differently are picked here, and msgspec.convert turns the twins into the
    model's own types."""
    node = raw.node
    pods_memory = None
    for container in node.system_containers or ():
        if container.name == "pods":
            pods_memory = container.memory
    runtime = node.runtime or wire.RuntimeStats()
    stats = {
        "node_name": node_name,
        "memory": node.memory,
        "fs": node.fs,
        "image_fs": runtime.image_fs,
        "container_fs": runtime.container_fs,
        "rlimit": node.rlimit,
        "allocatable_memory": pods_memory,
        "pods": [
            {
                "namespace": p.pod_ref.namespace,
                "name": p.pod_ref.name,
                "uid": p.pod_ref.uid,
                "containers": p.containers or (),
                "memory": p.memory,
                "volumes": [
                    m.VolumeStats(v.name, v.used_bytes, v.inodes_used, bool(v.pvc_ref))
                    for v in p.volume or ()
                ],
                "ephemeral_storage": p.ephemeral_storage,
                "process_count": p.process_stats.process_count if p.process_stats else None,
            }
            for p in raw.pods or ()
        ],
    }
    return msgspec.convert(stats, m.NodeStats, from_attributes=True)
