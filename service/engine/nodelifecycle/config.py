"""The node lifecycle controller's flags, as one settings object.

Defaults are kube-controller-manager's (cmd/kube-controller-manager/app/options and the
NodeLifecycleControllerConfiguration defaults; k8s 1.32+ for the 50 s monitor grace) and kube-apiserver's for DefaultTolerationSeconds.
``config_from_dict`` reads the API's camelCase form (Go duration strings for durations)
and is the one place the values are checked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from service.engine.duration import parse_go_duration
from service.engine.nodelifecycle.clock import SECOND

__all__ = ["DEFAULT_CONFIG", "MODES", "ConfigError", "NodeLifecycleConfig", "config_from_dict"]

MODES = ("taint", "legacy")


@dataclass(frozen=True, slots=True)
class NodeLifecycleConfig:
    node_eviction_rate: float = 0.1  # --node-eviction-rate
    secondary_node_eviction_rate: float = 0.01  # --secondary-node-eviction-rate
    large_cluster_size_threshold: int = 50  # --large-cluster-size-threshold
    unhealthy_zone_threshold: float = 0.55  # --unhealthy-zone-threshold
    node_monitor_grace_period_ns: int = 50 * SECOND  # --node-monitor-grace-period (>= 1.32)
    node_startup_grace_period_ns: int = 60 * SECOND  # --node-startup-grace-period
    node_monitor_period_ns: int = 5 * SECOND  # --node-monitor-period
    # "taint" (taint-based eviction, the only path since 1.27) or "legacy" (the pre-1.27
    # --enable-taint-manager=false path: pods deleted after --pod-eviction-timeout).
    mode: str = "taint"
    pod_eviction_timeout_ns: int = 300 * SECOND  # --pod-eviction-timeout (legacy only)
    apply_default_tolerations: bool = False
    default_not_ready_toleration_seconds: int = 300  # kube-apiserver flag
    default_unreachable_toleration_seconds: int = 300  # kube-apiserver flag
    # Test hooks: Kubernetes' own unit tests replace enterPartialDisruptionFunc /
    # enterFullDisruptionFunc with constants; None means the real ReducedQPSFunc /
    # HealthyQPSFunc.
    partial_disruption_qps_override: float | None = None
    full_disruption_qps_override: float | None = None


DEFAULT_CONFIG = NodeLifecycleConfig()


class ConfigError(ValueError):
    """A configuration value Verdict cannot use; ``path`` is the camelCase field name."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def _number(data: Mapping[str, Any], key: str, default: float) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(key, "must be a number")
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise ConfigError(key, "must be a finite number")
    return value


def _rate(data: Mapping[str, Any], key: str, default: float) -> float:
    value = _number(data, key, default)
    if value < 0:
        raise ConfigError(key, "must not be negative (nodes per second)")
    return value


def _duration(data: Mapping[str, Any], key: str, default_ns: int, *, positive: bool) -> int:
    if key not in data:
        return default_ns
    value = data[key]
    if not isinstance(value, str):
        raise ConfigError(key, 'must be a Go duration string such as "50s", "5m" or "1h30m"')
    try:
        ns = parse_go_duration(value)
    except ValueError as exc:
        raise ConfigError(key, f'{exc}; expected a Go duration such as "50s"') from None
    if ns < 0 or (positive and ns == 0):
        raise ConfigError(key, "must be positive" if positive else "must not be negative")
    return ns


_KNOWN = frozenset(
    {
        "nodeEvictionRate",
        "secondaryNodeEvictionRate",
        "largeClusterSizeThreshold",
        "unhealthyZoneThreshold",
        "nodeMonitorGracePeriod",
        "nodeStartupGracePeriod",
        "nodeMonitorPeriod",
        "mode",
        "podEvictionTimeout",
        "applyDefaultTolerations",
    }
)


def config_from_dict(data: Mapping[str, Any] | None) -> NodeLifecycleConfig:
    """The API's ``config`` object → NodeLifecycleConfig; raises ConfigError naming the field.

    Checks: rates >= 0; largeClusterSizeThreshold an integer >= 0; unhealthyZoneThreshold in
    (0, 1]; durations are Go duration strings (monitor period > 0, the others >= 0); mode is
    "taint" or "legacy"; unknown fields are rejected.
    """
    data = data or {}
    if not isinstance(data, Mapping):
        raise ConfigError("config", "must be an object")
    for key in data:
        if key not in _KNOWN:
            raise ConfigError(key, "unknown field")
    d = DEFAULT_CONFIG
    threshold = data.get("largeClusterSizeThreshold", d.large_cluster_size_threshold)
    if isinstance(threshold, float) and threshold.is_integer():
        threshold = int(threshold)
    if isinstance(threshold, bool) or not isinstance(threshold, int):
        raise ConfigError("largeClusterSizeThreshold", "must be an integer")
    if threshold < 0:
        raise ConfigError("largeClusterSizeThreshold", "must not be negative")
    if threshold > 2**31 - 1:
        raise ConfigError("largeClusterSizeThreshold", "must fit in an int32")
    unhealthy = _number(data, "unhealthyZoneThreshold", d.unhealthy_zone_threshold)
    if not 0 < unhealthy <= 1:
        raise ConfigError("unhealthyZoneThreshold", "must be in (0, 1]")
    mode = data.get("mode", d.mode)
    if mode not in MODES:
        raise ConfigError("mode", 'must be "taint" or "legacy"')
    apply_defaults = data.get("applyDefaultTolerations", d.apply_default_tolerations)
    if not isinstance(apply_defaults, bool):
        raise ConfigError("applyDefaultTolerations", "must be a boolean")
    return NodeLifecycleConfig(
        node_eviction_rate=_rate(data, "nodeEvictionRate", d.node_eviction_rate),
        secondary_node_eviction_rate=_rate(
            data, "secondaryNodeEvictionRate", d.secondary_node_eviction_rate
        ),
        large_cluster_size_threshold=threshold,
        unhealthy_zone_threshold=unhealthy,
        node_monitor_grace_period_ns=_duration(
            data, "nodeMonitorGracePeriod", d.node_monitor_grace_period_ns, positive=False
        ),
        node_startup_grace_period_ns=_duration(
            data, "nodeStartupGracePeriod", d.node_startup_grace_period_ns, positive=False
        ),
        node_monitor_period_ns=_duration(
            data, "nodeMonitorPeriod", d.node_monitor_period_ns, positive=True
        ),
        mode=mode,
        pod_eviction_timeout_ns=_duration(
            data, "podEvictionTimeout", d.pod_eviction_timeout_ns, positive=False
        ),
        apply_default_tolerations=apply_defaults,
    )
