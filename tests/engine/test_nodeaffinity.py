"""Required node affinity and nodeSelector matching (service.engine.nodeaffinity),
component-helpers nodeaffinity semantics: terms ORed, requirements ANDed, empty terms
select nothing, parse errors fail only their term."""

from __future__ import annotations

import pytest

from service.engine.nodeaffinity import matches_node_selector_and_affinity
from service.engine.objects import Node, NodeSelectorRequirement, NodeSelectorTerm, Pod

NODE = Node(name="n1", labels={"zone": "a", "gen": "5", "gpu": "yes"})


def _req(key, op, *values):
    return NodeSelectorRequirement(key=key, operator=op, values=tuple(values))


def _term(*exprs, fields=()):
    return NodeSelectorTerm(match_expressions=tuple(exprs), match_fields=tuple(fields))


def _pod(terms=None, selector=None):
    return Pod(namespace="ns", name="p", required_node_affinity=terms, node_selector=selector or {})


CASES = [
    pytest.param(_pod(), True, id="nothing required"),
    pytest.param(_pod(selector={"zone": "a"}), True, id="selector match"),
    pytest.param(_pod(selector={"zone": "b"}), False, id="selector value differs"),
    pytest.param(_pod(selector={"rack": ""}), False, id="selector key missing"),
    pytest.param(_pod(terms=()), False, id="empty term list matches nothing"),
    pytest.param(_pod(terms=(_term(),)), False, id="only an empty term matches nothing"),
    pytest.param(
        _pod(terms=(_term(), _term(_req("zone", "In", "a")))), True, id="empty term skipped"
    ),
    pytest.param(_pod(terms=(_term(_req("zone", "In", "b", "a")),)), True, id="In"),
    pytest.param(_pod(terms=(_term(_req("zone", "In", "b")),)), False, id="In no value"),
    pytest.param(_pod(terms=(_term(_req("rack", "In", "a")),)), False, id="In missing key"),
    pytest.param(_pod(terms=(_term(_req("zone", "NotIn", "b")),)), True, id="NotIn"),
    pytest.param(_pod(terms=(_term(_req("rack", "NotIn", "b")),)), True, id="NotIn missing key"),
    pytest.param(_pod(terms=(_term(_req("zone", "NotIn", "a")),)), False, id="NotIn hit"),
    pytest.param(_pod(terms=(_term(_req("gpu", "Exists")),)), True, id="Exists"),
    pytest.param(_pod(terms=(_term(_req("rack", "DoesNotExist")),)), True, id="DoesNotExist"),
    pytest.param(_pod(terms=(_term(_req("gpu", "DoesNotExist")),)), False, id="DoesNotExist hit"),
    pytest.param(_pod(terms=(_term(_req("gen", "Gt", "4")),)), True, id="Gt"),
    pytest.param(_pod(terms=(_term(_req("gen", "Gt", "5")),)), False, id="Gt equal"),
    pytest.param(_pod(terms=(_term(_req("gen", "Lt", "6")),)), True, id="Lt"),
    pytest.param(_pod(terms=(_term(_req("zone", "Lt", "6")),)), False, id="Lt label not a number"),
    pytest.param(_pod(terms=(_term(_req("rack", "Gt", "1")),)), False, id="Gt missing key"),
    pytest.param(
        _pod(terms=(_term(_req("zone", "In", "a"), _req("gpu", "DoesNotExist")),)),
        False,
        id="expressions ANDed",
    ),
    pytest.param(
        _pod(terms=(_term(_req("zone", "In", "b")), _term(_req("gpu", "Exists")))),
        True,
        id="terms ORed",
    ),
    pytest.param(
        _pod(terms=(_term(fields=[_req("metadata.name", "In", "n1")]),)), True, id="field In"
    ),
    pytest.param(
        _pod(terms=(_term(fields=[_req("metadata.name", "NotIn", "n1")]),)),
        False,
        id="field NotIn",
    ),
    pytest.param(
        _pod(terms=(_term(fields=[_req("metadata.name", "In", "n1", "n2")]),)),
        False,
        id="field In with two values is a parse error",
    ),
    pytest.param(
        _pod(terms=(_term(fields=[_req("metadata.name", "Exists")]),)),
        False,
        id="field Exists unsupported",
    ),
    pytest.param(
        _pod(terms=(_term(_req("zone", "In", "a"), fields=[_req("metadata.name", "In", "n2")]),)),
        False,
        id="fields ANDed with expressions",
    ),
    pytest.param(
        _pod(terms=(_term(_req("zone", "Bogus", "a")), _term(_req("gpu", "Exists")))),
        True,
        id="bad operator fails its term only",
    ),
    pytest.param(_pod(terms=(_term(_req("zone", "In")),)), False, id="In without values"),
    pytest.param(_pod(terms=(_term(_req("gpu", "Exists", "x")),)), False, id="Exists with values"),
    pytest.param(_pod(terms=(_term(_req("gen", "Gt", "x")),)), False, id="Gt bad value"),
    pytest.param(_pod(terms=(_term(_req("gen", "Gt", "1", "2")),)), False, id="Gt two values"),
    pytest.param(
        _pod(terms=(_term(_req("gpu", "Exists")),), selector={"zone": "b"}),
        False,
        id="selector and affinity both required",
    ),
]


@pytest.mark.parametrize(("pod", "expected"), CASES)
def test_matches_node_selector_and_affinity(pod, expected):
    assert matches_node_selector_and_affinity(pod, NODE) is expected


def test_match_fields_ignored_for_a_nameless_node():
    pod = _pod(terms=(_term(fields=[_req("metadata.name", "In", "n1")]),))
    assert matches_node_selector_and_affinity(pod, Node(name="")) is True
