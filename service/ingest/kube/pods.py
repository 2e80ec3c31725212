"""Pods: a v1 Pod → the model ``Pod`` (containers, resources, affinity, spread,
tolerations, volumes), with the API server's defaulting and validation."""

from __future__ import annotations

from service.engine import objects as m
from service.engine.quantity import QuantityError, parse_quantity
from service.engine.resources import (
    exact_list,
    is_hugepages_resource_name,
    is_supported_pod_level_resource,
)
from service.ingest import wire
from service.ingest.errors import FieldError, IngestError
from service.ingest.kube.decode import Interner, convert_object, name_errors, resource_list
from service.ingest.kube.resource import pod_resource_claims
from service.ingest.kube.selectors import (
    DNS1123_LABEL,
    label_keys,
    label_name,
    label_selector,
    node_selector_term,
    preferred_terms,
)
from service.ingest.kube.storage import DISK_SOURCES, disk_id
from service.ingest.names import metadata_errors


def _container(
    raw: wire.Container,
    path: str,
    errors: list[FieldError],
    formats: dict[str, str],
    host_network: bool = False,
    shared: Interner | None = None,
) -> m.Container:
    res = raw.resources
    requests_given: dict[str, str] = {}
    limits_given: dict[str, str] = {}
    requests = resource_list(
        res.requests if res else None,
        f"{path}.resources.requests",
        errors,
        formats,
        requests_given,
    )
    limits = resource_list(
        res.limits if res else None, f"{path}.resources.limits", errors, formats, limits_given
    )
    # API defaulting (SetDefaults_Container via defaultRequests): a limit without a request.
    for name, amount in limits.items():
        if name not in requests:
            requests[name] = amount
            if name in limits_given:
                requests_given[name] = limits_given[name]
    ports = ()
    if raw.ports:
        ports = tuple(
            m.ContainerPort(
                container_port=p.container_port,
                # API defaulting: with hostNetwork, an unset hostPort is the containerPort.
                host_port=p.host_port or (p.container_port if host_network else 0),
                protocol=p.protocol or "TCP",
                host_ip=p.host_ip,
            )
            for p in raw.ports
        )
    key = None
    if shared is not None:
        requests, limits = shared.mapping(requests), shared.mapping(limits)
        requests_given = shared.mapping(requests_given)
        limits_given = shared.mapping(limits_given)
        # Interned maps are kept alive by the interner, so their ids identify them.
        key = (
            "container",
            raw.name,
            id(requests),
            id(limits),
            ports,
            raw.restart_policy,
            raw.image,
            id(requests_given),
            id(limits_given),
        )
        found = shared.get(key)
        if found is not None:
            return found
    container = m.Container(
        name=raw.name,
        requests=requests,
        limits=limits,
        ports=ports,
        restart_policy=raw.restart_policy,
        image=raw.image,
        requests_given=requests_given,
        limits_given=limits_given,
    )
    return container if shared is None else shared.put(key, container)


def _pod_resources(
    raw: wire.Resources | None,
    containers: tuple[m.Container, ...],
    errors: list[FieldError],
    formats: dict[str, str],
) -> m.PodResources | None:
    if raw is None:
        return None
    requests_given: dict[str, str] = {}
    limits_given: dict[str, str] = {}
    requests = resource_list(
        raw.requests, "spec.resources.requests", errors, formats, requests_given
    )
    limits = resource_list(raw.limits, "spec.resources.limits", errors, formats, limits_given)
    # API defaulting of pod-level requests (defaultPodRequests, PodLevelResources): hugepages
    # default to the aggregated container requests, then any supported name to its limit.
    for name, amount in limits.items():
        if not is_supported_pod_level_resource(name) or name in requests:
            continue
        if is_hugepages_resource_name(name):
            total = sum(c.requests.get(name, 0) for c in containers)
            if any(name in c.requests for c in containers):
                requests[name] = total
                if any(name in c.requests_given for c in containers):
                    exact = [
                        exact_list(c.requests, c.requests_given, formats)[name]
                        for c in containers
                        if name in c.requests
                    ]
                    requests_given[name] = str(sum(exact[1:], exact[0]))
                continue
        requests[name] = amount
        if name in limits_given:
            requests_given[name] = limits_given[name]
    return m.PodResources(
        requests=requests,
        limits=limits,
        requests_given=requests_given,
        limits_given=limits_given,
    )


def _unmodelled(spec: wire.PodSpec) -> tuple[str, ...]:
    found = []
    affinity = spec.affinity
    if affinity and any(
        a is not None
        and (
            a.required_during_scheduling_ignored_during_execution
            or a.preferred_during_scheduling_ignored_during_execution
        )
        for a in (affinity.pod_affinity, affinity.pod_anti_affinity)
    ):
        found.append("InterPodAffinity")
    if spec.topology_spread_constraints:
        found.append("PodTopologySpread")
    return tuple(found)


# The pod conditions decisions read: DisruptionTarget (the kubelet's eviction) and Ready
# (the Eviction API's podutil.IsPodReady).
KEPT_CONDITIONS = frozenset({"DisruptionTarget", "Ready"})


def _conditions(conditions: list | None, shared: Interner | None) -> tuple[m.PodCondition, ...]:
    kept = tuple(
        m.PodCondition(type=c.type, status=c.status, reason=c.reason)
        for c in conditions or ()
        if c.type in KEPT_CONDITIONS
    )
    if not kept:
        return ()
    return shared.value(kept) if shared else kept


def _local_volume_names(volumes: list[wire.Volume] | None) -> tuple[str, ...]:
    """Mirrors the kubelet's localVolumeNames: hostPath or IsLocalEphemeralVolume."""
    if not volumes:
        return ()
    return tuple(
        v.name
        for v in volumes
        if v.host_path
        or v.git_repo
        or v.config_map
        or (v.empty_dir is not None and v.empty_dir.medium == "")
    )


def _empty_dir_limits(
    volumes: list[wire.Volume] | None, errors: list[FieldError]
) -> tuple[m.EmptyDirLimit, ...]:
    """Positive emptyDir sizeLimits (the kubelet ignores unset and zero ones)."""
    out = []
    for i, v in enumerate(volumes or ()):
        if v.empty_dir is None or v.empty_dir.size_limit is None:
            continue
        raw = v.empty_dir.size_limit
        try:
            quantity = parse_quantity(raw.strip() if isinstance(raw, str) else raw)
        except QuantityError as exc:
            errors.append(
                FieldError(
                    f"spec.volumes[{i}].emptyDir.sizeLimit", f"invalid quantity {raw!r}: {exc}"
                )
            )
            continue
        if quantity.sign() > 0:
            out.append(
                m.EmptyDirLimit(volume=v.name, limit=quantity.int_value(), text=str(quantity))
            )
    return tuple(out)


def _owner_references(refs: list[wire.OwnerRef] | None) -> tuple[m.OwnerReference, ...]:
    if not refs:
        return ()
    return tuple(
        m.OwnerReference(
            kind=r.kind,
            name=r.name,
            uid=r.uid,
            controller=bool(r.controller),
            api_version=r.api_version,
        )
        for r in refs
    )


def _tolerations(raw: list[wire.Toleration] | None, shared: Interner | None) -> tuple:
    if not raw:
        return ()
    out = tuple(
        m.Toleration(
            key=t.key,
            operator=t.operator,
            value=t.value,
            effect=t.effect,
            toleration_seconds=t.toleration_seconds,
        )
        for t in raw
    )
    return shared.value(out) if shared else out


def _affinity_term(
    raw: wire.PodAffinityTerm | None, path: str, errors: list[FieldError]
) -> m.PodAffinityTerm:
    """validatePodAffinityTerm: selectors, namespace names (reported under ``namespace``, as
    upstream names the field), matchLabelKeys / mismatchLabelKeys, the topology key."""
    raw = raw or wire.PodAffinityTerm()
    for name in raw.namespaces or ():
        if len(name) > 63 or not DNS1123_LABEL.match(name):
            errors.append(
                FieldError(
                    f"{path}.namespace",
                    f'Invalid value: "{name}": a lowercase RFC 1123 label must consist of lower '
                    "case alphanumeric characters or '-', and must start and end with an "
                    "alphanumeric character (regex used for validation is "
                    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                )
            )
    errors.extend(label_keys(raw.match_label_keys, raw.label_selector, f"{path}.matchLabelKeys"))
    errors.extend(
        label_keys(raw.mismatch_label_keys, raw.label_selector, f"{path}.mismatchLabelKeys")
    )
    mismatch = set(raw.mismatch_label_keys or ())
    for i, key in enumerate(raw.match_label_keys or ()):
        if key in mismatch:
            errors.append(
                FieldError(
                    f"{path}.matchLabelKeys[{i}]",
                    f'Invalid value: "{key}": exists in both matchLabelKeys and mismatchLabelKeys',
                )
            )
    if not raw.topology_key:
        errors.append(FieldError(f"{path}.topologyKey", "Required value: can not be empty"))
    else:
        label_name(raw.topology_key, f"{path}.topologyKey", errors)
    return m.PodAffinityTerm(
        topology_key=raw.topology_key,
        label_selector=label_selector(raw.label_selector, f"{path}.labelSelector", errors),
        namespaces=tuple(raw.namespaces or ()),
        namespace_selector=label_selector(
            raw.namespace_selector, f"{path}.namespaceSelector", errors
        ),
        match_label_keys=tuple(raw.match_label_keys or ()),
        mismatch_label_keys=tuple(raw.mismatch_label_keys or ()),
    )


def _pod_affinity(
    raw: wire.PodAffinity | None, path: str, errors: list[FieldError]
) -> tuple[tuple[m.PodAffinityTerm, ...], tuple[m.WeightedPodAffinityTerm, ...]]:
    """A podAffinity or podAntiAffinity: its required and its weighted preferred terms."""
    if raw is None:
        return (), ()
    required_path = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    required = tuple(
        _affinity_term(t, f"{required_path}[{i}]", errors)
        for i, t in enumerate(raw.required_during_scheduling_ignored_during_execution or ())
    )
    preferred_path = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    preferred = []
    for i, t in enumerate(raw.preferred_during_scheduling_ignored_during_execution or ()):
        if not 1 <= t.weight <= 100:
            errors.append(FieldError(f"{preferred_path}[{i}].weight", "must be in the range 1-100"))
        term = _affinity_term(t.pod_affinity_term, f"{preferred_path}[{i}].podAffinityTerm", errors)
        preferred.append(m.WeightedPodAffinityTerm(weight=t.weight, term=term))
    return required, tuple(preferred)


_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
_POLICIES = ("Honor", "Ignore")


def _spread_constraints(
    raw: list[wire.TopologySpreadConstraint] | None, errors: list[FieldError]
) -> tuple[m.TopologySpreadConstraint, ...]:
    """spec.topologySpreadConstraints, validated as validateTopologySpreadConstraints."""
    out = []
    later = [(c.topology_key, c.when_unsatisfiable) for c in raw or ()]
    for i, c in enumerate(raw or ()):
        path = f"spec.topologySpreadConstraints[{i}]"
        if c.max_skew <= 0:
            errors.append(
                FieldError(
                    f"{path}.maxSkew", f"Invalid value: {c.max_skew}: must be greater than zero"
                )
            )
        if not c.topology_key:
            errors.append(FieldError(f"{path}.topologyKey", "Required value: can not be empty"))
        errors.extend(label_keys(c.match_label_keys, c.label_selector, f"{path}.matchLabelKeys"))
        if c.when_unsatisfiable not in _WHEN_UNSATISFIABLE:
            errors.append(
                FieldError(
                    f"{path}.whenUnsatisfiable",
                    f'Unsupported value: "{c.when_unsatisfiable}": supported values: '
                    '"DoNotSchedule", "ScheduleAnyway"',
                )
            )
        if c.min_domains is not None:
            if c.min_domains <= 0:
                errors.append(
                    FieldError(
                        f"{path}.minDomains",
                        f"Invalid value: {c.min_domains}: must be greater than zero",
                    )
                )
            elif c.when_unsatisfiable != "DoNotSchedule":
                errors.append(
                    FieldError(
                        f"{path}.minDomains",
                        f"Invalid value: {c.min_domains}: can only use minDomains if "
                        f"whenUnsatisfiable=DoNotSchedule, not {c.when_unsatisfiable}",
                    )
                )
        for name, policy in (
            ("nodeAffinityPolicy", c.node_affinity_policy),
            ("nodeTaintsPolicy", c.node_taints_policy),
        ):
            if policy is not None and policy not in _POLICIES:
                errors.append(
                    FieldError(
                        f"{path}.{name}",
                        f'Unsupported value: "{policy}": supported values: "Honor", "Ignore"',
                    )
                )
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in later[i + 1 :]:
            # ValidateSpreadConstraintNotRepeat reports the first of the pair.
            errors.append(
                FieldError(
                    f"{path}.{{topologyKey, whenUnsatisfiable}}",
                    f'Duplicate value: "{{{c.topology_key}, {c.when_unsatisfiable}}}"',
                )
            )
        out.append(
            m.TopologySpreadConstraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                when_unsatisfiable=c.when_unsatisfiable,
                label_selector=label_selector(c.label_selector, f"{path}.labelSelector", errors),
                min_domains=c.min_domains,
                node_affinity_policy=c.node_affinity_policy,
                node_taints_policy=c.node_taints_policy,
                match_label_keys=tuple(c.match_label_keys or ()),
            )
        )
    return tuple(out)


def _resize(status: wire.PodStatus, errors: list[FieldError]) -> m.PodResize | None:
    """The status resources of a resized pod (InPlacePodVerticalScaling), or None when its
    status carries none: component-helpers reads a container status only when it has
    ``resources``, and the pod-level status only when ``status.resources`` is set."""
    scratch: dict[str, str] = {}  # status quantities do not set the pod's print formats
    containers: dict[str, m.ContainerResize] = {}
    for field, statuses in (
        ("containerStatuses", status.container_statuses),
        ("initContainerStatuses", status.init_container_statuses),
    ):
        for i, cs in enumerate(statuses or ()):
            if cs.resources is None:
                continue
            path = f"status.{field}[{i}]"
            containers[cs.name] = m.ContainerResize(
                actuated=resource_list(
                    cs.resources.requests, f"{path}.resources.requests", errors, scratch
                ),
                allocated=resource_list(
                    cs.allocated_resources, f"{path}.allocatedResources", errors, scratch
                ),
            )
    pod_actuated = None
    if status.resources is not None:
        pod_actuated = resource_list(
            status.resources.requests, "status.resources.requests", errors, scratch
        )
    if not containers and pod_actuated is None:
        return None
    return m.PodResize(
        containers=containers,
        pod_actuated=pod_actuated,
        pod_allocated=resource_list(
            status.allocated_resources, "status.allocatedResources", errors, scratch
        ),
        infeasible=any(
            c.type == "PodResizePending" and c.reason == "Infeasible"
            for c in status.conditions or ()
        ),
    )


def to_pod(raw: wire.Pod, prefix: str = "", shared: Interner | None = None) -> m.Pod:
    meta, spec, status = raw.metadata, raw.spec, raw.status
    errors = name_errors(meta, "a pod")
    formats: dict[str, str] = {}
    containers = tuple(
        _container(c, f"spec.containers[{i}]", errors, formats, spec.host_network, shared)
        for i, c in enumerate(spec.containers or ())
    )
    init_containers = tuple(
        _container(c, f"spec.initContainers[{i}]", errors, formats, spec.host_network, shared)
        for i, c in enumerate(spec.init_containers or ())
    )
    overhead_given: dict[str, str] = {}
    overhead = resource_list(spec.overhead, "spec.overhead", errors, formats, overhead_given)
    pod_resources = _pod_resources(spec.resources, containers, errors, formats)
    affinity = spec.affinity.node_affinity if spec.affinity else None
    required = affinity.required_during_scheduling_ignored_during_execution if affinity else None
    terms = None
    if required is not None:
        terms = tuple(node_selector_term(t) for t in required.node_selector_terms or ())
    preferred = preferred_terms(
        affinity.preferred_during_scheduling_ignored_during_execution if affinity else None,
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",
        errors,
    )
    empty_dir_limits = _empty_dir_limits(spec.volumes, errors)
    affinity_path = "spec.affinity"
    pod_affinity = _pod_affinity(
        spec.affinity.pod_affinity if spec.affinity else None,
        f"{affinity_path}.podAffinity",
        errors,
    )
    pod_anti_affinity = _pod_affinity(
        spec.affinity.pod_anti_affinity if spec.affinity else None,
        f"{affinity_path}.podAntiAffinity",
        errors,
    )
    spread = _spread_constraints(spec.topology_spread_constraints, errors)
    claims = pod_resource_claims(spec.resource_claims, errors)
    resize = _resize(status, errors)
    if errors:
        raise IngestError(errors).prefixed(prefix)
    annotations = meta.annotations
    kept = {k: v for k, v in annotations.items() if k in m.KEPT_ANNOTATIONS} if annotations else {}
    return m.Pod(
        namespace=meta.namespace or "default",
        name=meta.name,
        uid=meta.uid,
        node_name=spec.node_name,
        labels=shared.mapping(meta.labels or {}) if shared else (meta.labels or {}),
        annotations=kept,
        priority=spec.priority,
        priority_class_name=spec.priority_class_name,
        preemption_policy=spec.preemption_policy,
        qos_class=status.qos_class,
        phase=status.phase,
        start_time=status.start_time,
        creation_timestamp=meta.creation_timestamp,
        deletion_timestamp=meta.deletion_timestamp,
        nominated_node_name=status.nominated_node_name,
        conditions=_conditions(status.conditions, shared),
        containers=containers,
        init_containers=init_containers,
        overhead=overhead,
        resources=pod_resources,
        node_selector=spec.node_selector or {},
        required_node_affinity=terms,
        preferred_node_affinity=preferred,
        pod_affinity_required=pod_affinity[0],
        pod_affinity_preferred=pod_affinity[1],
        pod_anti_affinity_required=pod_anti_affinity[0],
        pod_anti_affinity_preferred=pod_anti_affinity[1],
        topology_spread_constraints=spread,
        tolerations=_tolerations(spec.tolerations, shared),
        os_name=spec.os.name if spec.os else "",
        owner_references=_owner_references(meta.owner_references),
        host_network=spec.host_network,
        scheduler_name=spec.scheduler_name,
        termination_grace_period_seconds=spec.termination_grace_period_seconds,
        local_volume_names=_local_volume_names(spec.volumes),
        volumes=_pod_volumes(spec.volumes, shared),
        empty_dir_limits=empty_dir_limits,
        empty_dir_names=tuple(v.name for v in spec.volumes or () if v.empty_dir is not None),
        unmodelled=_unmodelled(spec),
        resource_claims=claims,
        resource_claim_statuses={
            s.name: s.resource_claim_name or "" for s in status.resource_claim_statuses or ()
        },
        resize=resize,
        formats=shared.mapping(formats) if shared else formats,
        overhead_given=overhead_given,
    )


def _wire_pod(obj: dict, prefix: str) -> wire.Pod:
    raw = convert_object(obj, wire.Pod, prefix)
    if raw.kind not in ("", "Pod"):
        raise IngestError.one(
            f"{prefix}.kind" if prefix else "kind", f"expected a Pod, got {raw.kind!r}"
        )
    return raw


def pod_from_object(obj: dict, prefix: str = "") -> m.Pod:
    """A v1 Pod given alone (as the API server or kubectl prints it, or as upstream's unit
    tests write it) → model Pod."""
    return to_pod(_wire_pod(obj, prefix), prefix)


def request_pod(obj: dict) -> m.Pod:
    """A decision request's ``pod`` → model Pod, its name, namespace and labels first checked
    as the API server checks a pod it creates (``names.metadata_errors``; paths relative to
    the pod): the one way a request pod is read, for the API, ``verdict decide`` and replay
    alike (``decisions.schemas.PodField``)."""
    raw = _wire_pod(obj, "")
    invalid = metadata_errors("Pod", raw.metadata, "pod", namespaced=True)
    if invalid:
        raise IngestError([FieldError(e.path.removeprefix("pod."), e.message) for e in invalid])
    return to_pod(raw)


def _pod_volumes(
    volumes: list[wire.Volume] | None, shared: Interner | None
) -> tuple[m.PodVolume, ...]:
    """The volumes the scheduler's volume plugins read, in spec order."""
    out: list[m.PodVolume] = []
    for v in volumes or ():
        if v.persistent_volume_claim is not None:
            claim = v.persistent_volume_claim
            out.append(
                m.PodVolume(
                    v.name,
                    "persistentVolumeClaim",
                    claim_name=claim.claim_name,
                    read_only=claim.read_only,
                )
            )
        elif v.ephemeral:
            out.append(m.PodVolume(v.name, "ephemeral"))
        else:
            for attr, source in DISK_SOURCES:
                disk = getattr(v, attr)
                if disk is not None:
                    out.append(
                        m.PodVolume(
                            v.name,
                            source,
                            disk=disk_id(source, disk),
                            read_only=disk.read_only,
                            pool=disk.pool,
                            monitors=tuple(disk.monitors or ()),
                        )
                    )
                    break
    if not out:
        return ()
    found = tuple(out)
    return shared.value(found) if shared else found
