"""The kubelet's eviction configuration: thresholds, grace periods, minimum reclaim.

Mirrors pkg/kubelet/eviction/helpers.go (ParseThresholdConfig and its helpers,
UpdateContainerFsThresholds), pkg/kubelet/eviction/api/types.go (signals, ThresholdValue,
GetThresholdQuantity), the Linux defaults in pkg/kubelet/eviction/defaults_linux.go and the
flag forms of cmd/kubelet/app/options (k8s master as of 1.35/1.36).

Verdict-specific choices, all for inputs where the kubelet's answer depends on Go map order:

* Every map is read in one canonical signal order (``SIGNALS``), unknown keys last in name
  order. So the threshold list is: evictionHard thresholds, evictionSoft thresholds (each in
  canonical signal order), then the allocatableMemory.available copies, then the derived
  containerfs.* thresholds. When several entries are invalid, the first in that order is
  reported (upstream: whichever Go's map iteration meets first).
* The derived containerfs.* thresholds are only added when their nodefs/imagefs source exists
  (upstream appends a zero-valued threshold with no operator, which can never be met).

Errors are raised as ``EvictionConfigError(path, message)`` with the kubelet's own message and
a field path of the request (``config.evictionHard``).
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from service.engine.duration import NS_PER_SECOND, parse_go_duration
from service.engine.quantity import (
    BINARY_SI,
    Quantity,
    QuantityError,
    format_quantity,
    parse_quantity,
)

__all__ = [
    "DEFAULT_EVICTION_HARD",
    "DEFAULT_PRESSURE_TRANSITION_PERIOD_NS",
    "FILESYSTEM_LAYOUTS",
    "OP_LESS_THAN",
    "SIGNALS",
    "SIGNAL_TO_NODE_CONDITION",
    "SIGNAL_TO_RESOURCE",
    "EvictionConfig",
    "EvictionConfigError",
    "Threshold",
    "ThresholdValue",
    "add_allocatable_thresholds",
    "build_eviction_config",
    "compare_threshold_value",
    "get_threshold_quantity",
    "is_hard_eviction_threshold",
    "parse_grace_periods",
    "parse_minimum_reclaims",
    "parse_percentage",
    "parse_threshold_config",
    "parse_threshold_statement",
    "parse_threshold_statements",
    "split_flag_map",
    "update_container_fs_thresholds",
]

# --- signals (pkg/kubelet/eviction/api/types.go, helpers.go init) -----------------------------

SIGNAL_MEMORY = "memory.available"
SIGNAL_ALLOCATABLE_MEMORY = "allocatableMemory.available"
SIGNAL_NODEFS = "nodefs.available"
SIGNAL_NODEFS_INODES = "nodefs.inodesFree"
SIGNAL_IMAGEFS = "imagefs.available"
SIGNAL_IMAGEFS_INODES = "imagefs.inodesFree"
SIGNAL_CONTAINERFS = "containerfs.available"
SIGNAL_CONTAINERFS_INODES = "containerfs.inodesFree"
SIGNAL_PID = "pid.available"

# Canonical order: every map is read in this order, results list signals in this order.
SIGNALS: tuple[str, ...] = (
    SIGNAL_MEMORY,
    SIGNAL_ALLOCATABLE_MEMORY,
    SIGNAL_NODEFS,
    SIGNAL_NODEFS_INODES,
    SIGNAL_IMAGEFS,
    SIGNAL_IMAGEFS_INODES,
    SIGNAL_CONTAINERFS,
    SIGNAL_CONTAINERFS_INODES,
    SIGNAL_PID,
)
_SIGNAL_INDEX = {s: i for i, s in enumerate(SIGNALS)}

RESOURCE_MEMORY = "memory"
RESOURCE_EPHEMERAL_STORAGE = "ephemeral-storage"
RESOURCE_INODES = "inodes"  # internal to the eviction manager
RESOURCE_PIDS = "pids"  # internal to the eviction manager

SIGNAL_TO_RESOURCE: dict[str, str] = {
    SIGNAL_MEMORY: RESOURCE_MEMORY,
    SIGNAL_ALLOCATABLE_MEMORY: RESOURCE_MEMORY,
    SIGNAL_NODEFS: RESOURCE_EPHEMERAL_STORAGE,
    SIGNAL_NODEFS_INODES: RESOURCE_INODES,
    SIGNAL_IMAGEFS: RESOURCE_EPHEMERAL_STORAGE,
    SIGNAL_IMAGEFS_INODES: RESOURCE_INODES,
    SIGNAL_CONTAINERFS: RESOURCE_EPHEMERAL_STORAGE,
    SIGNAL_CONTAINERFS_INODES: RESOURCE_INODES,
    SIGNAL_PID: RESOURCE_PIDS,
}

SIGNAL_TO_NODE_CONDITION: dict[str, str] = {
    SIGNAL_MEMORY: "MemoryPressure",
    SIGNAL_ALLOCATABLE_MEMORY: "MemoryPressure",
    SIGNAL_NODEFS: "DiskPressure",
    SIGNAL_NODEFS_INODES: "DiskPressure",
    SIGNAL_IMAGEFS: "DiskPressure",
    SIGNAL_IMAGEFS_INODES: "DiskPressure",
    SIGNAL_CONTAINERFS: "DiskPressure",
    SIGNAL_CONTAINERFS_INODES: "DiskPressure",
    SIGNAL_PID: "PIDPressure",
}

OP_LESS_THAN = "LessThan"

# pkg/kubelet/eviction/defaults_linux.go (newest source: imagefs.inodesFree included).
DEFAULT_EVICTION_HARD: dict[str, str] = {
    "memory.available": "100Mi",
    "nodefs.available": "10%",
    "nodefs.inodesFree": "5%",
    "imagefs.available": "15%",
    "imagefs.inodesFree": "5%",
}

# KubeletConfiguration defaulting: evictionPressureTransitionPeriod 0 -> 5m.
DEFAULT_PRESSURE_TRANSITION_PERIOD_NS = 5 * 60 * NS_PER_SECOND

# filesystemLayout -> (dedicated image filesystem, separate container filesystem), as the
# kubelet learns them from HasDedicatedImageFs / HasDedicatedContainerFs.
FILESYSTEM_LAYOUTS: dict[str, tuple[bool, bool]] = {
    "single": (False, False),
    "dedicatedImageFs": (True, False),
    "split": (True, True),
}

# pkg/kubelet/types: NodeAllocatableEnforcementKey and friends.
ENFORCE_PODS = "pods"
_ENFORCE_OPTIONS = ("pods", "system-reserved", "kube-reserved", "none")
_RESERVABLE = ("cpu", "memory", "ephemeral-storage", "pid")


class EvictionConfigError(ValueError):
    """A kubelet configuration the kubelet itself rejects.

    ``path`` is the request field (``config.evictionHard``), ``message`` the kubelet's text.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


# --- float32, the way Go's strconv.ParseFloat(s, 32) and float32 arithmetic round -------------


def _f32(x: float) -> float:
    """float32(x): round a float64 to the nearest float32 (ties to even), ±Inf on overflow."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _f32_from_bits(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def _fraction_to_f32(value: Fraction) -> float:
    """The float32 nearest to an exact rational (ties to even): Go's ParseFloat(s, 32).

    Rounding through float64 first can double-round; the candidates around the float64
    approximation are compared exactly instead.
    """
    if value == 0:
        return 0.0
    try:
        approx = _f32(value.numerator / value.denominator)
    except OverflowError:  # beyond float64
        return math.copysign(math.inf, value)
    if math.isinf(approx):
        return approx
    bits = _f32_bits(approx)
    candidates = [approx]
    for delta in (-1, 1):
        neighbour = _f32_from_bits(bits + delta)
        if not math.isinf(neighbour) and not math.isnan(neighbour):
            candidates.append(neighbour)
    return min(candidates, key=lambda c: (abs(Fraction(c) - value), _f32_bits(c) & 1))


_GO_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_GO_INF = re.compile(r"[+-]?(?:inf|infinity)", re.IGNORECASE)


def _parse_float32(text: str) -> float:
    """strconv.ParseFloat(text, 32) for decimal input: the correctly rounded float32.

    Go's error texts: ``strconv.ParseFloat: parsing "x": invalid syntax`` and ``... value out
    of range``. NaN and hexadecimal floats are refused as invalid syntax (deliberate: a NaN
    threshold makes the kubelet convert NaN to int64, which Go leaves undefined).
    """
    if _GO_INF.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if not _GO_FLOAT.fullmatch(text):
        raise ValueError(f'strconv.ParseFloat: parsing "{text}": invalid syntax')
    result = _fraction_to_f32(Fraction(text))
    if math.isinf(result):
        raise ValueError(f'strconv.ParseFloat: parsing "{text}": value out of range')
    return result


def parse_percentage(text: str) -> float:
    """helpers.go parsePercentage: strip every trailing ``%``, parse as a 32-bit float,
    divide by 100 in float32 (k8s 1.35). Returns the float32 value as a Python float."""
    value = _parse_float32(text.rstrip("%"))
    return _f32(value / 100.0)


# --- thresholds ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ThresholdValue:
    """evictionapi.ThresholdValue: a quantity, or a float32 fraction of capacity."""

    quantity: Quantity | None = None
    percentage: float = 0.0  # a float32 value, as a Python float


@dataclass(frozen=True, slots=True)
class Threshold:
    """evictionapi.Threshold. ``grace_period`` is a Go duration in nanoseconds; 0 = hard."""

    signal: str
    operator: str = OP_LESS_THAN
    value: ThresholdValue = field(default_factory=ThresholdValue)
    grace_period: int = 0
    min_reclaim: ThresholdValue | None = None


def get_threshold_quantity(value: ThresholdValue, capacity: int) -> int | Fraction:
    """api.GetThresholdQuantity (k8s 1.35): the quantity itself (exact), or
    trunc(float64(capacity) × float64(float32 percentage))."""
    if value.quantity is not None:
        return value.quantity.value
    return _float_to_int64(float(capacity) * value.percentage)


def _float_to_int64(x: float) -> int:
    """Go's int64(x) on amd64 (the kubelet's platform): truncation toward zero; a value
    int64 cannot hold (2^63 and up, e.g. 100% of a capacity of 2^63-1, which float64 rounds
    to 2^63) gives the "integer indefinite" -2^63 that CVTTSD2SI returns."""
    if x != x or not -(2.0**63) <= x < 2.0**63:
        return -(2**63)
    return int(x)


def threshold_quantity_string(value: ThresholdValue, capacity: int) -> str:
    """String() of GetThresholdQuantity: the parsed quantity's canonical form, or the
    resolved percentage printed as a BinarySI quantity (as upstream, even for inodes)."""
    if value.quantity is not None:
        return str(value.quantity)
    return format_quantity(_float_to_int64(float(capacity) * value.percentage), BINARY_SI)


def is_hard_eviction_threshold(threshold: Threshold) -> bool:
    """helpers.go isHardEvictionThreshold: grace period zero."""
    return threshold.grace_period == 0


def compare_threshold_value(a: ThresholdValue, b: ThresholdValue) -> bool:
    """helpers.go compareThresholdValue: both quantities and numerically equal, or both
    percentages and equal."""
    if a.quantity is not None:
        return b.quantity is not None and a.quantity.value == b.quantity.value
    if b.quantity is not None:
        return False
    return a.percentage == b.percentage


def _ordered_keys(statements: Mapping[str, object]) -> list[str]:
    """Known signals in canonical order, then unknown keys by name (see module docstring)."""
    return sorted(statements, key=lambda k: (_SIGNAL_INDEX.get(k, len(SIGNALS)), k))


def _check_signal(signal: str, path: str) -> None:
    """The refusal of a signal the kubelet does not know, as helpers.go's parsers word it."""
    if signal not in SIGNAL_TO_RESOURCE:
        raise EvictionConfigError(path, f"unsupported eviction signal {signal}")


def _checked_statements(
    statements: Mapping[str, str] | None, path: str
) -> Iterator[tuple[str, str]]:
    """The statements' (signal, value) pairs in canonical signal order, each signal checked."""
    for signal in _ordered_keys(statements or {}):
        _check_signal(signal, path)
        yield signal, statements[signal]


def _parsed(parse, text: str, path: str, error: type[Exception] = ValueError):
    """``parse(text)``, its ``error`` raised again as an EvictionConfigError at ``path``."""
    try:
        return parse(text)
    except error as exc:
        raise EvictionConfigError(path, str(exc)) from None


def parse_threshold_statement(signal: str, value: str, path: str = "") -> Threshold | None:
    """helpers.go parseThresholdStatement (k8s 1.35); None for a disabled (0% / 100%) one."""
    _check_signal(signal, path)
    if value.endswith("%"):
        if value in ("0%", "100%"):
            return None
        percentage = _parsed(parse_percentage, value, path)
        if percentage < 0:
            raise EvictionConfigError(
                path, f"eviction percentage threshold {signal} must be >= 0%: {value}"
            )
        if percentage > 1:
            raise EvictionConfigError(
                path, f"eviction percentage threshold {signal} must be <= 100%: {value}"
            )
        return Threshold(signal=signal, value=ThresholdValue(percentage=percentage))
    quantity = _parsed(parse_quantity, value, path, QuantityError)
    if quantity.sign() <= 0:
        raise EvictionConfigError(path, f"eviction threshold {signal} must be positive: {quantity}")
    return Threshold(signal=signal, value=ThresholdValue(quantity=quantity))


def parse_threshold_statements(
    statements: Mapping[str, str] | None, path: str = ""
) -> list[Threshold]:
    """helpers.go parseThresholdStatements, in canonical signal order."""
    results: list[Threshold] = []
    if not statements:
        return results
    for signal in _ordered_keys(statements):
        threshold = parse_threshold_statement(signal, statements[signal], path)
        if threshold is not None:
            results.append(threshold)
    return results


def parse_grace_periods(statements: Mapping[str, str] | None, path: str = "") -> dict[str, int]:
    """helpers.go parseGracePeriods: signal → Go duration (ns), never negative."""
    results: dict[str, int] = {}
    for signal, text in _checked_statements(statements, path):
        period = _parsed(parse_go_duration, text, path)
        if period < 0:
            raise EvictionConfigError(
                path, f"invalid eviction grace period specified: {text}, must be a positive value"
            )
        results[signal] = period
    return results


def parse_minimum_reclaims(
    statements: Mapping[str, str] | None, path: str = ""
) -> dict[str, ThresholdValue]:
    """helpers.go parseMinimumReclaims: a percentage must be > 0 (``0%`` is an error), a
    quantity must not be negative (zero allowed)."""
    results: dict[str, ThresholdValue] = {}
    for signal, text in _checked_statements(statements, path):
        if text.endswith("%"):
            percentage = _parsed(parse_percentage, text, path)
            if percentage <= 0:
                raise EvictionConfigError(
                    path, f"eviction percentage minimum reclaim {signal} must be positive: {text}"
                )
            results[signal] = ThresholdValue(percentage=percentage)
            continue
        quantity = _parsed(parse_quantity, text, path, QuantityError)
        if quantity.sign() < 0:
            raise EvictionConfigError(
                path, f"negative eviction minimum reclaim specified for {signal}"
            )
        results[signal] = ThresholdValue(quantity=quantity)
    return results


def add_allocatable_thresholds(thresholds: Sequence[Threshold]) -> list[Threshold]:
    """helpers.go addAllocatableThresholds: append an allocatableMemory.available copy (same
    operator, value and min-reclaim; grace 0) of every HARD memory.available threshold."""
    extra = [
        Threshold(
            signal=SIGNAL_ALLOCATABLE_MEMORY,
            operator=t.operator,
            value=t.value,
            min_reclaim=t.min_reclaim,
        )
        for t in thresholds
        if t.signal == SIGNAL_MEMORY and is_hard_eviction_threshold(t)
    ]
    return [*thresholds, *extra]


def parse_threshold_config(
    allocatable_config: Iterable[str],
    eviction_hard: Mapping[str, str] | None,
    eviction_soft: Mapping[str, str] | None,
    eviction_soft_grace_period: Mapping[str, str] | None,
    eviction_minimum_reclaim: Mapping[str, str] | None,
    *,
    path: str = "config",
) -> list[Threshold]:
    """helpers.go ParseThresholdConfig (k8s 1.35).

    Order of validation as upstream: hard statements, soft statements, grace periods,
    minimum reclaims, then the missing-grace check. Min-reclaim for a signal is attached to
    every threshold of that signal; grace periods and min-reclaims of signals without a
    threshold are ignored, as upstream. With ``pods`` in ``allocatable_config`` the hard
    memory.available thresholds are copied as allocatableMemory.available.
    """
    hard = parse_threshold_statements(eviction_hard, f"{path}.evictionHard")
    soft = parse_threshold_statements(eviction_soft, f"{path}.evictionSoft")
    grace = parse_grace_periods(eviction_soft_grace_period, f"{path}.evictionSoftGracePeriod")
    reclaims = parse_minimum_reclaims(eviction_minimum_reclaim, f"{path}.evictionMinimumReclaim")
    with_grace = []
    for threshold in soft:
        period = grace.get(threshold.signal)
        if period is None:
            raise EvictionConfigError(
                f"{path}.evictionSoftGracePeriod",
                f"grace period must be specified for the soft eviction threshold {threshold.signal}",
            )
        with_grace.append(replace(threshold, grace_period=period))
    results = [
        replace(t, min_reclaim=reclaims[t.signal]) if t.signal in reclaims else t
        for t in (*hard, *with_grace)
    ]
    if ENFORCE_PODS in allocatable_config:
        results = add_allocatable_thresholds(results)
    return results


def update_container_fs_thresholds(
    thresholds: Sequence[Threshold], image_fs: bool, separate_container_image_fs: bool
) -> list[Threshold]:
    """helpers.go UpdateContainerFsThresholds (k8s 1.35): containerfs.* thresholds are not
    user-controlled. On a single filesystem, or with separate image and container
    filesystems, they copy the nodefs.* thresholds (hard and soft); with a dedicated image
    filesystem holding the writable layers they copy the imagefs.* thresholds. A user-given
    containerfs threshold is replaced in place (the kubelet logs and ignores it)."""
    source_available, source_inodes = (
        (SIGNAL_IMAGEFS, SIGNAL_IMAGEFS_INODES)
        if image_fs and not separate_container_image_fs
        else (SIGNAL_NODEFS, SIGNAL_NODEFS_INODES)
    )
    sources: dict[tuple[str, bool], Threshold] = {}
    for t in thresholds:
        if t.signal in (source_available, source_inodes):
            sources[(t.signal, is_hard_eviction_threshold(t))] = t  # last one wins, as upstream

    def derived(target: str, source: str, hard: bool) -> Threshold | None:
        src = sources.get((source, hard))
        if src is None:
            return None
        return Threshold(
            signal=target,
            operator=src.operator,
            value=src.value,
            grace_period=0 if hard else src.grace_period,
            min_reclaim=src.min_reclaim,
        )

    slots = [
        (SIGNAL_CONTAINERFS, source_available, True),
        (SIGNAL_CONTAINERFS, source_available, False),
        (SIGNAL_CONTAINERFS_INODES, source_inodes, True),
        (SIGNAL_CONTAINERFS_INODES, source_inodes, False),
    ]
    result = list(thresholds)
    for target, source, hard in slots:
        replacement = derived(target, source, hard)
        index = -1
        for i, t in enumerate(result):
            if t.signal == target and is_hard_eviction_threshold(t) == hard:
                index = i  # the last user-given one is the one replaced, as upstream
        if index >= 0:
            if replacement is None:
                del result[index]
            else:
                result[index] = replacement
        elif replacement is not None:
            result.append(replacement)
    return result


# --- the whole configuration of one decision -------------------------------------------------


def split_flag_map(text: str, separator: str, path: str) -> dict[str, str]:
    """The kubelet's map flags: ``k<v,k<v`` (LangleSeparatedMapStringString, eviction-hard
    and eviction-soft) or ``k=v,k=v`` (MapStringString). Empty items are skipped, keys and
    values trimmed, a later key overrides an earlier one."""
    result: dict[str, str] = {}
    for item in text.split(","):
        if not item:
            continue
        parts = item.split(separator, 1)
        if len(parts) != 2:
            raise EvictionConfigError(path, f"malformed pair, expect string{separator}string")
        result[parts[0].strip()] = parts[1].strip()
    return result


def _as_map(raw: object, separator: str, path: str) -> dict[str, str] | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        return split_flag_map(raw, separator, path)
    if isinstance(raw, Mapping):
        out: dict[str, str] = {}
        for key, value in raw.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise EvictionConfigError(path, "expected a map of strings to strings")
            out[key] = value
        return out
    raise EvictionConfigError(path, "expected a map of strings or a flag string")


def _parse_reserved(raw: object, path: str) -> dict[str, Quantity]:
    """cmd/kubelet/app/server.go parseResourceList: cpu, memory, ephemeral-storage and pid may
    be reserved; quantities must parse and not be negative."""
    mapping = _as_map(raw, "=", path) or {}
    result: dict[str, Quantity] = {}
    for name in sorted(mapping):
        text = mapping[name]
        if name not in _RESERVABLE:
            raise EvictionConfigError(path, f'cannot reserve "{name}" resource')
        try:
            quantity = parse_quantity(text)
        except QuantityError as exc:
            raise EvictionConfigError(
                path, f'failed to parse quantity "{text}" for "{name}" resource: {exc}'
            ) from None
        if quantity.sign() < 0:
            raise EvictionConfigError(
                path, f'resource quantity for "{name}" cannot be negative: {text}'
            )
        result[name] = quantity
    return result


def _parse_enforce(raw: object, path: str) -> tuple[str, ...]:
    if raw is None:
        return (ENFORCE_PODS,)
    if isinstance(raw, str):
        values = [v.strip() for v in raw.split(",") if v.strip()]
    elif isinstance(raw, Sequence) and all(isinstance(v, str) for v in raw):
        values = list(raw)
    else:
        raise EvictionConfigError(path, "expected a list of strings")
    for value in values:
        if value not in _ENFORCE_OPTIONS:
            raise EvictionConfigError(
                path,
                f'invalid configuration: option "{value}" specified for enforceNodeAllocatable '
                '(--enforce-node-allocatable). Valid options are "pods", "system-reserved", '
                '"kube-reserved", or "none"',
            )
        if value == "none" and len(values) > 1:
            raise EvictionConfigError(
                path,
                "invalid configuration: enforceNodeAllocatable (--enforce-node-allocatable) may "
                'not contain additional enforcements when "none" is specified',
            )
    return tuple(values)


@dataclass(frozen=True, slots=True)
class EvictionConfig:
    """Everything one eviction pass needs from the kubelet configuration, parsed."""

    thresholds: tuple[Threshold, ...]  # what the eviction manager evaluates
    hard_eviction_thresholds: tuple[Threshold, ...]  # evictionHard only: node allocatable
    max_pod_grace_period_seconds: int = 0
    pressure_transition_period: int = DEFAULT_PRESSURE_TRANSITION_PERIOD_NS
    kube_reserved: dict[str, Quantity] = field(default_factory=dict)
    system_reserved: dict[str, Quantity] = field(default_factory=dict)
    enforce_node_allocatable: tuple[str, ...] = (ENFORCE_PODS,)
    filesystem_layout: str = "single"
    local_storage_capacity_isolation: bool = True

    @property
    def dedicated_image_fs(self) -> bool:
        return FILESYSTEM_LAYOUTS[self.filesystem_layout][0]

    @property
    def split_container_image_fs(self) -> bool:
        return FILESYSTEM_LAYOUTS[self.filesystem_layout][1]


def build_eviction_config(
    raw: Mapping[str, object] | None, *, path: str = "config"
) -> EvictionConfig:
    """A request's ``config`` (KubeletConfiguration spellings) → EvictionConfig.

    * ``evictionHard`` absent or null → the Linux defaults (DEFAULT_EVICTION_HARD); empty
      (``""`` or ``{}``) → no hard thresholds; otherwise only the given signals, unless
      ``mergeDefaultEvictionSettings`` is true, in which case the defaults fill the signals
      not given (k8s 1.32+).
    * Map-valued settings take either the KubeletConfiguration map or the flag string
      (``memory.available<100Mi,...`` for evictionHard/evictionSoft, ``k=v,...`` otherwise).
    * ``evictionPressureTransitionPeriod`` 0 or absent → 5m; ``enforceNodeAllocatable``
      absent → ["pods"]; ``filesystemLayout`` single | dedicatedImageFs | split;
      ``localStorageCapacityIsolation`` defaults to true.

    Then ParseThresholdConfig and UpdateContainerFsThresholds run as in the kubelet; node
    allocatable uses ParseThresholdConfig([], evictionHard) alone (getKubeletHardEvictionThresholds).
    """
    raw = raw or {}
    hard = _as_map(raw.get("evictionHard"), "<", f"{path}.evictionHard")
    if hard is None:
        hard = dict(DEFAULT_EVICTION_HARD)
    elif raw.get("mergeDefaultEvictionSettings") is True:
        hard = {**DEFAULT_EVICTION_HARD, **hard}
    soft = _as_map(raw.get("evictionSoft"), "<", f"{path}.evictionSoft")
    grace = _as_map(raw.get("evictionSoftGracePeriod"), "=", f"{path}.evictionSoftGracePeriod")
    reclaim = _as_map(raw.get("evictionMinimumReclaim"), "=", f"{path}.evictionMinimumReclaim")
    enforce = _parse_enforce(raw.get("enforceNodeAllocatable"), f"{path}.enforceNodeAllocatable")

    layout = raw.get("filesystemLayout") or "single"
    if layout not in FILESYSTEM_LAYOUTS:
        raise EvictionConfigError(
            f"{path}.filesystemLayout", 'must be one of "single", "dedicatedImageFs", "split"'
        )
    image_fs, split_fs = FILESYSTEM_LAYOUTS[layout]

    thresholds = parse_threshold_config(enforce, hard, soft, grace, reclaim, path=path)
    thresholds = update_container_fs_thresholds(thresholds, image_fs, split_fs)
    hard_only = parse_threshold_config((), hard, None, None, None, path=path)

    max_grace = raw.get("evictionMaxPodGracePeriod")
    if max_grace is None:
        max_grace = 0
    if (
        isinstance(max_grace, bool)
        or not isinstance(max_grace, int)
        or not (-(2**31) <= max_grace < 2**31)
    ):
        raise EvictionConfigError(
            f"{path}.evictionMaxPodGracePeriod", "must be an int32 number of seconds"
        )

    transition_text = raw.get("evictionPressureTransitionPeriod")
    transition = 0
    if transition_text is not None:
        if not isinstance(transition_text, str):
            raise EvictionConfigError(
                f"{path}.evictionPressureTransitionPeriod", "must be a duration such as 5m"
            )
        try:
            transition = parse_go_duration(transition_text)
        except ValueError as exc:
            raise EvictionConfigError(
                f"{path}.evictionPressureTransitionPeriod", str(exc)
            ) from None
    if transition == 0:
        transition = DEFAULT_PRESSURE_TRANSITION_PERIOD_NS

    isolation = raw.get("localStorageCapacityIsolation")
    return EvictionConfig(
        thresholds=tuple(thresholds),
        hard_eviction_thresholds=tuple(hard_only),
        max_pod_grace_period_seconds=max_grace,
        pressure_transition_period=transition,
        kube_reserved=_parse_reserved(raw.get("kubeReserved"), f"{path}.kubeReserved"),
        system_reserved=_parse_reserved(raw.get("systemReserved"), f"{path}.systemReserved"),
        enforce_node_allocatable=enforce,
        filesystem_layout=layout,
        local_storage_capacity_isolation=True if isolation is None else bool(isolation),
    )
