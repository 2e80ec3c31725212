"""Device selectors in the DRA CEL environment (service/engine/dra/cel.py)."""

from __future__ import annotations

import pytest

from service.engine.dra.cel import (
    CelError,
    compile_selector,
    device_matches,
    device_variable,
    expression_error,
)
from service.engine.objects import Device, DeviceAttribute

DRIVER = "gpu.example.com"
DEVICE = Device(
    name="gpu-0",
    attributes={
        "model": DeviceAttribute("string", "h100"),
        "index": DeviceAttribute("int", 3),
        "healthy": DeviceAttribute("bool", True),
        "driverVersion": DeviceAttribute("version", "2.1.0-rc.1"),
        "resource.kubernetes.io/pcieRoot": DeviceAttribute("string", "pci0"),
    },
    capacity={"memory": "80Gi"},
)


def _matches(expression: str) -> bool:
    return device_matches(compile_selector(expression), device_variable(DRIVER, DEVICE))


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('device.driver == "gpu.example.com"', True),
        ('device.attributes["gpu.example.com"].model == "h100"', True),
        ('device.attributes["gpu.example.com"].index > 2', True),
        ('device.attributes["gpu.example.com"].healthy', True),
        ('device.attributes["resource.kubernetes.io"].pcieRoot == "pci0"', True),
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) == 0', True),
        ('device.capacity["gpu.example.com"].memory == quantity("81920Mi")', True),
        ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("80Gi"))', False),
        ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("100G"))', True),
        ('device.capacity["gpu.example.com"].memory.asInteger() == 85899345920', True),
        ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("2.0.0"))', True),
        ('device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("2.1.0"))', True),
        ('device.attributes["gpu.example.com"].driverVersion.major() == 2', True),
        ('isSemver("1.0") || isQuantity("1Gi")', True),
        # an unknown domain reads as an empty map (upstream's mapper)
        ('device.attributes["other.example.com"].size() == 0', True),
        ('"model" in device.attributes["other.example.com"]', False),
    ],
)
def test_selectors(expression: str, expected: bool) -> None:
    assert _matches(expression) is expected


def test_an_unknown_attribute_is_a_runtime_error() -> None:
    with pytest.raises(CelError, match="no such key: missing"):
        _matches('device.attributes["gpu.example.com"].missing == 1')


def test_a_result_that_is_not_bool_is_an_error() -> None:
    with pytest.raises(CelError, match="could not be converted to bool"):
        _matches('device.driver + "x"')


def test_the_api_server_refuses_what_does_not_parse_or_is_too_long() -> None:
    assert expression_error('device.driver == "x"') is None
    assert expression_error("device.driver ==").startswith("Invalid value: compilation failed")
    assert expression_error("x" * 10241) == "Too long: may not be more than 10240 bytes"
