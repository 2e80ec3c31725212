"""resource.k8s.io objects (ResourceClaim, ResourceClaimTemplate, DeviceClass, ResourceSlice)
into the model, validated as the API server validates them.

v1 is read as is; v1beta2 has v1's shapes; v1beta1 keeps a request's device fields at the
request's top level and a device's attributes under ``basic``, converted here as the API
server's conversion does. The checks mirror kubernetes/kubernetes
``pkg/apis/resource/validation/validation.go`` (v1.35): ``validateDeviceClaim``,
``validateDeviceRequest``, ``validateSelector`` (CEL: service/engine/dra/cel.py),
``validateResourceSliceSpec``, ``validateDeviceAttribute``; messages are the API server's.
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from service.engine import objects as m
from service.engine.dra.cel import expression_error, parse_semver
from service.engine.quantity import QuantityError, parse_quantity
from service.ingest import wire
from service.ingest.errors import FieldError, IngestError
from service.ingest.names import dns1123_label, dns1123_subdomain

__all__ = ["RESOURCE_KINDS", "pod_resource_claims"]

API_GROUP = "resource.k8s.io"
API_VERSIONS = ("v1", "v1beta1", "v1beta2")
# Limits of resource/v1 (types.go)
MAX_SELECTORS = 32
MAX_REQUESTS = 32
MAX_SUBREQUESTS = 8
MAX_DEVICES_PER_SLICE = 128
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_CONSTRAINTS = 32
MAX_CONFIGS = 32  # DeviceConfigMaxSize
MAX_OPAQUE_PARAMETERS = 10 * 1024  # OpaqueParametersMaxLength
MAX_DRIVER_NAME = 63  # DriverNameMaxLength
ALLOCATION_RESULTS_MAX = 32
_MODES = ("ExactCount", "All")


class _Wire(msgspec.Struct, rename="camel", forbid_unknown_fields=False):
    pass


class _CEL(_Wire):
    expression: str = ""


class _Selector(_Wire):
    cel: _CEL | None = None


class _Exact(_Wire):
    name: str = ""  # subrequests only
    device_class_name: str = ""
    selectors: list[_Selector] | None = None
    allocation_mode: str | None = None
    count: int | None = None
    admin_access: bool | None = None


class _Request(_Exact):
    exactly: _Exact | None = None
    first_available: list[_Exact] | None = None


class _Constraint(_Wire):
    requests: list[str] | None = None
    match_attribute: str | None = None


class _Opaque(_Wire):
    driver: str = ""
    parameters: Any = None


class _Config(_Wire):
    requests: list[str] | None = None  # a claim's only
    opaque: _Opaque | None = None


class _ClaimDevices(_Wire):
    requests: list[_Request] | None = None
    constraints: list[_Constraint] | None = None
    config: list[_Config] | None = None


class _ClaimSpec(_Wire):
    devices: _ClaimDevices | None = None


class _Result(_Wire):
    request: str = ""
    driver: str = ""
    pool: str = ""
    device: str = ""
    admin_access: bool | None = None


class _AllocDevices(_Wire):
    results: list[_Result] | None = None


class _Allocation(_Wire):
    devices: _AllocDevices | None = None
    node_selector: wire.NodeSelector | None = None


class _Consumer(_Wire):
    resource: str = ""
    name: str = ""
    uid: str = ""


class _ClaimStatus(_Wire):
    allocation: _Allocation | None = None
    reserved_for: list[_Consumer] | None = None


class ResourceClaim(_Wire):
    api_version: str = ""
    metadata: wire.Metadata = msgspec.field(default_factory=wire.Metadata)
    spec: _ClaimSpec = msgspec.field(default_factory=_ClaimSpec)
    status: _ClaimStatus = msgspec.field(default_factory=_ClaimStatus)


class _TemplateSpec(_Wire):
    spec: _ClaimSpec = msgspec.field(default_factory=_ClaimSpec)


class ResourceClaimTemplate(_Wire):
    api_version: str = ""
    metadata: wire.Metadata = msgspec.field(default_factory=wire.Metadata)
    spec: _TemplateSpec = msgspec.field(default_factory=_TemplateSpec)


class _ClassSpec(_Wire):
    selectors: list[_Selector] | None = None
    config: list[_Config] | None = None


class DeviceClass(_Wire):
    api_version: str = ""
    metadata: wire.Metadata = msgspec.field(default_factory=wire.Metadata)
    spec: _ClassSpec = msgspec.field(default_factory=_ClassSpec)


class _Attribute(_Wire):
    int: Any = None
    bool: Any = None
    string: Any = None
    version: Any = None


class _Capacity(_Wire):
    value: wire.QuantityValue | None = None


class _Basic(_Wire):
    attributes: dict[str, _Attribute] | None = None
    capacity: dict[str, _Capacity] | None = None


class _Device(_Basic):
    name: str = ""
    basic: _Basic | None = None  # v1beta1
    consumes_counters: list[msgspec.Raw] | None = None
    binding_conditions: list[str] | None = None


class _Pool(_Wire):
    name: str = ""
    generation: int = 0
    resource_slice_count: int = 0


class _SliceSpec(_Wire):
    driver: str = ""
    pool: _Pool = msgspec.field(default_factory=_Pool)
    node_name: str | None = None
    node_selector: wire.NodeSelector | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    shared_counters: list[msgspec.Raw] | None = None
    devices: list[_Device] | None = None


class ResourceSlice(_Wire):
    api_version: str = ""
    metadata: wire.Metadata = msgspec.field(default_factory=wire.Metadata)
    spec: _SliceSpec = msgspec.field(default_factory=_SliceSpec)


def _api_version(raw: Any, errors: list[FieldError]) -> str:
    group, _, version = raw.api_version.rpartition("/")
    if raw.api_version and (group != API_GROUP or version not in API_VERSIONS):
        errors.append(
            FieldError(
                "apiVersion",
                f'Unsupported value: "{raw.api_version}": supported values: '
                + ", ".join(f'"{API_GROUP}/{v}"' for v in API_VERSIONS),
            )
        )
    return version or "v1"


def _name_rule(value: str, rule, path: str, errors: list[FieldError]) -> None:
    if not value:
        errors.append(FieldError(path, "Required value"))
    elif why := rule(value):
        errors.append(FieldError(path, f'Invalid value: "{value}": {why}'))


def _selectors(raw: list[_Selector] | None, path: str, errors: list[FieldError]) -> tuple:
    """validateSelectors: at most 32, each a CEL expression the API server compiles."""
    items = raw or []
    if len(items) > MAX_SELECTORS:
        errors.append(
            FieldError(path, f"Too many: {len(items)}: must have at most {MAX_SELECTORS} items")
        )
    out = []
    for i, sel in enumerate(items):
        at = f"{path}[{i}].cel"
        if sel.cel is None:
            errors.append(
                FieldError(f"{path}[{i}]", "Required value: exactly one of `cel` is required")
            )
            continue
        if why := expression_error(sel.cel.expression):
            errors.append(FieldError(f"{at}.expression", why))
        out.append(sel.cel.expression)
    return tuple(out)


def _exact(raw: _Exact, path: str, errors: list[FieldError], *, sub: bool) -> m.DeviceSubRequest:
    """validateExactDeviceRequest / validateDeviceSubRequest."""
    _name_rule(raw.device_class_name, dns1123_subdomain, f"{path}.deviceClassName", errors)
    selectors = _selectors(raw.selectors, f"{path}.selectors", errors)
    mode = raw.allocation_mode or "ExactCount"
    count: int | None = raw.count
    if mode == "ExactCount":
        if count is None:
            count = 1
        elif count <= 0:
            errors.append(
                FieldError(f"{path}.count", f"Invalid value: {count}: must be greater than zero")
            )
    elif mode == "All":
        if count is not None:
            errors.append(
                FieldError(
                    f"{path}.count",
                    'Invalid value: must not be specified when allocationMode is "All"',
                )
            )
    else:
        errors.append(
            FieldError(
                f"{path}.allocationMode",
                f'Unsupported value: "{mode}": supported values: "All", "ExactCount"',
            )
        )
    if sub and raw.admin_access is not None:
        errors.append(FieldError(f"{path}.adminAccess", "Forbidden: not supported in a subrequest"))
    return m.DeviceSubRequest(
        name=raw.name,
        device_class_name=raw.device_class_name,
        selectors=selectors,
        allocation_mode=mode,
        count=count if mode == "ExactCount" else None,
        admin_access=raw.admin_access,
    )


def _request(raw: _Request, version: str, path: str, errors: list[FieldError]) -> m.DeviceRequest:
    """validateDeviceRequest: a DNS label name, exactly one of ``exactly`` and
    ``firstAvailable`` (v1beta1: the request's own fields or firstAvailable)."""
    _name_rule(raw.name, dns1123_label, f"{path}.name", errors)
    exactly = raw.exactly
    if version == "v1beta1" and not raw.first_available:
        exactly = raw  # v1beta1: the device fields sit on the request itself
    if exactly is not None and raw.first_available:
        errors.append(
            FieldError(
                path,
                "Invalid value: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
            )
        )
        return m.DeviceRequest(name=raw.name)
    if raw.first_available:
        subs = raw.first_available
        at = f"{path}.firstAvailable"
        if len(subs) > MAX_SUBREQUESTS:
            errors.append(
                FieldError(at, f"Too many: {len(subs)}: must have at most {MAX_SUBREQUESTS} items")
            )
        seen: set[str] = set()
        out = []
        for i, sub in enumerate(subs):
            _name_rule(sub.name, dns1123_label, f"{at}[{i}].name", errors)
            if sub.name in seen:
                errors.append(FieldError(f"{at}[{i}].name", f'Duplicate value: "{sub.name}"'))
            seen.add(sub.name)
            out.append(_exact(sub, f"{at}[{i}]", errors, sub=True))
        return m.DeviceRequest(name=raw.name, first_available=tuple(out))
    if exactly is None:
        errors.append(
            FieldError(
                path, "Required value: exactly one of `exactly` or `firstAvailable` is required"
            )
        )
        return m.DeviceRequest(name=raw.name)
    where = path if exactly is raw else f"{path}.exactly"
    spec = _exact(exactly, where, errors, sub=False)
    return m.DeviceRequest(name=raw.name, exactly=msgspec.structs.replace(spec, name=raw.name))


def _claim_spec(
    raw: _ClaimSpec, version: str, path: str, errors: list[FieldError]
) -> m.ResourceClaimSpec:
    """validateDeviceClaim: requests (unique names), constraints naming them."""
    devices = raw.devices or _ClaimDevices()
    requests = devices.requests or []
    at = f"{path}.devices.requests"
    if len(requests) > MAX_REQUESTS:
        errors.append(
            FieldError(at, f"Too many: {len(requests)}: must have at most {MAX_REQUESTS} items")
        )
    out: list[m.DeviceRequest] = []
    names: set[str] = set()
    for i, req in enumerate(requests):
        parsed = _request(req, version, f"{at}[{i}]", errors)
        if req.name in names:
            errors.append(FieldError(f"{at}[{i}].name", f'Duplicate value: "{req.name}"'))
        names.add(req.name)
        out.append(parsed)
    known = set(names) | {f"{r.name}/{s.name}" for r in out for s in r.first_available}
    constraints = []
    cat = f"{path}.devices.constraints"
    raw_constraints = devices.constraints or []
    if len(raw_constraints) > MAX_CONSTRAINTS:
        errors.append(
            FieldError(
                cat, f"Too many: {len(raw_constraints)}: must have at most {MAX_CONSTRAINTS} items"
            )
        )
    for i, c in enumerate(raw_constraints):
        for j, name in enumerate(c.requests or ()):
            if name not in known:
                errors.append(
                    FieldError(
                        f"{cat}[{i}].requests[{j}]",
                        f"Invalid value: \"{name}\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
                    )
                )
        attr = c.match_attribute
        if attr is None:
            errors.append(
                FieldError(
                    f"{cat}[{i}]", "Required value: exactly one of `matchAttribute` is required"
                )
            )
            continue
        domain, sep, ident = attr.partition("/")
        if not sep or not domain or not ident:
            errors.append(
                FieldError(
                    f"{cat}[{i}].matchAttribute", f'Invalid value: "{attr}": must include a domain'
                )
            )
        constraints.append(
            m.DeviceConstraint(requests=tuple(c.requests or ()), match_attribute=attr)
        )
    config = _configs(devices.config, f"{path}.devices.config", errors, known)
    return m.ResourceClaimSpec(requests=tuple(out), constraints=tuple(constraints), config=config)


def _configs(
    raw: list[_Config] | None, path: str, errors: list[FieldError], requests: set[str] | None
) -> tuple[m.DeviceConfiguration, ...]:
    """validateDeviceClassConfiguration / validateDeviceClaimConfiguration: at most 32; a
    claim's entry names requests of the claim (``req`` or ``req/sub``), each once; exactly
    one of ``opaque``: a driver name and parameters that are a JSON object of at most
    10 KiB (validateOpaqueConfiguration, validateRawExtension). ``requests`` is None for a
    class's."""
    items = raw or []
    if len(items) > MAX_CONFIGS:
        errors.append(
            FieldError(path, f"Too many: {len(items)}: must have at most {MAX_CONFIGS} items")
        )
    out = []
    for i, entry in enumerate(items):
        at = f"{path}[{i}]"
        names = entry.requests or []
        if requests is not None:
            seen: set[str] = set()
            for j, name in enumerate(names):
                if name in seen:
                    errors.append(FieldError(f"{at}.requests[{j}]", f'Duplicate value: "{name}"'))
                elif name not in requests:
                    errors.append(
                        FieldError(
                            f"{at}.requests[{j}]",
                            f'Invalid value: "{name}": must be the name of a request in the '
                            "claim or the name of a request and a subrequest separated by '/'",
                        )
                    )
                seen.add(name)
        opaque = entry.opaque
        if opaque is None:
            errors.append(FieldError(f"{at}.opaque", "Required value"))
            continue
        _name_rule(opaque.driver, dns1123_subdomain, f"{at}.opaque.driver", errors)
        if len(opaque.driver) > MAX_DRIVER_NAME:
            errors.append(
                FieldError(
                    f"{at}.opaque.driver",
                    f"Too long: may not be more than {MAX_DRIVER_NAME} bytes",
                )
            )
        parameters = _opaque_parameters(opaque.parameters, f"{at}.opaque.parameters", errors)
        out.append(m.DeviceConfiguration(opaque.driver, parameters, tuple(names)))
    return tuple(out)


def _opaque_parameters(raw: Any, path: str, errors: list[FieldError]) -> str:
    """validateRawExtension: required, a JSON object, of at most 10 KiB; kept as its compact
    JSON text (the size is the compact text's: a body's own spacing is not kept)."""
    if raw is None:
        errors.append(FieldError(path, "Required value"))
        return ""
    if not isinstance(raw, dict):
        errors.append(
            FieldError(path, "Invalid value: <value omitted>: must be a valid JSON object")
        )
        return ""
    try:
        text = orjson.dumps(raw).decode()
    except TypeError:  # a YAML value JSON cannot hold (a date, a binary)
        errors.append(
            FieldError(path, "Invalid value: <value omitted>: must be a valid JSON object")
        )
        return ""
    if len(text) > MAX_OPAQUE_PARAMETERS:
        errors.append(
            FieldError(path, f"Too long: may not be more than {MAX_OPAQUE_PARAMETERS} bytes")
        )
    return text


def _terms(raw: wire.NodeSelector) -> tuple[m.NodeSelectorTerm, ...]:
    """A node selector's terms in the model (their checks are the node selector's own)."""

    def reqs(items: list[wire.Requirement] | None) -> tuple[m.NodeSelectorRequirement, ...]:
        return tuple(
            m.NodeSelectorRequirement(r.key, r.operator, tuple(r.values or ())) for r in items or ()
        )

    return tuple(
        m.NodeSelectorTerm(reqs(t.match_expressions), reqs(t.match_fields))
        for t in raw.node_selector_terms or ()
    )


def _controller_uid(meta: wire.Metadata) -> str:
    """The uid of the claim's controlling owner (metav1.GetControllerOf)."""
    for ref in meta.owner_references or ():
        if ref.controller:
            return ref.uid
    return ""


def _resource_claim(raw: ResourceClaim, prefix: str = "") -> m.ResourceClaim:
    errors: list[FieldError] = []
    version = _api_version(raw, errors)
    if not raw.metadata.name:
        errors.append(FieldError("metadata.name", "a ResourceClaim needs a name"))
    spec = _claim_spec(raw.spec, version, "spec", errors)
    allocation = None
    selector = None
    status = raw.status
    if status.allocation is not None:
        results = (status.allocation.devices or _AllocDevices()).results or []
        if len(results) > ALLOCATION_RESULTS_MAX:
            errors.append(
                FieldError(
                    "status.allocation.devices.results",
                    f"Too many: {len(results)}: must have at most {ALLOCATION_RESULTS_MAX} items",
                )
            )
        allocation = tuple(
            m.AllocatedDevice(r.request, r.driver, r.pool, r.device, r.admin_access)
            for r in results
        )
        if status.allocation.node_selector is not None:
            selector = _terms(status.allocation.node_selector)
    if errors:
        raise IngestError(errors).prefixed(prefix)
    return m.ResourceClaim(
        namespace=raw.metadata.namespace or "default",
        name=raw.metadata.name,
        uid=raw.metadata.uid,
        spec=spec,
        allocation=allocation,
        allocation_node_selector=selector,
        reserved_for=tuple(c.uid for c in status.reserved_for or ()),
        controller_uid=_controller_uid(raw.metadata),
        deletion_timestamp=raw.metadata.deletion_timestamp,
        api_version=version,
    )


def _resource_claim_template(
    raw: ResourceClaimTemplate, prefix: str = ""
) -> m.ResourceClaimTemplate:
    errors: list[FieldError] = []
    version = _api_version(raw, errors)
    if not raw.metadata.name:
        errors.append(FieldError("metadata.name", "a ResourceClaimTemplate needs a name"))
    spec = _claim_spec(raw.spec.spec, version, "spec.spec", errors)
    if errors:
        raise IngestError(errors).prefixed(prefix)
    return m.ResourceClaimTemplate(
        namespace=raw.metadata.namespace or "default",
        name=raw.metadata.name,
        spec=spec,
        api_version=version,
    )


def _device_class(raw: DeviceClass, prefix: str = "") -> m.DeviceClass:
    errors: list[FieldError] = []
    version = _api_version(raw, errors)
    if not raw.metadata.name:
        errors.append(FieldError("metadata.name", "a DeviceClass needs a name"))
    selectors = _selectors(raw.spec.selectors, "spec.selectors", errors)
    config = _configs(raw.spec.config, "spec.config", errors, None)
    if errors:
        raise IngestError(errors).prefixed(prefix)
    return m.DeviceClass(
        name=raw.metadata.name, selectors=selectors, config=config, api_version=version
    )


def _attribute(raw: _Attribute, path: str, errors: list[FieldError]) -> m.DeviceAttribute | None:
    """validateDeviceAttribute: exactly one value of its type; a version strict semver."""
    given = [
        (kind, value)
        for kind, value in (
            ("int", raw.int),
            ("bool", raw.bool),
            ("string", raw.string),
            ("version", raw.version),
        )
        if value is not None
    ]
    if len(given) != 1:
        errors.append(
            FieldError(
                path,
                "Required value: exactly one value must be specified"
                if not given
                else "Invalid value: exactly one value must be specified",
            )
        )
        return None
    kind, value = given[0]
    expected = {"int": int, "bool": bool, "string": str, "version": str}[kind]
    if not isinstance(value, expected) or (kind == "int" and isinstance(value, bool)):
        errors.append(FieldError(f"{path}.{kind}", f"Invalid value: must be a {kind}"))
        return None
    if kind == "int" and not -(2**63) <= value < 2**63:
        errors.append(FieldError(f"{path}.int", "Invalid value: out of int64 range"))
        return None
    if kind in ("string", "version") and len(value) > 64:
        errors.append(FieldError(f"{path}.{kind}", "Too long: may not be more than 64 bytes"))
    if kind == "version" and parse_semver(value) is None:
        errors.append(
            FieldError(
                f"{path}.version",
                "Invalid value: must be a string compatible with semver.org spec 2.0.0",
            )
        )
    return m.DeviceAttribute(kind, value)


def _qualified_name_error(name: str) -> str | None:
    """validateQualifiedName: an optional DNS subdomain domain, then a C identifier."""
    domain, sep, ident = name.rpartition("/")
    if sep and (not domain or dns1123_subdomain(domain)):
        return "a fully qualified name must be a domain and a name separated by a slash"
    if (
        not ident
        or len(ident) > 32
        or not (ident[0].isalpha() or ident[0] == "_")
        or not all(c.isalnum() or c == "_" for c in ident)
    ):
        return "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')"
    return None


def _device(raw: _Device, version: str, path: str, errors: list[FieldError]) -> m.Device:
    _name_rule(raw.name, dns1123_label, f"{path}.name", errors)
    basic = raw.basic if version == "v1beta1" and raw.basic is not None else raw
    where = f"{path}.basic" if basic is not raw else path
    attributes: dict[str, m.DeviceAttribute] = {}
    for name, attr in (basic.attributes or {}).items():
        at = f"{where}.attributes[{name}]"
        if why := _qualified_name_error(name):
            errors.append(FieldError(at, f'Invalid value: "{name}": {why}'))
        value = _attribute(attr, at, errors)
        if value is not None:
            attributes[name] = value
    capacity: dict[str, str] = {}
    for name, cap in (basic.capacity or {}).items():
        at = f"{where}.capacity[{name}]"
        if why := _qualified_name_error(name):
            errors.append(FieldError(at, f'Invalid value: "{name}": {why}'))
        if cap.value is None:
            errors.append(FieldError(f"{at}.value", "Required value"))
            continue
        text = str(cap.value)
        try:
            parse_quantity(text)
        except QuantityError:
            errors.append(
                FieldError(
                    f"{at}.value",
                    f"Invalid value: \"{text}\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                )
            )
            continue
        capacity[name] = text
    for name in attributes.keys() & capacity.keys():
        errors.append(FieldError(f"{where}.capacity[{name}]", f'Duplicate value: "{name}"'))
    if len(attributes) + len(capacity) > MAX_ATTRIBUTES_AND_CAPACITIES:
        errors.append(
            FieldError(
                where,
                f"Too many: {len(attributes) + len(capacity)}: must have at most {MAX_ATTRIBUTES_AND_CAPACITIES} attributes and capacities combined",
            )
        )
    return m.Device(
        name=raw.name,
        attributes=attributes,
        capacity=capacity,
        consumes_counters=bool(raw.consumes_counters),
        binding_conditions=bool(raw.binding_conditions),
    )


def _resource_slice(raw: ResourceSlice, prefix: str = "") -> m.ResourceSlice:
    """validateResourceSliceSpec."""
    errors: list[FieldError] = []
    version = _api_version(raw, errors)
    if not raw.metadata.name:
        errors.append(FieldError("metadata.name", "a ResourceSlice needs a name"))
    spec = raw.spec
    _name_rule(spec.driver, dns1123_subdomain, "spec.driver", errors)
    pool = spec.pool
    if not pool.name:
        errors.append(FieldError("spec.pool.name", "Required value"))
    if pool.generation < 0:
        errors.append(
            FieldError(
                "spec.pool.generation",
                f"Invalid value: {pool.generation}: must be greater than or equal to 0",
            )
        )
    if pool.resource_slice_count <= 0:
        errors.append(
            FieldError(
                "spec.pool.resourceSliceCount",
                f"Invalid value: {pool.resource_slice_count}: must be greater than zero",
            )
        )
    chosen = [
        f
        for f, set_ in (
            ("nodeName", bool(spec.node_name)),
            ("nodeSelector", spec.node_selector is not None),
            ("allNodes", bool(spec.all_nodes)),
            ("perDeviceNodeSelection", bool(spec.per_device_node_selection)),
        )
        if set_
    ]
    if len(chosen) != 1:
        errors.append(
            FieldError(
                "spec",
                "Invalid value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
                + (", but multiple fields are set" if chosen else ""),
            )
        )
    elif spec.node_name and (why := dns1123_subdomain(spec.node_name)):
        errors.append(FieldError("spec.nodeName", f'Invalid value: "{spec.node_name}": {why}'))
    selector = None
    if spec.node_selector is not None:
        terms = spec.node_selector.node_selector_terms or []
        if len(terms) != 1:
            errors.append(
                FieldError(
                    "spec.nodeSelector.nodeSelectorTerms",
                    "Invalid value: must have exactly one node selector term",
                )
            )
        selector = _terms(spec.node_selector)
    devices = spec.devices or []
    if len(devices) > MAX_DEVICES_PER_SLICE:
        errors.append(
            FieldError(
                "spec.devices",
                f"Too many: {len(devices)}: must have at most {MAX_DEVICES_PER_SLICE} items",
            )
        )
    out = []
    seen: set[str] = set()
    for i, dev in enumerate(devices):
        parsed = _device(dev, version, f"spec.devices[{i}]", errors)
        if dev.name in seen:
            errors.append(FieldError(f"spec.devices[{i}].name", f'Duplicate value: "{dev.name}"'))
        seen.add(dev.name)
        out.append(parsed)
    if errors:
        raise IngestError(errors).prefixed(prefix)
    return m.ResourceSlice(
        name=raw.metadata.name,
        driver=spec.driver,
        pool=pool.name,
        generation=pool.generation,
        resource_slice_count=pool.resource_slice_count,
        node_name=spec.node_name or "",
        all_nodes=bool(spec.all_nodes),
        node_selector=selector,
        devices=tuple(out),
        partitionable=bool(spec.shared_counters) or spec.per_device_node_selection is not None,
        api_version=version,
    )


def pod_resource_claims(
    raw: list[wire.PodResourceClaim] | None, errors: list[FieldError]
) -> tuple[m.PodResourceClaim, ...]:
    """A pod's spec.resourceClaims (validatePodResourceClaims: unique DNS-label names, exactly
    one of resourceClaimName and resourceClaimTemplateName)."""
    out = []
    seen: set[str] = set()
    for i, claim in enumerate(raw or ()):
        at = f"spec.resourceClaims[{i}]"
        _name_rule(claim.name, dns1123_label, f"{at}.name", errors)
        if claim.name in seen:
            errors.append(FieldError(f"{at}.name", f'Duplicate value: "{claim.name}"'))
        seen.add(claim.name)
        given = [n for n in (claim.resource_claim_name, claim.resource_claim_template_name) if n]
        if len(given) != 1:
            errors.append(
                FieldError(
                    at,
                    "Invalid value: must specify one of: `resourceClaimName`, "
                    "`resourceClaimTemplateName`",
                )
            )
        out.append(
            m.PodResourceClaim(
                claim.name, claim.resource_claim_name, claim.resource_claim_template_name
            )
        )
    return tuple(out)


# kind -> (wire struct, conversion, Snapshot field, namespaced)
RESOURCE_KINDS = {
    "ResourceClaim": (ResourceClaim, _resource_claim, "resource_claims", True),
    "ResourceClaimTemplate": (
        ResourceClaimTemplate,
        _resource_claim_template,
        "resource_claim_templates",
        True,
    ),
    "DeviceClass": (DeviceClass, _device_class, "device_classes", False),
    "ResourceSlice": (ResourceSlice, _resource_slice, "resource_slices", False),
}
