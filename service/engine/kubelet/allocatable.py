"""Node allocatable: capacity minus what the kubelet reserves.

Mirrors pkg/kubelet/cm/node_container_manager_linux.go (GetNodeAllocatableReservation,
getNodeAllocatableAbsoluteImpl, validateNodeAllocatable), pkg/kubelet/cm/helpers.go
(hardEvictionReservation) and the allocatable part of pkg/kubelet/nodestatus/setters.go
MachineInfo (k8s master as of 1.35/1.36).

All amounts are integers in base units (cpu in millicores). Not modelled: device-plugin
resources, whose allocatable the kubelet takes from the plugin as is, and
``--experimental-allocatable-ignore-eviction`` (the hard thresholds always reserve).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction

from service.engine.kubelet.eviction_config import (
    OP_LESS_THAN,
    SIGNAL_MEMORY,
    SIGNAL_NODEFS,
    Threshold,
    get_threshold_quantity,
)
from service.engine.quantity import (
    BINARY_SI,
    DECIMAL_SI,
    Quantity,
    base_units_to_string,
    to_base_units,
)

__all__ = [
    "get_node_allocatable_absolute",
    "get_node_allocatable_reservation",
    "hard_eviction_reservation",
    "node_allocatable",
    "reserved_amounts",
    "validate_node_allocatable",
]

_HUGEPAGES_PREFIX = "hugepages-"
_RESERVING_SIGNALS = {SIGNAL_MEMORY: "memory", SIGNAL_NODEFS: "ephemeral-storage"}


def reserved_amounts(reserved: Mapping[str, Quantity]) -> dict[str, int]:
    """kubeReserved / systemReserved quantities as base-unit integers."""
    return {name: to_base_units(name, q) for name, q in reserved.items()}


def _ceil(value: int | Fraction) -> int:
    return -(-value.numerator // value.denominator)


def hard_eviction_reservation(
    thresholds: Iterable[Threshold], capacity: Mapping[str, int]
) -> dict[str, int] | None:
    """cm hardEvictionReservation (k8s 1.35): memory.available reserves memory and
    nodefs.available reserves ephemeral-storage, by the threshold quantity resolved against
    that capacity (a later threshold of the same signal overwrites an earlier one). Other
    signals reserve nothing. None when there are no thresholds at all."""
    thresholds = list(thresholds)
    if not thresholds:
        return None
    result: dict[str, int] = {}
    for threshold in thresholds:
        if threshold.operator != OP_LESS_THAN:
            continue
        resource = _RESERVING_SIGNALS.get(threshold.signal)
        if resource is None:
            continue
        amount = get_threshold_quantity(threshold.value, capacity.get(resource, 0))
        result[resource] = _ceil(amount)
    return result


def get_node_allocatable_reservation(
    capacity: Mapping[str, int],
    kube_reserved: Mapping[str, int],
    system_reserved: Mapping[str, int],
    hard_eviction_thresholds: Iterable[Threshold],
) -> dict[str, int]:
    """containerManagerImpl.GetNodeAllocatableReservation (k8s 1.35): for every key of
    CAPACITY, system-reserved + kube-reserved + hard-eviction reservation; zero totals are
    omitted, keys absent from capacity are ignored."""
    eviction = hard_eviction_reservation(hard_eviction_thresholds, capacity) or {}
    result: dict[str, int] = {}
    for name in capacity:
        total = system_reserved.get(name, 0) + kube_reserved.get(name, 0) + eviction.get(name, 0)
        if total != 0:
            result[name] = total
    return result


def _subtract_hugepages(capacity: Mapping[str, int], allocatable: dict[str, int]) -> None:
    for name, amount in capacity.items():
        if name.startswith(_HUGEPAGES_PREFIX):
            allocatable["memory"] = max(allocatable.get("memory", 0) - amount, 0)


def node_allocatable(capacity: Mapping[str, int], reservation: Mapping[str, int]) -> dict[str, int]:
    """nodestatus MachineInfo's allocatable (k8s 1.35): capacity − reservation per capacity
    key, clamped at 0; then every hugepages-* capacity is taken from allocatable memory
    (clamped at 0)."""
    result = {name: max(amount - reservation.get(name, 0), 0) for name, amount in capacity.items()}
    _subtract_hugepages(capacity, result)
    return result


def get_node_allocatable_absolute(
    capacity: Mapping[str, int],
    kube_reserved: Mapping[str, int],
    system_reserved: Mapping[str, int],
) -> dict[str, int]:
    """containerManagerImpl.getNodeAllocatableAbsoluteImpl (k8s 1.35): the cgroup enforcement
    value, capacity − system-reserved − kube-reserved (no eviction reservation), clamped at 0,
    hugepages capacity taken from memory."""
    result = {
        name: max(amount - system_reserved.get(name, 0) - kube_reserved.get(name, 0), 0)
        for name, amount in capacity.items()
    }
    _subtract_hugepages(capacity, result)
    return result


def validate_node_allocatable(
    capacity: Mapping[str, int],
    reservation: Mapping[str, int],
    formats: Mapping[str, str] | None = None,
) -> str | None:
    """containerManagerImpl.validateNodeAllocatable (k8s 1.35): the kubelet refuses to start
    when a reservation exceeds its capacity. Returns the kubelet's error text, or None.
    Resources are reported in name order (upstream: Go map order)."""
    formats = formats or {}
    problems = []
    for name in sorted(reservation):
        if capacity.get(name, 0) - reservation[name] < 0:
            default = DECIMAL_SI if name in ("cpu", "pods") else BINARY_SI
            fmt = formats.get(name, default)
            problems.append(
                f'Resource "{name}" has a reservation of '
                f"{base_units_to_string(name, reservation[name], fmt)} but capacity of "
                f"{base_units_to_string(name, capacity.get(name, 0), fmt)}. "
                "Expected capacity >= reservation."
            )
    if problems:
        return "invalid Node Allocatable configuration. " + " ".join(problems)
    return None
