"""Toleration matching (service.engine.tolerations): every case of the nodelifecycle
conformance group v1.Toleration.ToleratesTaint, plus operator and parsing edges and
find_untolerated."""

from __future__ import annotations

import pytest

from service.engine.objects import Taint, Toleration
from service.engine.tolerations import find_untolerated, parse_int64, tolerates, tolerates_any
from tests.engine.kubelet.helpers import conformance_cases


def _toleration(d: dict) -> Toleration:
    return Toleration(
        key=d.get("key", ""),
        operator=d.get("operator", ""),
        value=d.get("value", ""),
        effect=d.get("effect", ""),
        toleration_seconds=d.get("tolerationSeconds"),
    )


def _taint(d: dict) -> Taint:
    return Taint(key=d["key"], value=d.get("value", ""), effect=d["effect"])


@pytest.mark.parametrize(
    ("inp", "expected"), conformance_cases("v1.Toleration.ToleratesTaint", "nodelifecycle.json")
)
def test_conformance_tolerates_taint(inp, expected):
    got = tolerates(_toleration(inp["toleration"]), _taint(inp["taint"]))
    assert got is expected["tolerated"]


T = Taint(key="k", value="v", effect="NoExecute")
NUM = Taint(key="sla", value="100", effect="NoSchedule")

CASES = [
    pytest.param(Toleration(operator="Exists"), T, True, id="empty key and effect, Exists: all"),
    pytest.param(Toleration(key="k", operator="Exists"), T, True, id="empty effect matches any"),
    pytest.param(Toleration(key="k", value="v"), T, True, id="empty operator means Equal"),
    pytest.param(Toleration(key="k", operator="Equal"), T, False, id="Equal with absent value"),
    pytest.param(
        Toleration(key="k", operator="Equal"),
        Taint(key="k", effect="NoExecute"),
        True,
        id="Equal empty to empty",
    ),
    pytest.param(Toleration(key="other", operator="Exists"), T, False, id="other key"),
    pytest.param(Toleration(key="k", operator="Bogus", value="v"), T, False, id="unknown operator"),
    pytest.param(
        Toleration(key="k", operator="Exists", effect="NoSchedule"), T, False, id="other effect"
    ),
    pytest.param(
        Toleration(key="k", operator="Exists", toleration_seconds=0),
        T,
        True,
        id="tolerationSeconds plays no part",
    ),
    pytest.param(Toleration(key="sla", operator="Gt", value="99"), NUM, True, id="Gt true"),
    pytest.param(Toleration(key="sla", operator="Gt", value="100"), NUM, False, id="Gt equal"),
    pytest.param(Toleration(key="sla", operator="Lt", value="101"), NUM, True, id="Lt true"),
    pytest.param(Toleration(key="sla", operator="Lt", value="100"), NUM, False, id="Lt equal"),
    pytest.param(Toleration(key="sla", operator="Lt", value="1e3"), NUM, False, id="Lt unparsable"),
    pytest.param(
        Toleration(key="sla", operator="Gt", value="+99"), NUM, True, id="Gt signed value"
    ),
    pytest.param(
        Toleration(key="sla", operator="Lt", value="9223372036854775808"),
        NUM,
        False,
        id="Lt value beyond int64",
    ),
]


@pytest.mark.parametrize(("toleration", "taint", "expected"), CASES)
def test_tolerates(toleration, taint, expected):
    assert tolerates(toleration, taint) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("-12", -12),
        ("+7", 7),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("9223372036854775808", None),
        (" 1", None),
        ("1_000", None),
        ("", None),
        ("0x10", None),
        ("1\n", None),
    ],
)
def test_parse_int64(text, expected):
    assert parse_int64(text) == expected


def test_find_untolerated_first_in_node_order_and_effect_filter():
    taints = (
        Taint(key="a", effect="NoSchedule"),
        Taint(key="b", effect="NoExecute"),
        Taint(key="c", effect="NoExecute"),
    )
    tolerations = (Toleration(key="b", operator="Exists"),)
    assert find_untolerated(taints, tolerations) == taints[0]
    assert find_untolerated(taints, tolerations, {"NoExecute"}) == taints[2]
    assert find_untolerated(taints, tolerations, {"PreferNoSchedule"}) is None
    assert find_untolerated(taints[1:2], tolerations) is None
    assert tolerates_any(tolerations, taints[1])
    assert not tolerates_any((), taints[1])
