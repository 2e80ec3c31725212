"""resource.Quantity conformance (tests/conformance/kubelet.json) plus upstream-derived edges,
and int64 wrapping as Go's arithmetic wraps.

Rows marked "upstream" restate tables from kubernetes' quantity_test.go,
quantity_golden_test.go and quantity_subnano_test.go (values only, no code).
"""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path

import pytest

from service.engine.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_SUFFIX,
    MIN_INT64,
    Quantity,
    QuantityError,
    base_units_to_string,
    format_quantity,
    given_text,
    parse_quantity,
    to_base_units,
    wrap_int64,
    wrap_int64_values,
)

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance" / "kubelet.json"
UPSTREAM_ERRORS = {ERR_FORMAT_WRONG, ERR_NUMERIC, ERR_SUFFIX}
MAX_INT64 = 2**63 - 1


def _cases(function: str) -> list:
    groups = json.loads(CONFORMANCE.read_text())["groups"]
    (group,) = [g for g in groups if g["function"] == function]
    assert group["cases"], function
    return [pytest.param(c["input"], c["expected"], id=c["name"]) for c in group["cases"]]


def q(text: str) -> Quantity:
    return parse_quantity(text)


# --- conformance: every case of the six quantity groups ------------------------------------------


@pytest.mark.parametrize(("given", "expected"), _cases("quantity.ParseQuantity"))
def test_conformance_parse(given, expected):
    got = q(given["quantity"])
    assert got.value == Fraction(expected["exact"])
    assert got.format == expected["format"]


@pytest.mark.parametrize(("given", "expected"), _cases("quantity.ParseQuantity.invalid"))
def test_conformance_parse_invalid(given, expected):
    assert expected["error"] is True
    with pytest.raises(QuantityError) as err:
        q(given["quantity"])
    assert str(err.value) in UPSTREAM_ERRORS


@pytest.mark.parametrize(("given", "expected"), _cases("quantity.String"))
def test_conformance_string(given, expected):
    assert str(q(given["quantity"])) == expected["string"]


@pytest.mark.parametrize(("given", "expected"), _cases("quantity.Cmp"))
def test_conformance_cmp(given, expected):
    x, y = q(given["x"]), q(given["y"])
    assert (x > y) - (y > x) == expected["cmp"]  # Quantity.Cmp as the engine reads it


@pytest.mark.parametrize(("given", "expected"), _cases("quantity.ScaledValue"))
def test_conformance_scaled_value(given, expected):
    value = Fraction(given["value"]) * Fraction(10) ** given["fromScale"]
    got = Quantity(value, DECIMAL_SI).scaled_value(given["toScale"])
    assert got == expected["scaledValue"]


@pytest.mark.parametrize(("given", "expected"), _cases("quantity.MilliValue_Value"))
def test_conformance_milli_value_and_value(given, expected):
    got = q(given["quantity"])
    assert got.milli_value() == expected["milliValue"]
    assert got.int_value() == expected["value"]


# --- parsing edges -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1.1.M", ERR_FORMAT_WRONG),
        ("1+1.0M", ERR_FORMAT_WRONG),  # upstream invalid table
        ("1Mb", ERR_FORMAT_WRONG),
        ("1\n", ERR_FORMAT_WRONG),
        ("１", ERR_FORMAT_WRONG),  # only ASCII digits
        ("1_000", ERR_FORMAT_WRONG),
        ("1e1_0", ERR_FORMAT_WRONG),
        ("K", ERR_SUFFIX),
        ("1K", ERR_SUFFIX),  # case matters: kilo is "k"
        ("0.1mi", ERR_SUFFIX),
        ("1i", ERR_SUFFIX),
        ("1e", ERR_SUFFIX),
        ("1Ki+", ERR_SUFFIX),
        ("--1", ERR_SUFFIX),
        ("1e4294967297", ERR_SUFFIX),  # upstream: exponent past int32 is rejected
        ("1e2147483648", ERR_SUFFIX),
        ("1e-2147483648", ERR_SUFFIX),
        ("Pi", ERR_NUMERIC),  # no digits and the big-decimal path: inf.Dec rejects ""
        ("-Ei", ERR_NUMERIC),
        (".e-10", ERR_NUMERIC),
        ("1e2147483647", ERR_NUMERIC),  # engineering limit (module docstring)
        ("1" + "0" * 1001, ERR_NUMERIC),
        ("0." + "1" * 1001, ERR_NUMERIC),
    ],
)
def test_parse_error_texts(text, message):
    with pytest.raises(QuantityError) as err:
        parse_quantity(text)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("text", "exact", "fmt"),
    [
        # Odd but accepted by the upstream scanner.
        (".", "0", DECIMAL_SI),
        ("-", "0", DECIMAL_SI),
        ("+.", "0", DECIMAL_SI),
        ("Mi", "0", BINARY_SI),
        ("m", "0", DECIMAL_SI),
        ("0e-10", "0", DECIMAL_EXPONENT),
        ("1.G", "1000000000", DECIMAL_SI),
        ("1.Ki", "1024", BINARY_SI),
        ("1e+3", "1000", DECIMAL_EXPONENT),
        ("1e03", "1000", DECIMAL_EXPONENT),
        ("-0", "0", DECIMAL_SI),
        ("-0Ki", "0", BINARY_SI),
        ("1e999", "1" + "0" * 999, DECIMAL_EXPONENT),
        # Sub-nano magnitudes round away from zero to 1n (upstream subnano test).
        ("1e-2147483647", "0.000000001", DECIMAL_EXPONENT),
        ("-1e-2147483647", "-0.000000001", DECIMAL_EXPONENT),
        ("0e-2147483647", "0", DECIMAL_EXPONENT),
        ("15e-10", "0.000000002", DECIMAL_EXPONENT),
        ("1000000000000000000000e-30", "0.000000001", DECIMAL_EXPONENT),
        ("1000000000000000000001e-30", "0.000000002", DECIMAL_EXPONENT),
        ("999999999999999999999e-30", "0.000000001", DECIMAL_EXPONENT),
        ("0.00000000000000000000001Ki", "0.000000001", DECIMAL_SI),
        ("0.0" + "0" * 2000 + "1", "0.000000001", DECIMAL_SI),
        # BinarySI cap (magnitude), decimal forms uncapped.
        ("9Ei", str(MAX_INT64), BINARY_SI),
        ("8Ei", str(MAX_INT64), BINARY_SI),
        ("-20Ei", str(-MAX_INT64), BINARY_SI),
        ("1" + "0" * 40 + "Ki", str(MAX_INT64), BINARY_SI),
        ("12E", "12000000000000000000", DECIMAL_SI),
        ("-9.5000000001Gi", "-10200547328.107374183", BINARY_SI),
    ],
)
def test_parse_edges(text, exact, fmt):
    got = parse_quantity(text)
    assert (got.value, got.format) == (Fraction(exact), fmt)


# --- String(): canonical form and the parser's cached input --------------------------------------


@pytest.mark.parametrize(
    ("text", "string", "canonical"),
    [
        # upstream quantity_golden_test.go: String() and the uncached canonical form
        ("1", "1", "1"),
        ("-1", "-1", "-1"),
        ("1Ki", "1Ki", "1Ki"),
        ("1024Mi", "1Gi", "1Gi"),
        ("1000M", "1G", "1G"),
        ("1e3", "1e3", "1e3"),
        ("0.1", "100m", "100m"),
        ("0.000000000000001", "1n", "1n"),
        ("1.441", "1.441", "1441m"),  # kubernetes#138165: 3n fraction digits kept verbatim
        ("1.000001", "1.000001", "1000001u"),
        ("1.000000001", "1.000000001", "1000000001n"),
        ("1.5", "1500m", "1500m"),
        ("9223372036854775807", "9223372036854775807", "9223372036854775807"),
        ("9223372036854775808", "9223372036854775808", "9223372036854775808"),
        ("18446744073709551616", "18446744073709551616", "18446744073709551616"),
        ("1E", "1E", "1E"),
        ("100E", "100E", "100E"),
        ("1000E", "1e21", "1e21"),  # kubernetes#140459: no suffix past E -> exponent form
        ("1e100", "10e99", "10e99"),
        ("8Ei", "9223372036854775807", "9223372036854775807"),
        ("-20Ei", "-9223372036854775807", "-9223372036854775807"),
        ("-9.5Gi", "-9728Mi", "-9728Mi"),
        ("-9.5000000001Gi", "-10200547328107374183n", "-10200547328107374183n"),
        # Same fast-path rule: the input is kept whenever upstream judges it canonical.
        ("+1Ki", "+1Ki", "1Ki"),
        ("01Ki", "01Ki", "1Ki"),
        ("1E3", "1E3", "1e3"),
        ("1.", "1.", "1"),
        ("1.500k", "1.500k", "1500"),
        ("8Ki", "8Ki", "8Ki"),
        ("1000m", "1", "1"),
        ("1e-2147483647", "1e-9", "1e-9"),
        ("0.00000000000000000000001Ki", "1n", "1n"),
    ],
)
def test_string_and_canonical(text, string, canonical):
    parsed = parse_quantity(text)
    assert str(parsed) == string
    assert format_quantity(parsed.value, parsed.format) == canonical
    # Arithmetic drops the cached input, as upstream's Add does.
    assert str(parsed + parse_quantity("0")) == canonical


@pytest.mark.parametrize(
    ("value", "fmt", "string"),
    [
        # upstream TestQuantityString rows past the suffix tables
        (10**21, DECIMAL_SI, "1e21"),
        (5 * 10**21, DECIMAL_SI, "5e21"),
        (10**24, DECIMAL_SI, "1e24"),
        (10**70, BINARY_SI, "10e69"),
        (2 * 10**70, BINARY_SI, "20e69"),
        (10**72, BINARY_SI, "1e72"),
        (2**70, BINARY_SI, "1180591620717411303424"),
        (2**64, BINARY_SI, "16Ei"),
        (2000, BINARY_SI, "2000"),
        (1025, BINARY_SI, "1025"),
        (Fraction(1, 10**12), DECIMAL_SI, "1e-12"),
        (Fraction(1, 10**10), DECIMAL_SI, "100e-12"),
        (Fraction(1234567, 1000), BINARY_SI, "1234567m"),
        (Fraction(5, 2), BINARY_SI, "2500m"),
        (Fraction(2049, 2), BINARY_SI, "1024500m"),  # >= 1024 but not whole
        (0, BINARY_SI, "0"),
        (0, DECIMAL_EXPONENT, "0"),
        (1000, "Bogus", "1e3"),  # unknown formats print as DecimalExponent
    ],
)
def test_format_quantity(value, fmt, string):
    assert format_quantity(value, fmt) == string
    if value:
        assert format_quantity(-Fraction(value), fmt) == "-" + string


def test_format_quantity_rejects_non_decimal_values():
    with pytest.raises(ValueError, match="terminating decimal"):
        format_quantity(Fraction(1, 3), DECIMAL_SI)


def _random_values(count: int):
    rnd = random.Random(20260101)
    for _ in range(count):
        unit = rnd.choice([Fraction(1, 10**9), Fraction(1, 10**6), Fraction(1, 1000), 1, 1000])
        unit *= rnd.choice([1, 10**6, 2**10, 2**20, 2**30, 2**40])
        value = rnd.randint(-(10**7), 10**7) * unit
        yield value, rnd.choice([DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT])


@pytest.mark.parametrize("count", [3000])
def test_canonical_strings_round_trip_and_echo(count):
    for value, fmt in _random_values(count):
        string = format_quantity(value, fmt)
        reparsed = parse_quantity(string)
        if fmt == BINARY_SI and abs(value) > MAX_INT64 and string.endswith("i"):
            assert abs(reparsed.value) == MAX_INT64, (value, string)  # parse caps, print does not
            continue
        assert reparsed.value == value, (value, fmt, string)
        # A BinarySI value printed without a binary suffix reparses as DecimalSI, so the
        # echo property is about canonical strings of the format the string parses to.
        canonical = format_quantity(reparsed.value, reparsed.format)
        assert str(parse_quantity(canonical)) == canonical == str(reparsed), (value, fmt)


# --- integer views -------------------------------------------------------------------------------


def test_half_millicore_is_one_millicore():
    half = parse_quantity("0.5m")
    assert half.milli_value() == 1
    assert to_base_units("cpu", half) == 1
    assert to_base_units("memory", half) == 1


@pytest.mark.parametrize(
    ("text", "milli", "value", "scaled_3"),
    [
        ("1Gi", 1073741824000, 1073741824, 1073742),
        # Past int64, what v1.35 computes (never saturated; a fidelity correction):
        # int64Amount{1, 21}: positiveScaleInt64's loop (scale 24 / 21) overflows -> 0.
        ("1e21", 0, 0, 10**18),
        ("-1.5", -1500, -2, -1),  # away from zero, as negativeScaleInt64
        ("-0.5m", -1, -1, -1),
        # kubernetes#issue 14 edges: each view is an int64, whatever the parsed magnitude.
        # int64Amount{1, 18}: MilliValue is positiveScaleInt64(1, 21), the loop's overflow: 0.
        ("1E18", 0, 10**18, 10**15),
        # inf.Dec (19 digits) at scale 9: scaledValue divides exactly, then Int64().
        ("9223372036854775807m", MAX_INT64, 9223372036854776, 9223372036855),
        # inf.Dec: scaledValue's big.Int.Int64() keeps the low 64 bits: 2**63*1000 -> 0,
        # 2**63 -> -2**63.
        ("9223372036854775808", 0, -(2**63), 9223372036854776),
        # maxAllowed = Dec{MaxInt64, 0}: MilliValue is scaledValue's scale-up, Int64() *
        # 1000 wrapping (-1000); Value is Int64() itself.
        ("9Ei", -1000, MAX_INT64, 9223372036854776),  # BinarySI capped at parse
        ("100Ei", -1000, MAX_INT64, 9223372036854776),
        # int64Amount{+-1, 40}: positiveScaleInt64's loop overflows -> 0 at every scale.
        ("1e40", 0, 0, 0),
        ("-1e40", 0, 0, 0),
        ("80u", 1, 1, 1),
        ("1n", 1, 1, 1),
        ("0", 0, 0, 0),
    ],
)
def test_integer_views(text, milli, value, scaled_3):
    got = parse_quantity(text)
    assert got.milli_value() == milli == got.scaled_value(-3)
    assert got.int_value() == value == got.scaled_value(0)
    assert got.scaled_value(3) == scaled_3


@pytest.mark.parametrize(
    ("resource", "text", "amount"),
    [
        ("cpu", "100m", 100),
        ("cpu", "4000", 4_000_000),
        ("cpu", "0.5", 500),
        ("memory", "1000Mi", 1_048_576_000),
        ("memory", "0.5", 1),
        ("pods", "110", 110),
        ("nvidia.com/gpu", "2", 2),
    ],
)
def test_to_base_units(resource, text, amount):
    assert to_base_units(resource, parse_quantity(text)) == amount


@pytest.mark.parametrize(
    ("resource", "amount", "fmt", "string"),
    [
        ("memory", 1610612736, BINARY_SI, "1536Mi"),
        ("cpu", 1500, DECIMAL_SI, "1500m"),
        ("cpu", 2000, DECIMAL_SI, "2"),
        ("cpu", 1, DECIMAL_SI, "1m"),
        ("cpu", 0, BINARY_SI, "0"),
        ("cpu", 2048000, BINARY_SI, "2Ki"),
        ("cpu", 1500, BINARY_SI, "1500m"),
        ("memory", 1000, DECIMAL_SI, "1k"),
        ("memory", 1025, BINARY_SI, "1025"),
        ("memory", 1073741824, DECIMAL_SI, "1073741824"),
        ("memory", 209715200, BINARY_SI, "200Mi"),
        ("memory", 9223372036854775807, BINARY_SI, "9223372036854775807"),
        ("ephemeral-storage", 10**12, DECIMAL_EXPONENT, "1e12"),
    ],
)
def test_base_units_to_string(resource, amount, fmt, string):
    assert base_units_to_string(resource, amount, fmt) == string
    assert to_base_units(resource, parse_quantity(string)) == amount


# --- comparison and arithmetic -------------------------------------------------------------------


def test_cmp_and_equality_ignore_format():
    assert parse_quantity("1Gi") == parse_quantity("1024Mi") == parse_quantity("1073741824")
    assert hash(parse_quantity("1Gi")) == hash(parse_quantity("1073741824"))
    assert parse_quantity("1Gi") != parse_quantity("1G")
    assert parse_quantity("10000T") > parse_quantity("100Gi")  # upstream TestQuantityCmp
    assert parse_quantity("1k") == parse_quantity("1000")
    assert parse_quantity("0").sign() == 0 and parse_quantity("-3m").sign() == -1
    assert parse_quantity("0Ki").is_zero()


@pytest.mark.parametrize(
    ("left", "right", "exact", "fmt", "string"),
    [
        ("100m", "1Gi", "1073741824.1", DECIMAL_SI, "1073741824100m"),
        ("1Gi", "1G", "2073741824", BINARY_SI, "2073741824"),
        ("1Gi", "512Mi", "1610612736", BINARY_SI, "1536Mi"),
        ("0", "1Gi", "1073741824", BINARY_SI, "1Gi"),  # zero receiver takes the argument's
        ("0Ki", "100m", "0.1", DECIMAL_SI, "100m"),
        ("100m", "0", "0.1", DECIMAL_SI, "100m"),  # upstream TestQuantityAddZeroPreservesSuffix
        ("1e3", "1k", "2000", DECIMAL_EXPONENT, "2e3"),
        ("4Ei", "4Ei", str(2**63), BINARY_SI, "8Ei"),  # sums are never capped
        ("9Ei", "9Ei", str(2 * MAX_INT64), BINARY_SI, "18446744073709551614"),
        ("-1Ki", "1Ki", "0", BINARY_SI, "0"),
    ],
)
def test_add(left, right, exact, fmt, string):
    total = parse_quantity(left) + parse_quantity(right)
    assert (total.value, total.format, str(total)) == (Fraction(exact), fmt, string)


def test_sub_and_neg_follow_add_format_rule():
    assert str(parse_quantity("0") - parse_quantity("1Gi")) == "-1Gi"
    diff = parse_quantity("1Gi") - parse_quantity("1")
    assert (diff.value, diff.format) == (Fraction(1073741823), BINARY_SI)
    assert str(-parse_quantity("100m")) == "-100m"
    assert str(parse_quantity("8Ei")) == str(MAX_INT64)  # reparse after a sum is capped again


def test_quantity_construction():
    built = Quantity(1500, DECIMAL_SI)
    assert type(built.value) is Fraction
    assert str(built) == "1500"
    assert str(Quantity(Fraction(3, 2), BINARY_SI)) == "1500m"
    with pytest.raises(TypeError):
        Quantity(0.5, DECIMAL_SI)
    with pytest.raises(AttributeError):
        built.value = Fraction(1)  # frozen


# --- JSON numbers and the cache ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "exact", "fmt", "string"),
    [
        (1, "1", DECIMAL_SI, "1"),
        (1000, "1000", DECIMAL_SI, "1k"),
        (-2, "-2", DECIMAL_SI, "-2"),
        (1.0, "1", DECIMAL_SI, "1"),
        (1.5, "1.5", DECIMAL_SI, "1500m"),
        (0.1, "0.1", DECIMAL_SI, "100m"),
        (1e-05, "0.00001", DECIMAL_EXPONENT, "10e-6"),
        (1e20, "100000000000000000000", DECIMAL_EXPONENT, "100e18"),
        (-0.0, "0", DECIMAL_SI, "0"),
    ],
)
def test_json_numbers(number, exact, fmt, string):
    got = parse_quantity(number)
    assert (got.value, got.format, str(got)) == (Fraction(exact), fmt, string)


@pytest.mark.parametrize(
    "bad", [True, False, float("nan"), float("inf"), -float("inf"), None, [1], {"a": 1}]
)
def test_non_quantities_raise_quantity_error(bad):
    with pytest.raises(QuantityError):
        parse_quantity(bad)


def test_cache_keeps_types_apart():
    assert parse_quantity(1).value == 1
    with pytest.raises(QuantityError):
        parse_quantity(True)  # equal to 1 and hashes like it, but not a quantity
    assert parse_quantity(0).value == 0
    with pytest.raises(QuantityError):
        parse_quantity(False)


def test_parse_is_memoised():
    parse_quantity.cache_clear()
    first = parse_quantity("250m")
    assert parse_quantity("250m") is first
    info = parse_quantity.cache_info()
    assert (info.hits, info.misses) == (1, 1)


@pytest.mark.parametrize(
    ("value", "wrapped"),
    [
        (0, 0),
        (MAX_INT64, MAX_INT64),
        (MIN_INT64, MIN_INT64),
        (MAX_INT64 + 1, MIN_INT64),
        (MIN_INT64 - 1, MAX_INT64),
        (2 * MAX_INT64, -2),
        (3 * MAX_INT64, MAX_INT64 - 2),
        (2**64, 0),
    ],
)
def test_wrap_int64(value, wrapped):
    assert wrap_int64(value) == wrapped


def test_wrap_int64_values_in_place():
    sums = {"cpu": 2 * MAX_INT64, "memory": 5}
    assert wrap_int64_values(sums) is sums
    assert sums == {"cpu": -2, "memory": 5}


@pytest.mark.parametrize(
    ("text", "resource", "kept"),
    [
        ("1.5k", "cpu", None),  # int64Amount{15, 2}; served as 1500, which 1500000m rebuilds
        ("0.5", "cpu", None),  # served as 500m
        ("1.5e20", "memory", "150e18"),  # past int64: {15, 19} is served as {150, 18}
        ("0.5e-9", "memory", "1e-9"),  # rounded up to 1n when parsed
        ("80u", "cpu", "80u"),  # String() keeps a canonical input
        ("1E18", "cpu", "1E18"),
    ],
)
def test_a_quantity_is_kept_as_the_api_server_serves_it(text, resource, kept) -> None:
    """The snapshot keeps String() (what the scheduler and kubelet parse, after the API
    server stored the object), not the spelling, wherever its integer cannot rebuild it."""
    q = parse_quantity(text)
    assert given_text(resource, q, to_base_units(resource, q), q.format) == kept
    if kept is not None:
        assert parse_quantity(kept).rep == parse_quantity(str(q)).rep
