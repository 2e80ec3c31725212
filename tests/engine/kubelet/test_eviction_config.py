"""Eviction configuration: ParseThresholdConfig and friends (conformance + own cases)."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest

from service.engine.kubelet.eviction_config import (
    DEFAULT_PRESSURE_TRANSITION_PERIOD_NS,
    EvictionConfigError,
    Threshold,
    ThresholdValue,
    _f32,
    add_allocatable_thresholds,
    build_eviction_config,
    compare_threshold_value,
    get_threshold_quantity,
    parse_percentage,
    parse_threshold_config,
    split_flag_map,
    update_container_fs_thresholds,
)
from service.engine.quantity import parse_quantity
from tests.engine.kubelet.helpers import (
    conformance_cases,
    group_names,
    threshold_from_case,
    threshold_view,
    value_from_case,
)

S = 1_000_000_000


def _views(thresholds) -> Counter:
    return Counter(threshold_view(t) for t in thresholds)


# --- conformance -------------------------------------------------------------------------------


def test_every_eviction_group_is_covered():
    """Guards against a new eviction/allocatable group appearing in the data unnoticed."""
    covered = {
        "eviction.ParseThresholdConfig",
        "eviction.addAllocatableThresholds",
        "eviction.parsePercentage",
        "eviction.compareThresholdValue",
        "eviction.thresholdsMet",
        "eviction.thresholdsMetGracePeriod",
        "eviction.thresholdsFirstObservedAt",
        "eviction.nodeConditionsLastObservedAt",
        "eviction.nodeConditionsObservedSince",
        "eviction.thresholdsUpdatedStats",
        "eviction.byEvictionPriority",
        "eviction.rankPods",
        "eviction.makeSignalObservations",
        "kubelet.cm.GetNodeAllocatableReservation",
        "kubelet.cm.GetNodeAllocatableAbsolute",
        "kubelet.cm.validateNodeAllocatable",
    }
    ours = {g for g in group_names() if g.startswith(("eviction.", "kubelet.cm."))}
    assert ours == covered


@pytest.mark.parametrize(("given", "expected"), conformance_cases("eviction.ParseThresholdConfig"))
def test_conformance_parse_threshold_config(given, expected):
    def call():
        return parse_threshold_config(
            given["enforceNodeAllocatable"],
            given["evictionHard"],
            given["evictionSoft"],
            given["evictionSoftGracePeriod"],
            given["evictionMinimumReclaim"],
        )

    if expected["error"]:
        with pytest.raises(EvictionConfigError) as err:
            call()
        assert expected["messageContains"] in err.value.message
        assert err.value.path.startswith("config.eviction")
        return
    got = call()
    want = [threshold_from_case(t) for t in expected["thresholds"]]
    assert _views(got) == _views(want)


@pytest.mark.parametrize(
    ("given", "expected"), conformance_cases("eviction.addAllocatableThresholds")
)
def test_conformance_add_allocatable_thresholds(given, expected):
    got = add_allocatable_thresholds([threshold_from_case(t) for t in given["thresholds"]])
    want = [threshold_from_case(t) for t in expected["thresholds"]]
    assert _views(got) == _views(want)


@pytest.mark.parametrize(("given", "expected"), conformance_cases("eviction.parsePercentage"))
def test_conformance_parse_percentage(given, expected):
    assert expected["error"] is True
    with pytest.raises(ValueError, match="invalid syntax"):
        parse_percentage(given["value"])


@pytest.mark.parametrize(("given", "expected"), conformance_cases("eviction.compareThresholdValue"))
def test_conformance_compare_threshold_value(given, expected):
    a, b = value_from_case(given["a"]), value_from_case(given["b"])
    assert compare_threshold_value(a, b) is expected["equal"]
    assert compare_threshold_value(b, a) is expected["equal"]


# --- percentages are float32 -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("10%", _f32(0.1), id="10%"),
        pytest.param("10.5%", _f32(0.105), id="10.5% stored as float32"),
        pytest.param("5%%", _f32(0.05), id="every trailing % stripped"),
        pytest.param("-15%", _f32(-0.15), id="negative parses (rejected later)"),
        pytest.param("1e1%", _f32(0.1), id="exponent form"),
    ],
)
def test_parse_percentage(text, expected):
    assert parse_percentage(text) == expected


@pytest.mark.parametrize(
    ("capacity", "percent", "expected"),
    [
        pytest.param(10 * 1024**3, "5%", 536870920, id="5% of 10Gi (float32 factor)"),
        pytest.param(1000 * 1024**2, "20%", 209715203, id="20% of 1000Mi"),
        pytest.param(1000, "10%", 100, id="small count"),
    ],
)
def test_percentage_threshold_resolution_uses_float32(capacity, percent, expected):
    value = ThresholdValue(percentage=parse_percentage(percent))
    assert get_threshold_quantity(value, capacity) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "abc%", 'strconv.ParseFloat: parsing "abc": invalid syntax', id="not a number"
        ),
        pytest.param("NaN%", 'strconv.ParseFloat: parsing "NaN": invalid syntax', id="NaN refused"),
        pytest.param("1e50%", 'parsing "1e50": value out of range', id="float32 overflow"),
    ],
)
def test_parse_percentage_errors(text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        parse_percentage(text)


# --- statements: every kubelet validation error --------------------------------------------


@pytest.mark.parametrize(
    ("hard", "soft", "grace", "reclaim", "path", "message"),
    [
        pytest.param(
            {"mem.available": "1Gi"},
            {},
            {},
            {},
            "config.evictionHard",
            "unsupported eviction signal mem.available",
            id="unknown hard signal",
        ),
        pytest.param(
            {"swap.available": "1Gi"},
            {},
            {},
            {},
            "config.evictionHard",
            "unsupported eviction signal swap.available",
            id="swap not configurable",
        ),
        pytest.param(
            {"memory.available": "0"},
            {},
            {},
            {},
            "config.evictionHard",
            "eviction threshold memory.available must be positive: 0",
            id="zero quantity",
        ),
        pytest.param(
            {"memory.available": "1K"},
            {},
            {},
            {},
            "config.evictionHard",
            "unable to parse quantity's suffix",
            id="bad quantity",
        ),
        pytest.param(
            {"nodefs.available": "-1%"},
            {},
            {},
            {},
            "config.evictionHard",
            "eviction percentage threshold nodefs.available must be >= 0%: -1%",
            id="negative %",
        ),
        pytest.param(
            {"nodefs.available": "101%"},
            {},
            {},
            {},
            "config.evictionHard",
            "eviction percentage threshold nodefs.available must be <= 100%: 101%",
            id="over 100%",
        ),
        pytest.param(
            {},
            {"memory.available": "1Gi"},
            {},
            {},
            "config.evictionSoftGracePeriod",
            "grace period must be specified for the soft eviction threshold memory.available",
            id="soft without grace",
        ),
        pytest.param(
            {},
            {"memory.available": "1Gi"},
            {"memory.available": "-1s"},
            {},
            "config.evictionSoftGracePeriod",
            "invalid eviction grace period specified: -1s, must be a positive value",
            id="negative grace",
        ),
        pytest.param(
            {},
            {"memory.available": "1Gi"},
            {"memory.available": "90"},
            {},
            "config.evictionSoftGracePeriod",
            'time: missing unit in duration "90"',
            id="grace without unit",
        ),
        pytest.param(
            {},
            {},
            {"memory.avail": "1m"},
            {},
            "config.evictionSoftGracePeriod",
            "unsupported eviction signal memory.avail",
            id="unknown grace signal",
        ),
        pytest.param(
            {},
            {},
            {},
            {"memory.available": "0%"},
            "config.evictionMinimumReclaim",
            "eviction percentage minimum reclaim memory.available must be positive: 0%",
            id="0% min reclaim",
        ),
        pytest.param(
            {},
            {},
            {},
            {"memory.available": "-1Mi"},
            "config.evictionMinimumReclaim",
            "negative eviction minimum reclaim specified for memory.available",
            id="negative min reclaim",
        ),
        pytest.param(
            {},
            {},
            {},
            {"pid.availabl": "10"},
            "config.evictionMinimumReclaim",
            "unsupported eviction signal pid.availabl",
            id="unknown min reclaim signal",
        ),
    ],
)
def test_parse_threshold_config_errors(hard, soft, grace, reclaim, path, message):
    with pytest.raises(EvictionConfigError) as err:
        parse_threshold_config(["pods"], hard, soft, grace, reclaim)
    assert err.value.path == path
    assert err.value.message == message


def test_zero_min_reclaim_quantity_is_allowed():
    (got,) = parse_threshold_config(
        [], {"memory.available": "1Gi"}, {}, {}, {"memory.available": "0"}
    )
    assert got.min_reclaim is not None and got.min_reclaim.quantity.value == 0


def test_unused_grace_period_and_min_reclaim_are_ignored():
    """Upstream ignores grace periods / min-reclaims of signals that have no threshold."""
    got = parse_threshold_config(
        [], {"memory.available": "1Gi"}, {}, {"nodefs.available": "1m"}, {"pid.available": "10"}
    )
    assert [t.signal for t in got] == ["memory.available"]
    assert got[0].min_reclaim is None


def test_min_reclaim_attaches_to_hard_soft_and_allocatable_copies():
    got = parse_threshold_config(
        ["pods"],
        {"memory.available": "100Mi"},
        {"memory.available": "1Gi"},
        {"memory.available": "1m30s"},
        {"memory.available": "500Mi"},
    )
    assert [(t.signal, t.grace_period) for t in got] == [
        ("memory.available", 0),
        ("memory.available", 90 * S),
        ("allocatableMemory.available", 0),  # only the hard one is copied
    ]
    assert all(t.min_reclaim.quantity == parse_quantity("500Mi") for t in got)


def test_soft_threshold_with_zero_grace_is_hard_and_copied():
    got = parse_threshold_config(
        ["pods"], {}, {"memory.available": "1Gi"}, {"memory.available": "0s"}, {}
    )
    assert [t.signal for t in got] == ["memory.available", "allocatableMemory.available"]


def test_allocatable_copy_needs_pods_enforcement():
    got = parse_threshold_config(["kube-reserved"], {"memory.available": "100Mi"}, {}, {}, {})
    assert [t.signal for t in got] == ["memory.available"]


def test_canonical_order_whatever_the_key_order():
    got = parse_threshold_config(
        [],
        {"pid.available": "100", "nodefs.available": "10%", "memory.available": "1Gi"},
        {},
        {},
        {},
    )
    assert [t.signal for t in got] == ["memory.available", "nodefs.available", "pid.available"]


# --- the request's config ----------------------------------------------------------------------


def _signals(config) -> list[tuple[str, int]]:
    return [(t.signal, t.grace_period) for t in config.thresholds]


def test_absent_eviction_hard_means_kubelet_defaults():
    config = build_eviction_config({})
    hard = {t.signal: t.value for t in config.hard_eviction_thresholds}
    assert hard == {
        "memory.available": ThresholdValue(quantity=parse_quantity("100Mi")),
        "nodefs.available": ThresholdValue(percentage=_f32(0.10)),
        "nodefs.inodesFree": ThresholdValue(percentage=_f32(0.05)),
        "imagefs.available": ThresholdValue(percentage=_f32(0.15)),
        "imagefs.inodesFree": ThresholdValue(percentage=_f32(0.05)),
    }
    # allocatable copy (enforceNodeAllocatable defaults to pods) and containerfs = nodefs
    assert _signals(config) == [
        ("memory.available", 0),
        ("nodefs.available", 0),
        ("nodefs.inodesFree", 0),
        ("imagefs.available", 0),
        ("imagefs.inodesFree", 0),
        ("allocatableMemory.available", 0),
        ("containerfs.available", 0),
        ("containerfs.inodesFree", 0),
    ]
    assert config.pressure_transition_period == DEFAULT_PRESSURE_TRANSITION_PERIOD_NS
    assert config.max_pod_grace_period_seconds == 0
    assert config.enforce_node_allocatable == ("pods",)
    assert config.local_storage_capacity_isolation is True


def test_null_eviction_hard_is_defaults_too():
    assert (
        build_eviction_config({"evictionHard": None}).thresholds
        == build_eviction_config({}).thresholds
    )


@pytest.mark.parametrize("empty", ["", {}], ids=["empty flag", "empty map"])
def test_empty_eviction_hard_means_no_hard_thresholds(empty):
    config = build_eviction_config({"evictionHard": empty})
    assert config.thresholds == ()
    assert config.hard_eviction_thresholds == ()


def test_one_hard_signal_turns_other_defaults_off():
    config = build_eviction_config({"evictionHard": {"memory.available": "200Mi"}})
    assert [t.signal for t in config.hard_eviction_thresholds] == ["memory.available"]


def test_merge_default_eviction_settings_fills_unspecified_signals():
    config = build_eviction_config(
        {"evictionHard": {"memory.available": "200Mi"}, "mergeDefaultEvictionSettings": True}
    )
    hard = {t.signal: t.value for t in config.hard_eviction_thresholds}
    assert hard["memory.available"].quantity == parse_quantity("200Mi")
    assert set(hard) == {
        "memory.available",
        "nodefs.available",
        "nodefs.inodesFree",
        "imagefs.available",
        "imagefs.inodesFree",
    }


def test_flag_forms_equal_map_forms():
    flags = build_eviction_config(
        {
            "evictionHard": "memory.available<100Mi,nodefs.available<10%",
            "evictionSoft": "memory.available<1Gi",
            "evictionSoftGracePeriod": "memory.available=1m30s",
            "evictionMinimumReclaim": "memory.available=0.5Gi",
            "kubeReserved": "cpu=100m,memory=1Gi",
            "enforceNodeAllocatable": "pods",
        }
    )
    maps = build_eviction_config(
        {
            "evictionHard": {"memory.available": "100Mi", "nodefs.available": "10%"},
            "evictionSoft": {"memory.available": "1Gi"},
            "evictionSoftGracePeriod": {"memory.available": "1m30s"},
            "evictionMinimumReclaim": {"memory.available": "512Mi"},
            "kubeReserved": {"cpu": "100m", "memory": "1Gi"},
            "enforceNodeAllocatable": ["pods"],
        }
    )
    assert [threshold_view(t) for t in flags.thresholds] == [
        threshold_view(t) for t in maps.thresholds
    ]
    assert flags.kube_reserved == maps.kube_reserved


@pytest.mark.parametrize(
    ("text", "separator", "expected"),
    [
        ("a<1,b<2", "<", {"a": "1", "b": "2"}),
        (" a < 1 ,,b<2", "<", {"a": "1", "b": "2"}),
        ("a<1,a<2", "<", {"a": "2"}),
        ("a=1=2", "=", {"a": "1=2"}),
        ("", "<", {}),
    ],
)
def test_split_flag_map(text, separator, expected):
    assert split_flag_map(text, separator, "p") == expected


def test_flag_with_wrong_operator_is_rejected():
    with pytest.raises(EvictionConfigError) as err:
        build_eviction_config({"evictionHard": "memory.available>100Mi"})
    assert err.value.path == "config.evictionHard"
    assert err.value.message == "malformed pair, expect string<string"


def test_flag_with_less_equal_fails_on_the_quantity():
    with pytest.raises(EvictionConfigError) as err:
        build_eviction_config({"evictionHard": "memory.available<=100Mi"})
    assert "quantities must match the regular expression" in err.value.message


@pytest.mark.parametrize(
    ("config", "path", "message"),
    [
        pytest.param(
            {"kubeReserved": {"gpu": "1"}},
            "config.kubeReserved",
            'cannot reserve "gpu" resource',
            id="unreservable resource",
        ),
        pytest.param(
            {"systemReserved": "memory=-1Gi"},
            "config.systemReserved",
            'resource quantity for "memory" cannot be negative: -1Gi',
            id="negative reservation",
        ),
        pytest.param(
            {"kubeReserved": {"cpu": "x"}},
            "config.kubeReserved",
            'failed to parse quantity "x" for "cpu" resource: quantities must match',
            id="bad reservation quantity",
        ),
        pytest.param(
            {"enforceNodeAllocatable": ["pods", "foo"]},
            "config.enforceNodeAllocatable",
            'invalid configuration: option "foo" specified for enforceNodeAllocatable',
            id="unknown enforcement",
        ),
        pytest.param(
            {"enforceNodeAllocatable": ["none", "pods"]},
            "config.enforceNodeAllocatable",
            'may not contain additional enforcements when "none" is specified',
            id="none plus others",
        ),
        pytest.param(
            {"evictionPressureTransitionPeriod": "5"},
            "config.evictionPressureTransitionPeriod",
            'time: missing unit in duration "5"',
            id="bad transition period",
        ),
        pytest.param(
            {"filesystemLayout": "zfs"},
            "config.filesystemLayout",
            "must be one of",
            id="bad layout",
        ),
    ],
)
def test_build_eviction_config_errors(config, path, message):
    with pytest.raises(EvictionConfigError) as err:
        build_eviction_config(config)
    assert err.value.path == path
    assert message in err.value.message


def test_zero_transition_period_defaults_to_five_minutes():
    config = build_eviction_config({"evictionPressureTransitionPeriod": "0s"})
    assert config.pressure_transition_period == 300 * S
    assert (
        build_eviction_config(
            {"evictionPressureTransitionPeriod": "30s"}
        ).pressure_transition_period
        == 30 * S
    )


# --- containerfs thresholds follow the filesystem layout ---------------------------------------


def _config_for(layout: str):
    return build_eviction_config(
        {
            "evictionHard": {
                "nodefs.available": "10%",
                "imagefs.available": "20%",
                "nodefs.inodesFree": "5%",
                "imagefs.inodesFree": "7%",
            },
            "evictionSoft": {"nodefs.available": "30%", "imagefs.available": "40%"},
            "evictionSoftGracePeriod": {"nodefs.available": "1m", "imagefs.available": "2m"},
            "filesystemLayout": layout,
        }
    )


@pytest.mark.parametrize(
    ("layout", "hard", "soft", "inodes"),
    [
        pytest.param("single", 0.10, (0.30, 60), 0.05, id="single: containerfs = nodefs"),
        pytest.param("dedicatedImageFs", 0.20, (0.40, 120), 0.07, id="dedicated: = imagefs"),
        pytest.param("split", 0.10, (0.30, 60), 0.05, id="split: containerfs = nodefs"),
    ],
)
def test_containerfs_thresholds_follow_layout(layout, hard, soft, inodes):
    config = _config_for(layout)
    derived = [t for t in config.thresholds if t.signal.startswith("containerfs.")]
    assert [(t.signal, t.value.percentage, t.grace_period) for t in derived] == [
        ("containerfs.available", _f32(hard), 0),
        ("containerfs.available", _f32(soft[0]), soft[1] * S),
        ("containerfs.inodesFree", _f32(inodes), 0),
    ]


def test_user_containerfs_thresholds_are_overridden():
    got = update_container_fs_thresholds(
        [
            Threshold("containerfs.available", value=ThresholdValue(percentage=_f32(0.5))),
            Threshold("nodefs.available", value=ThresholdValue(percentage=_f32(0.1))),
        ],
        image_fs=False,
        separate_container_image_fs=False,
    )
    assert [(t.signal, t.value.percentage) for t in got] == [
        ("containerfs.available", _f32(0.1)),  # replaced in place by the nodefs value
        ("nodefs.available", _f32(0.1)),
    ]


def test_user_containerfs_without_source_is_dropped():
    got = update_container_fs_thresholds(
        [Threshold("containerfs.inodesFree", value=ThresholdValue(quantity=parse_quantity("1k")))],
        image_fs=True,
        separate_container_image_fs=False,
    )
    assert got == []


def test_quantity_threshold_compares_exactly():
    value = ThresholdValue(quantity=parse_quantity("1.5"))
    assert get_threshold_quantity(value, 0) == Fraction(3, 2)
