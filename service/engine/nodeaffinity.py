"""Required node affinity and nodeSelector matching: component-helpers
scheduling/corev1/nodeaffinity ``GetRequiredNodeAffinity(pod).Match(node)`` (k8s 1.35).

Used by the kubelet admission predicate and the scheduler's NodeAffinity filter.

* ``spec.nodeSelector``: every label must be present on the node with an equal value.
* Required node affinity terms are ORed; within a term, expressions (and fields) are ANDed.
  A term with neither expressions nor fields is skipped (selects nothing), so a list of
  only such terms, or an empty list, matches no node.
* matchExpressions operators In, NotIn, Exists, DoesNotExist, Gt, Lt (labels.Requirement
  semantics: NotIn and DoesNotExist match a node without the key; Gt/Lt parse the node's
  value as a base-10 int64 and fail when it does not parse).
* matchFields: only ``metadata.name`` is a node field; operators In / NotIn with exactly one
  value. A node with an empty name has no fields, and then matchFields are not checked.
* A term that fails to parse (unknown operator, wrong number of values, Gt/Lt value not an
  int64) never matches; other terms still may (LazyErrorNodeSelector). Label key/value
  syntax is not re-validated here: the API server has already validated stored pods.
"""

from __future__ import annotations

from service.engine.objects import Node, NodeSelectorRequirement, NodeSelectorTerm, Pod
from service.engine.tolerations import parse_int64

__all__ = [
    "matches_node_selector",
    "matches_node_selector_and_affinity",
    "matches_node_selector_terms",
]

_NODE_NAME_FIELD = "metadata.name"


def _expression_matches(req: NodeSelectorRequirement, labels: dict[str, str]) -> bool | None:
    """One labels.Requirement; None when it does not parse (the whole term then fails)."""
    op = req.operator
    values = req.values
    if op == "In" or op == "NotIn":
        if not values:
            return None
        value = labels.get(req.key)
        if op == "In":
            return value is not None and value in values
        return value is None or value not in values
    if op == "Exists" or op == "DoesNotExist":
        if values:
            return None
        return (req.key in labels) == (op == "Exists")
    if op == "Gt" or op == "Lt":
        if len(values) != 1:
            return None
        bound = parse_int64(values[0])
        if bound is None:
            return None
        value = labels.get(req.key)
        if value is None:
            return False
        have = parse_int64(value)
        if have is None:
            return False
        return have > bound if op == "Gt" else have < bound
    return None


def _field_matches(req: NodeSelectorRequirement, fields: dict[str, str]) -> bool | None:
    op = req.operator
    if op != "In" and op != "NotIn":
        return None
    if len(req.values) != 1:
        return None
    have = fields.get(req.key, "")
    if op == "In":
        return have == req.values[0]
    return have != req.values[0]


def _term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    """nodeSelectorTerm.match (k8s 1.35); a term that fails to parse does not match."""
    if term.match_expressions:
        labels = node.labels
        for req in term.match_expressions:
            if not _expression_matches(req, labels):
                return False
    if term.match_fields:
        fields = {_NODE_NAME_FIELD: node.name} if node.name else {}
        for req in term.match_fields:
            ok = _field_matches(req, fields)
            if ok is None or (fields and not ok):
                return False
    return True


def matches_node_selector_terms(terms: tuple[NodeSelectorTerm, ...], node: Node) -> bool:
    """LazyErrorNodeSelector.Match (k8s 1.35): terms ORed; empty terms select nothing."""
    for term in terms:
        if not term.match_expressions and not term.match_fields:
            continue
        if _term_matches(term, node):
            return True
    return False


def matches_node_selector(pod: Pod, node: Node) -> bool:
    """labels.SelectorFromSet(pod.spec.nodeSelector).Matches(node labels)."""
    labels = node.labels
    return all(labels.get(key) == value for key, value in pod.node_selector.items())


def matches_node_selector_and_affinity(pod: Pod, node: Node) -> bool:
    """GetRequiredNodeAffinity(pod).Match(node) (component-helpers nodeaffinity, k8s 1.35):
    the pod's nodeSelector and its required node affinity both match the node."""
    if pod.node_selector and not matches_node_selector(pod, node):
        return False
    terms = pod.required_node_affinity
    if terms is None:
        return True
    return matches_node_selector_terms(terms, node)
