"""The API server's static checks of a selector (service/engine/dra/cel_check.py): what
cel-go's checker refuses in the DRA environment, the cost limit, and what it must accept."""

from __future__ import annotations

import pytest

from service.engine.dra.cel_check import SelectorCheckError, check_selector

NESTED = "device.attributes.all(a, {})"


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (
            'device.attributes["x"].y + 1 == "a"',
            "found no matching overload for '_==_' applied to '(int, string)'",
        ),
        ("device.model == 1", "undefined field 'model'"),
        ("gpu.model == 1", "undeclared reference to 'gpu' (in container '')"),
        (
            'device.capacity["d"].memory > 1',
            "found no matching overload for '_>_' applied to '(kubernetes.Quantity, int)'",
        ),
        (
            "device.driver.startsWith(1)",
            "found no matching overload for 'startsWith' applied to 'string.(int)'",
        ),
        ('1 in ["a"]', "found no matching overload for '@in' applied to '(int, list(string))'"),
        ("device.driver", "must evaluate to bool or the unknown type, not string"),
        ('device.attributes["d"].x ? 1 : 2', "must evaluate to bool or the unknown type, not int"),
    ],
)
def test_what_the_type_checker_refuses(expression: str, message: str) -> None:
    with pytest.raises(SelectorCheckError) as exc:
        check_selector(expression)
    assert str(exc.value).endswith(message)
    assert not exc.value.forbidden


@pytest.mark.parametrize(
    "expression",
    [
        'device.driver == "gpu.example.com"',
        'device.attributes["gpu.example.com"].model == "h100"',
        'device.attributes["gpu.example.com"].healthy',
        'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
        'device.attributes["d"].v.isGreaterThan(semver("1.0.0")) && semver("1.2.3").major() == 1',
        'device.attributes["other.example.com"].size() == 0',
        'has(device.attributes.x) && "a" in ["a", "b"]',
        'cel.bind(m, device.attributes["d"], m.size() > 0)',
        'device.attributes["d"].model.matches("^h") && 1 < 1.5',
        # a library this checker does not model is not refused (dyn)
        'device.attributes["d"].ip.isIP()',
        NESTED.format(NESTED.replace("a,", "b,").format("device.attributes.all(c, true)")),
    ],
)
def test_what_the_api_server_accepts_is_not_refused(expression: str) -> None:
    check_selector(expression)


def test_four_nested_comprehensions_over_attributes_exceed_the_cost_limit() -> None:
    """32 domains (ResourceSliceMaxAttributesAndCapacitiesPerDevice) to the fourth power
    is over CELSelectorExpressionMaxCost (1,000,000); three levels (accepted above) are not."""
    inner = "device.attributes.all(d, true)"
    for var in "cba":
        inner = f"device.attributes.all({var}, {inner})"
    with pytest.raises(SelectorCheckError) as exc:
        check_selector(inner)
    assert str(exc.value) == "too complex, exceeds cost limit"
    assert exc.value.forbidden


def test_a_long_chain_is_not_refused_for_its_depth() -> None:
    """cel-go reads ``a || b || ...`` as a flat list: several hundred terms are valid."""
    check_selector(" || ".join(['device.driver == "a"'] * 400))
