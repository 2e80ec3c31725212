"""Toleration matching: one toleration against one taint, and the first untolerated taint.

The one toleration matcher of the engine (kubelet admission, scheduler TaintToleration, node
lifecycle taint-based eviction all use it). Mirrors k8s.io/api core/v1
``Toleration.ToleratesTaint`` and component-helpers ``FindMatchingUntoleratedTaint`` (k8s 1.35).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from service.engine.objects import Taint, Toleration

__all__ = ["find_untolerated", "parse_int64", "tolerates", "tolerates_any"]

# strconv.ParseInt(s, 10, 64): optional sign, ASCII digits, nothing else (no spaces, no "_").
_INT64 = re.compile(r"[+-]?[0-9]+\Z")
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64): the value, or None where Go returns an error."""
    if not _INT64.match(text):
        return None
    value = int(text)
    if value < _INT64_MIN or value > _INT64_MAX:
        return None
    return value


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """v1.Toleration.ToleratesTaint (k8s.io/api core/v1 toleration.go, k8s 1.35).

    A non-empty effect must equal the taint's; a non-empty key must equal the taint's (an
    empty key with Exists matches every key). Operator "" or Equal: values equal; Exists: any
    value; Lt / Gt (1.35 alpha TaintTolerationComparisonOperators; the API rejects them
    when the gate is off, so a stored pod only carries them when it is on): both values
    parsed as base-10 int64, tolerated when taint < toleration (Lt) or taint > toleration
    (Gt), not tolerated when either fails to parse. Any other operator: not tolerated.
    ``tolerationSeconds`` plays no part.
    """
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator
    if op == "" or op == "Equal":
        return toleration.value == taint.value
    if op == "Exists":
        return True
    if op == "Lt" or op == "Gt":
        taint_value = parse_int64(taint.value)
        toleration_value = parse_int64(toleration.value)
        if taint_value is None or toleration_value is None:
            return False
        if op == "Lt":
            return taint_value < toleration_value
        return taint_value > toleration_value
    return False


def tolerates_any(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    """component-helpers TolerationsTolerateTaint (k8s 1.35): some toleration tolerates it."""
    return any(tolerates(toleration, taint) for toleration in tolerations)


def find_untolerated(
    taints: Iterable[Taint],
    tolerations: Iterable[Toleration],
    effects: Collection[str] | None = None,
) -> Taint | None:
    """component-helpers FindMatchingUntoleratedTaint (k8s 1.35): the first taint, in node
    order, whose effect is in ``effects`` (all effects when None) and that no toleration
    tolerates; None when every such taint is tolerated."""
    tolerations = tuple(tolerations)
    for taint in taints:
        if effects is not None and taint.effect not in effects:
            continue
        if not tolerates_any(tolerations, taint):
            return taint
    return None
