"""Storage kinds the scheduler's volume plugins read: PersistentVolumes and claims,
StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities, VolumeAttachments; and the
inline disk sources pods and PersistentVolumes share."""

from __future__ import annotations

from typing import Any

from service.engine import objects as m
from service.engine.quantity import QuantityError
from service.ingest import wire
from service.ingest.errors import FieldError, IngestError
from service.ingest.kube.decode import base_units, name_errors, require_name
from service.ingest.kube.selectors import label_selector, node_selector_term, requirement_errors
from service.ingest.names import dns1123_subdomain

BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
BIND_COMPLETED_ANNOTATION = "pv.kubernetes.io/bind-completed"
SELECTED_NODE_ANNOTATION = "volume.kubernetes.io/selected-node"
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"

_ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
_VOLUME_MODES = ("Block", "Filesystem")
_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
_NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")

# Inline disk sources (pod volumes and PersistentVolumes) -> the in-tree plugin's name, for
# those the scheduler reads (VolumeRestrictions' conflicts, CSI migration in
# NodeVolumeLimits).
DISK_SOURCES = (
    ("gce_persistent_disk", "gcePersistentDisk"),
    ("aws_elastic_block_store", "awsElasticBlockStore"),
    ("iscsi", "iscsi"),
    ("rbd", "rbd"),
    ("azure_disk", "azureDisk"),
    ("cinder", "cinder"),
)


def disk_id(source: str, raw: wire.DiskSource) -> str:
    """The field that names the disk of an inline source."""
    if source == "gcePersistentDisk":
        return raw.pd_name
    if source == "iscsi":
        return raw.iqn
    if source == "rbd":
        return raw.image
    if source == "azureDisk":
        return raw.disk_uri
    return raw.volume_id


def _storage_quantity(
    value: wire.QuantityValue | None, path: str, errors: list[FieldError]
) -> int | None:
    """A storage quantity in bytes (Quantity.Value, rounded up); None when absent."""
    if value is None:
        return None
    try:
        return base_units("storage", value)[0]
    except QuantityError as exc:
        errors.append(FieldError(path, f"invalid quantity {value!r}: {exc}"))
        return None


def _access_modes(raw: list[str] | None, path: str, errors: list[FieldError]) -> tuple[str, ...]:
    for i, mode in enumerate(raw or ()):
        if mode not in _ACCESS_MODES:
            errors.append(
                FieldError(
                    f"{path}[{i}]",
                    f'Unsupported value: "{mode}": supported values: '
                    + ", ".join(f'"{m_}"' for m_ in _ACCESS_MODES),
                )
            )
    return tuple(raw or ())


def _volume_mode(raw: str | None, path: str, errors: list[FieldError]) -> str:
    if raw is not None and raw not in _VOLUME_MODES:
        errors.append(
            FieldError(path, f'Unsupported value: "{raw}": supported values: "Block", "Filesystem"')
        )
    return raw or "Filesystem"


def _volume_node_affinity(
    raw: wire.VolumeNodeAffinity | None, path: str, errors: list[FieldError]
) -> tuple[m.NodeSelectorTerm, ...] | None:
    """A PersistentVolume's spec.nodeAffinity.required, validated as the API server does
    (ValidateNodeSelector: at least one term, known operators, the values each needs)."""
    if raw is None:
        return None
    if raw.required is None:
        errors.append(
            FieldError(f"{path}.required", "Required value: must specify required node constraints")
        )
        return None
    terms = raw.required.node_selector_terms or []
    where = f"{path}.required.nodeSelectorTerms"
    if not terms:
        errors.append(
            FieldError(where, "Required value: must have at least one node selector term")
        )
    for i, term in enumerate(terms):
        for kind, reqs in (
            ("matchExpressions", term.match_expressions),
            ("matchFields", term.match_fields),
        ):
            for j, req in enumerate(reqs or ()):
                requirement_errors(
                    req, f"{where}[{i}].{kind}[{j}]", _NODE_SELECTOR_OPERATORS, errors
                )
    return tuple(node_selector_term(t) for t in terms)


def _storage_class_of(meta: wire.Metadata, spec_class: str | None) -> str:
    """GetPersistentVolume(Claim)Class: the beta annotation wins over spec.storageClassName."""
    annotations = meta.annotations or {}
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return annotations[BETA_STORAGE_CLASS_ANNOTATION]
    return spec_class or ""


def _attributes_class(spec: Any, errors: list[FieldError]) -> str:
    """A volume's or a claim's spec.volumeAttributesClassName: a class name
    (ValidateClassName: a DNS-1123 subdomain) when set; "" when absent."""
    raw = spec.volume_attributes_class_name
    if raw:
        problem = dns1123_subdomain(raw)
        if problem is not None:
            path = "spec.volumeAttributesClassName"
            errors.append(FieldError(path, f'Invalid value: "{raw}": {problem}'))
    return raw or ""


def _modes(spec: Any, errors: list[FieldError]) -> tuple[tuple[str, ...], str]:
    """A volume's or a claim's spec.accessModes and spec.volumeMode."""
    access_modes = _access_modes(spec.access_modes, "spec.accessModes", errors)
    return access_modes, _volume_mode(spec.volume_mode, "spec.volumeMode", errors)


def to_persistent_volume(raw: wire.PersistentVolume, prefix: str = "") -> m.PersistentVolume:
    meta, spec = raw.metadata, raw.spec
    errors = name_errors(meta, "a PersistentVolume")
    capacity = _storage_quantity(
        (spec.capacity or {}).get("storage"), "spec.capacity.storage", errors
    )
    access_modes, volume_mode = _modes(spec, errors)
    affinity = _volume_node_affinity(spec.node_affinity, "spec.nodeAffinity", errors)
    attributes_class = _attributes_class(spec, errors)
    if errors:
        raise IngestError(errors).prefixed(prefix)
    in_tree = in_tree_disk = ""
    for attr, source in DISK_SOURCES:
        disk = getattr(spec, attr, None)
        if disk is not None:
            in_tree, in_tree_disk = source, disk_id(source, disk)
            break
    ref = spec.claim_ref
    return m.PersistentVolume(
        name=meta.name,
        labels=meta.labels or {},
        storage_class=_storage_class_of(meta, spec.storage_class_name),
        capacity=capacity,
        access_modes=access_modes,
        volume_mode=volume_mode,
        node_affinity=affinity,
        claim_namespace=ref.namespace if ref else "",
        claim_name=ref.name if ref else "",
        claim_uid=ref.uid if ref else "",
        has_claim_ref=ref is not None,
        phase=raw.status.phase,
        deleting=meta.deletion_timestamp is not None,
        csi_driver=spec.csi.driver if spec.csi else "",
        csi_handle=spec.csi.volume_handle if spec.csi else "",
        in_tree=in_tree,
        in_tree_disk=in_tree_disk,
        volume_attributes_class=attributes_class,
    )


def to_persistent_volume_claim(
    raw: wire.PersistentVolumeClaim, prefix: str = ""
) -> m.PersistentVolumeClaim:
    meta, spec = raw.metadata, raw.spec
    errors = name_errors(meta, "a PersistentVolumeClaim")
    requests = spec.resources.requests if spec.resources and spec.resources.requests else {}
    request = _storage_quantity(requests.get("storage"), "spec.resources.requests.storage", errors)
    access_modes, volume_mode = _modes(spec, errors)
    selector = label_selector(spec.selector, "spec.selector", errors)
    attributes_class = _attributes_class(spec, errors)
    if errors:
        raise IngestError(errors).prefixed(prefix)
    annotations = meta.annotations or {}
    controller = next((ref.uid for ref in meta.owner_references or () if ref.controller), "")
    return m.PersistentVolumeClaim(
        namespace=meta.namespace or "default",
        name=meta.name,
        uid=meta.uid,
        storage_class=_storage_class_of(meta, spec.storage_class_name),
        volume_name=spec.volume_name,
        bind_completed=BIND_COMPLETED_ANNOTATION in annotations,
        selected_node=annotations.get(SELECTED_NODE_ANNOTATION),
        access_modes=access_modes,
        volume_mode=volume_mode,
        request=request,
        selector=selector,
        phase=raw.status.phase,
        deleting=meta.deletion_timestamp is not None,
        controller_uid=controller,
        volume_attributes_class=attributes_class,
    )


def to_storage_class(raw: wire.StorageClass, prefix: str = "") -> m.StorageClass:
    errors = name_errors(raw.metadata, "a StorageClass")
    mode = raw.volume_binding_mode
    if mode is not None and mode not in _BINDING_MODES:
        errors.append(
            FieldError(
                "volumeBindingMode",
                f'Unsupported value: "{mode}": supported values: "Immediate", "WaitForFirstConsumer"',
            )
        )
    terms = []
    for i, term in enumerate(raw.allowed_topologies or ()):
        reqs = []
        for j, req in enumerate(term.match_label_expressions or ()):
            if not req.values:
                errors.append(
                    FieldError(
                        f"allowedTopologies[{i}].matchLabelExpressions[{j}].values",
                        "Required value: must specify as least one value",
                    )
                )
            reqs.append(m.TopologySelectorRequirement(key=req.key, values=tuple(req.values or ())))
        terms.append(m.TopologySelectorTerm(match_label_expressions=tuple(reqs)))
    if errors:
        raise IngestError(errors).prefixed(prefix)
    return m.StorageClass(
        name=raw.metadata.name,
        provisioner=raw.provisioner,
        volume_binding_mode=mode or "Immediate",  # the API server's default
        allowed_topologies=tuple(terms),
    )


def to_csi_node(raw: wire.CSINode, prefix: str = "") -> m.CSINode:
    errors = name_errors(raw.metadata, "a CSINode")
    drivers = []
    for i, d in enumerate(raw.spec.drivers or ()):
        count = d.allocatable.count if d.allocatable else None
        if count is not None and count < 0:
            errors.append(
                FieldError(
                    f"spec.drivers[{i}].allocatable.count", "must be greater than or equal to 0"
                )
            )
        drivers.append(m.CSINodeDriver(name=d.name, allocatable_count=count))
    if errors:
        raise IngestError(errors).prefixed(prefix)
    migrated = (raw.metadata.annotations or {}).get(MIGRATED_PLUGINS_ANNOTATION, "")
    return m.CSINode(
        name=raw.metadata.name,
        drivers=tuple(drivers),
        migrated_plugins=tuple(p.strip() for p in migrated.split(",") if p.strip()),
    )


def to_csi_driver(raw: wire.CSIDriver, prefix: str = "") -> m.CSIDriver:
    require_name(raw, "a CSIDriver", prefix)
    return m.CSIDriver(name=raw.metadata.name, storage_capacity=bool(raw.spec.storage_capacity))


def to_csi_storage_capacity(raw: wire.CSIStorageCapacity, prefix: str = "") -> m.CSIStorageCapacity:
    errors = name_errors(raw.metadata, "a CSIStorageCapacity")
    capacity = _storage_quantity(raw.capacity, "capacity", errors)
    maximum = _storage_quantity(raw.maximum_volume_size, "maximumVolumeSize", errors)
    topology = label_selector(raw.node_topology, "nodeTopology", errors)
    if errors:
        raise IngestError(errors).prefixed(prefix)
    return m.CSIStorageCapacity(
        namespace=raw.metadata.namespace or "default",
        name=raw.metadata.name,
        storage_class=raw.storage_class_name,
        capacity=capacity,
        maximum_volume_size=maximum,
        node_topology=topology,
    )


def to_volume_attachment(raw: wire.VolumeAttachment, prefix: str = "") -> m.VolumeAttachment:
    require_name(raw, "a VolumeAttachment", prefix)
    spec = raw.spec
    return m.VolumeAttachment(
        name=raw.metadata.name,
        attacher=spec.attacher,
        node_name=spec.node_name,
        persistent_volume_name=spec.source.persistent_volume_name or "",
    )
