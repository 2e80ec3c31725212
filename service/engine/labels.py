"""Label selectors (k8s.io/apimachinery labels, metav1.LabelSelectorAsSelector).

A nil selector selects nothing; an empty one ({}) selects everything; otherwise every
matchLabels pair and every matchExpressions requirement (In, NotIn, Exists, DoesNotExist)
must hold. Selectors reaching the engine were validated at ingest.
"""

from __future__ import annotations

from collections.abc import Mapping

from service.engine.objects import LabelSelector

__all__ = ["selector_matches"]


def selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """LabelSelectorAsSelector(selector).Matches(labels)."""
    if selector is None:
        return False
    for key, value in selector.match_labels.items():
        if labels.get(key) != value:
            return False
    for req in selector.match_expressions:
        have = labels.get(req.key)
        op = req.operator
        if op == "In":
            if have is None or have not in req.values:
                return False
        elif op == "NotIn":
            if have is not None and have in req.values:
                return False
        elif op == "Exists":
            if have is None:
                return False
        elif op == "DoesNotExist":
            if have is not None:
                return False
        else:
            return False
    return True
