"""The API's selectors: label selectors, node selector terms and preferred node-affinity
terms, with the API server's validation of them (pods, workload controllers, volumes and
the KubeSchedulerConfiguration read them)."""

from __future__ import annotations

import re

from service.engine import objects as m
from service.engine.resources import (
    is_qualified_name,
)
from service.engine.tolerations import parse_int64
from service.ingest import wire
from service.ingest.errors import FieldError


def selector_requirements(reqs: list[wire.Requirement] | None, cls: type) -> tuple:
    if not reqs:
        return ()
    return tuple(cls(key=r.key, operator=r.operator, values=tuple(r.values or ())) for r in reqs)


def node_selector_term(raw: wire.NodeSelectorTerm | None) -> m.NodeSelectorTerm:
    if raw is None:
        return m.NodeSelectorTerm()
    return m.NodeSelectorTerm(
        match_expressions=selector_requirements(raw.match_expressions, m.NodeSelectorRequirement),
        match_fields=selector_requirements(raw.match_fields, m.NodeSelectorRequirement),
    )


def preferred_terms(
    raw: list[wire.PreferredSchedulingTerm] | None, path: str, errors: list[FieldError]
) -> tuple[m.PreferredSchedulingTerm, ...] | None:
    """Preferred node-affinity terms; the API server's validation: weight in 1..100."""
    if raw is None:
        return None
    out = []
    for i, term in enumerate(raw):
        if not 1 <= term.weight <= 100:
            errors.append(FieldError(f"{path}[{i}].weight", "must be in the range 1-100"))
        out.append(
            m.PreferredSchedulingTerm(
                weight=term.weight, preference=node_selector_term(term.preference)
            )
        )
    return tuple(out)


_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def requirement_errors(req, at: str, operators: tuple[str, ...], errors: list[FieldError]) -> None:
    """The API server's checks of one selector requirement at ``at``: a known operator,
    values for In / NotIn only, one integer for Gt / Lt (where ``operators`` has them: a
    node selector's), a key (ValidateLabelSelectorRequirement and
    ValidateNodeSelectorRequirement)."""
    values = req.values or []
    if req.operator not in operators:
        errors.append(
            FieldError(
                f"{at}.operator",
                f'Unsupported value: "{req.operator}": supported values: '
                + ", ".join(f'"{o}"' for o in operators),
            )
        )
    elif req.operator in ("In", "NotIn") and not values:
        errors.append(
            FieldError(
                f"{at}.values",
                "Required value: must be specified when `operator` is 'In' or 'NotIn'",
            )
        )
    elif req.operator in ("Exists", "DoesNotExist") and values:
        errors.append(
            FieldError(
                f"{at}.values",
                "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
        )
    elif req.operator in ("Gt", "Lt") and (len(values) != 1 or parse_int64(values[0]) is None):
        errors.append(
            FieldError(
                f"{at}.values",
                "Invalid value: must be a single integer value when `operator` is 'Lt' or 'Gt'",
            )
        )
    if not req.key:
        errors.append(FieldError(f"{at}.key", "Required value"))


def label_selector(
    raw: wire.LabelSelector | None, path: str, errors: list[FieldError]
) -> m.LabelSelector | None:
    """A metav1.LabelSelector, validated as the API server validates one
    (ValidateLabelSelector): known operators, values for In / NotIn only."""
    if raw is None:
        return None
    requirements = raw.match_expressions or ()
    for i, req in enumerate(requirements):
        requirement_errors(req, f"{path}.matchExpressions[{i}]", _SELECTOR_OPERATORS, errors)
    return m.LabelSelector(
        match_labels=raw.match_labels or {},
        match_expressions=selector_requirements(raw.match_expressions, m.LabelSelectorRequirement),
    )


DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")


def label_name(value: str, path: str, errors: list[FieldError]) -> None:
    """ValidateLabelName: a qualified name (optional DNS-1123 subdomain prefix and "/", then
    at most 63 alphanumerics, '-', '_' or '.', alphanumeric at both ends)."""
    if not is_qualified_name(value):
        errors.append(
            FieldError(
                path,
                f'Invalid value: "{value}": must be a qualified name: an optional DNS-1123 '
                "subdomain prefix and '/', then a name part of at most 63 characters, "
                "alphanumeric, '-', '_' or '.', starting and ending with an alphanumeric "
                "character (regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
                "[A-Za-z0-9]')",
            )
        )


def label_keys(
    keys: list[str] | None, selector: wire.LabelSelector | None, path: str
) -> list[FieldError]:
    """validateLabelKeys: matchLabelKeys / mismatchLabelKeys need a labelSelector and hold
    label names."""
    if not keys:
        return []
    if selector is None:
        return [FieldError(path, "Forbidden: must not be specified when labelSelector is not set")]
    errors: list[FieldError] = []
    for i, key in enumerate(keys):
        label_name(key, f"{path}[{i}]", errors)
    return errors
