"""Go duration text (service/engine/duration.py), as time.ParseDuration and
time.Duration.String print and read it."""

import pytest

from service.engine.duration import format_go_duration, parse_go_duration

S = 1_000_000_000


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        pytest.param("0", 0, id="bare zero"),
        pytest.param("0s", 0, id="0s"),
        pytest.param("1m30s", 90 * S, id="1m30s"),
        pytest.param("1.5s", 1_500_000_000, id="fraction"),
        pytest.param(".5m", 30 * S, id="leading dot"),
        pytest.param("2h", 7200 * S, id="hours"),
        pytest.param("300ms", 300_000_000, id="ms"),
        pytest.param("1\u00b5s", 1000, id="micro sign"),
        pytest.param("-1m", -60 * S, id="negative"),
        pytest.param("+5s", 5 * S, id="plus sign"),
    ],
)
def test_parse_go_duration(text, ns):
    assert parse_go_duration(text) == ns


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", 'time: invalid duration ""', id="empty"),
        pytest.param("abc", 'time: invalid duration "abc"', id="letters"),
        pytest.param("5", 'time: missing unit in duration "5"', id="no unit"),
        pytest.param("1d", 'time: unknown unit "d" in duration "1d"', id="days unknown"),
        pytest.param(".s", 'time: invalid duration ".s"', id="lone dot"),
    ],
)
def test_parse_go_duration_errors(text, message):
    with pytest.raises(ValueError) as err:
        parse_go_duration(text)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "0s"),
        (90 * S, "1m30s"),
        (60 * S, "1m0s"),
        (3600 * S, "1h0m0s"),
        (1_500_000_000, "1.5s"),
        (500_000_000, "500ms"),
        (1500, "1.5\u00b5s"),
        (-5 * S, "-5s"),
    ],
)
def test_format_go_duration(ns, text):
    assert format_go_duration(ns) == text
