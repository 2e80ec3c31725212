"""Node allocatable: conformance groups kubelet.cm.* plus own cases."""

from __future__ import annotations

import pytest

from service.engine.kubelet.allocatable import (
    get_node_allocatable_reservation,
    hard_eviction_reservation,
    node_allocatable,
    validate_node_allocatable,
)
from service.engine.kubelet.eviction_config import build_eviction_config
from service.engine.quantity import parse_quantity, to_base_units
from tests.engine.kubelet.helpers import conformance_cases, threshold_from_case

GI = 1024**3
MI = 1024**2


def amounts(resources: dict) -> dict[str, int]:
    return {name: to_base_units(name, parse_quantity(text)) for name, text in resources.items()}


@pytest.mark.parametrize(
    ("given", "expected"), conformance_cases("kubelet.cm.GetNodeAllocatableReservation")
)
def test_conformance_reservation(given, expected):
    got = get_node_allocatable_reservation(
        amounts(given["capacity"]),
        amounts(given["kubeReserved"]),
        amounts(given["systemReserved"]),
        [threshold_from_case(t) for t in given["hardEvictionThresholds"]],
    )
    assert got == amounts(expected["reservation"])


@pytest.mark.parametrize(
    ("given", "expected"), conformance_cases("kubelet.cm.validateNodeAllocatable")
)
def test_conformance_validate(given, expected):
    capacity = amounts(given["capacity"])
    reservation = get_node_allocatable_reservation(
        capacity,
        amounts(given["kubeReserved"]),
        amounts(given["systemReserved"]),
        [threshold_from_case(t) for t in given["hardEvictionThresholds"]],
    )
    problem = validate_node_allocatable(capacity, reservation)
    assert (problem is None) is expected["valid"]
    if problem is not None:
        assert problem.startswith("invalid Node Allocatable configuration. ")


# --- own cases ---------------------------------------------------------------------------------


def _reservation(config: dict, capacity: dict[str, int]) -> dict[str, int]:
    cfg = build_eviction_config(config)
    kube = {k: to_base_units(k, q) for k, q in cfg.kube_reserved.items()}
    system = {k: to_base_units(k, q) for k, q in cfg.system_reserved.items()}
    return get_node_allocatable_reservation(capacity, kube, system, cfg.hard_eviction_thresholds)


def test_spec_example_float32_percentage():
    """spec F: 10 cpu / 10Gi, kube 100m/100Mi, system 50m/50Mi, memory.available<5%."""
    got = _reservation(
        {
            "evictionHard": "memory.available<5%",
            "kubeReserved": "cpu=100m,memory=100Mi",
            "systemReserved": "cpu=50m,memory=50Mi",
        },
        {"cpu": 10_000, "memory": 10 * GI},
    )
    assert got == {"cpu": 150, "memory": 157286400 + 536870920}


def test_default_hard_thresholds_reserve_memory_and_nodefs_only():
    capacity = {"cpu": 4000, "memory": 16 * GI, "ephemeral-storage": 100 * GI, "pods": 110}
    got = _reservation({}, capacity)
    # 100Mi for memory.available, 10% (float32) of ephemeral-storage for nodefs.available;
    # inodes and imagefs reserve nothing, nor does the allocatableMemory copy.
    assert got == {
        "memory": 100 * MI,
        "ephemeral-storage": int(float(100 * GI) * 0.10000000149011612),
    }


def test_reservation_only_for_capacity_keys():
    got = _reservation(
        {"evictionHard": "", "kubeReserved": {"memory": "1Gi", "ephemeral-storage": "1Gi"}},
        {"cpu": 1000, "memory": 4 * GI},
    )
    assert got == {"memory": GI}


def test_soft_thresholds_do_not_reserve():
    cfg = build_eviction_config(
        {
            "evictionHard": "",
            "evictionSoft": "memory.available<1Gi",
            "evictionSoftGracePeriod": "memory.available=1m",
        }
    )
    assert cfg.hard_eviction_thresholds == ()
    assert hard_eviction_reservation(cfg.hard_eviction_thresholds, {"memory": 8 * GI}) is None


@pytest.mark.parametrize(
    ("capacity", "reservation", "expected"),
    [
        pytest.param(
            {"cpu": 1000, "memory": 8 * GI},
            {"cpu": 1500, "memory": GI},
            {"cpu": 0, "memory": 7 * GI},
            id="clamped at zero",
        ),
        pytest.param(
            {"memory": 8 * GI, "hugepages-2Mi": 2 * GI, "hugepages-1Gi": GI},
            {"memory": GI},
            {"memory": 4 * GI, "hugepages-2Mi": 2 * GI, "hugepages-1Gi": GI},
            id="hugepages taken from memory",
        ),
        pytest.param(
            {"memory": 2 * GI, "hugepages-1Gi": 4 * GI},
            {},
            {"memory": 0, "hugepages-1Gi": 4 * GI},
            id="hugepages clamp memory at zero",
        ),
        pytest.param({"pods": 110}, {}, {"pods": 110}, id="pods not reserved"),
    ],
)
def test_node_allocatable(capacity, reservation, expected):
    assert node_allocatable(capacity, reservation) == expected


def test_validate_reports_kubelet_text():
    problem = validate_node_allocatable(
        {"memory": 4 * GI}, {"memory": 5 * GI}, {"memory": "BinarySI"}
    )
    assert problem == (
        'invalid Node Allocatable configuration. Resource "memory" has a reservation of 5Gi '
        "but capacity of 4Gi. Expected capacity >= reservation."
    )
