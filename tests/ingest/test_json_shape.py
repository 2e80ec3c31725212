"""The C scanner's bounds in Python (issue 24): what an install without the C extension
checks before ``json.loads`` builds the tree."""

from __future__ import annotations

import json
import random
import re

import pytest

from service.ingest import body, json_shape
from service.ingest.errors import IngestError
from service.ingest.json_shape import MAX_DEPTH, MAX_ITEMS, MAX_LIVE_KEYS, check_shape


def refusal(data: bytes) -> tuple[int, str]:
    with pytest.raises(IngestError) as caught:
        check_shape(data)
    return caught.value.status, caught.value.errors[0].path


def test_an_array_past_the_item_bound_is_a_413_naming_it():
    check_shape(b'{"kind":"List","items":[' + b"0," * (MAX_ITEMS - 1) + b"0]}")
    past = b'{"kind":"List","items":[' + b"0," * MAX_ITEMS + b"0]}"
    assert refusal(past) == (413, "items")
    nested = b'{"objects":{"kind":"List","items":[' + b"{}," * MAX_ITEMS + b"{}]}}"
    assert refusal(nested) == (413, "objects.items")


def test_strings_and_escapes_hide_no_structure_and_name_the_path():
    """Brackets, commas and escaped quotes inside strings (keys too) are no structure; a
    long string before the array changes nothing."""
    tricky = b'{"a":"x[,,]\\"[", "b\\\\":[1,2,{"c":[' + b"[]," * MAX_ITEMS + b"0]}]}"
    assert refusal(tricky) == (413, "b\\[2].c")
    long_first = b'{"s":"' + b"a\\\\" * (3 << 20) + b'","items":[' + b"0," * MAX_ITEMS + b"0]}"
    assert refusal(long_first) == (413, "items")


def test_nesting_past_orjsons_bound_is_a_400():
    check_shape(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH)
    status, path = refusal(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))
    assert status == 400 and path.startswith("[0][0]") and path.endswith("...")


def _object(n: int) -> str:
    return "{" + ",".join(f'"k{i}":0' for i in range(n)) + "}"


def test_keys_of_the_open_objects_are_bounded_as_the_c_scanner_bounds_them():
    assert refusal(('{"items":[' + _object(MAX_LIVE_KEYS + 1) + "]}").encode()) == (
        413,
        "items[0]",
    )
    siblings = "[" + _object(600_000) + "," + _object(600_000) + "]"
    check_shape(siblings.encode())  # closed objects let their keys go


def test_text_that_is_not_json_is_left_to_the_decoder():
    for text in (b"", b"{", b'"unterminated', b"]]]", b'{"a" 1}', b"\\\\\\"):
        check_shape(text)


def _reference(data: bytes) -> bytes:
    compact = json.dumps(json.loads(data), separators=(",", ":"))
    return "".join(c for c in re.sub(r'"(?:[^"\\]|\\.)*"', "", compact) if c in "[]{},").encode()


@pytest.mark.parametrize("piece", [1, 2, 3, 7, 64])
def test_the_structure_is_found_whatever_the_pieces(piece):
    """Pieces cut anywhere (inside strings, between a backslash and what it escapes) give
    the structure the stdlib parser sees."""
    rng = random.Random(piece)
    for _ in range(500):
        strings = [
            "".join(rng.choice('ab\\"[]{},:') for _ in range(rng.randint(0, 6))) for _ in range(4)
        ]
        doc = {"k" + strings[0]: [strings[1], {"x": strings[2], strings[3]: ""}, [strings[3]] * 3]}
        data = json.dumps(doc).encode()
        out, in_string, at = b"", False, 0
        while at < len(data):
            end = min(len(data), at + piece)
            while end < len(data) and data[end - 1] == ord("\\"):
                end += 1
            found, in_string = json_shape._structure(data[at:end], in_string)
            out, at = out + found, end
        assert (out, in_string) == (_reference(data), False), data


def test_without_the_c_scanner_the_bounds_hold_before_the_stdlib_parse(monkeypatch):
    """``reject_duplicate_keys`` on an install without ``_body``: the List of 500,001 items
    is refused without ``json.loads`` building it."""
    monkeypatch.setattr(body, "_first_problem", None)
    loads = []
    monkeypatch.setattr(body, "python_duplicate_path", lambda data: loads.append(1))
    with pytest.raises(IngestError) as caught:
        body.reject_duplicate_keys(b'{"kind":"List","items":[' + b"0," * MAX_ITEMS + b"0]}")
    assert (caught.value.status, caught.value.errors[0].path, loads) == (413, "items", [])
