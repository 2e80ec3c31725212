"""The C scanner for repeated JSON keys (service/ingest/_body.c) against the stdlib scan.

Both must name the same first repeated key for any JSON text, whatever the spelling of its
keys (escapes, surrogate pairs, whitespace); the C one is what POST /v1/snapshots runs.
"""

from __future__ import annotations

import importlib
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.ingest import body
from service.ingest.body import (
    MAX_ITEMS,
    _first_path,
    _format_path,
    _has_nul,
    _Pairs,
    parse_snapshot,
    python_duplicate_path,
    reject_duplicate_keys,
)
from service.ingest.errors import IngestError

# The extension is optional where no C compiler is; CI has one, so there it must have built.
_first_problem = (
    importlib.import_module("service.ingest._body")
    if os.environ.get("CI")
    else pytest.importorskip("service.ingest._body")
).first_problem


def first_duplicate(text):
    found = _first_problem(text)
    return found[1] if found and found[0] == "duplicate" else None


KEYS = st.sampled_from(
    ["a", "b", 'k:{"name":"c"}', "é", "😀", "a\\b", "\x01", "/", "n\x00", "\\u0000"]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.text(max_size=5),
    st.sampled_from(["\x00", "\\u0000", "a\\\x00"]),
)


class Pairs(list):
    """An object as its pairs, duplicates kept."""


TREES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(st.tuples(KEYS, inner), max_size=5).map(Pairs),
    ),
    max_leaves=25,
)


def _spell_key(key: str, draw) -> str:
    """A key written with some characters escaped as \\uXXXX (pairs for astral ones)."""
    out = []
    for char in key:
        if draw(st.booleans()):
            code = ord(char)
            if code > 0xFFFF:
                code -= 0x10000
                out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04X}")
            else:
                out.append(f"\\u{code:04x}")
        else:
            out.append(json.dumps(char, ensure_ascii=False)[1:-1])
    return '"' + "".join(out) + '"'


def _write(tree, draw) -> str:
    space = draw(st.sampled_from(["", " ", "\n  ", "\t"]))
    if isinstance(tree, Pairs):
        items = [f"{_spell_key(k, draw)}{space}:{space}{_write(v, draw)}" for k, v in tree]
        return "{" + space + ("," + space).join(items) + space + "}"
    if isinstance(tree, list):
        return "[" + ",".join(space + _write(v, draw) for v in tree) + "]"
    return json.dumps(tree, ensure_ascii=draw(st.booleans()))


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_c_scanner_names_the_same_path_as_the_stdlib_scans(data):
    tree = data.draw(TREES)
    text = _write(tree, data.draw).encode("utf-8", "surrogatepass")
    found = _first_problem(text)
    duplicate = python_duplicate_path(text)
    if duplicate is not None:
        assert found[0] == "duplicate"
        assert _format_path(found[1]) == duplicate
        return
    nul = _first_path(json.loads(text, object_pairs_hook=_Pairs), "", _has_nul, _has_nul)
    if nul is None:
        assert found is None
    else:
        assert found[0] == "nul"
        assert _format_path(found[1]) == nul


@pytest.mark.parametrize(
    ("text", "path"),
    [
        (b'{"a": 1, "a": 2}', "a"),
        (b'{"a": {"b": [0, {"c": 1, "c": 2}]}}', "a.b[1].c"),
        (b'[{"x": 1}, {"y": 1, "\\u0079": 2}]', "[1].y"),
        (b'{"\\ud83d\\ude00": 1, "\xf0\x9f\x98\x80": 2}', "\U0001f600"),
        (b'{"k:{\\"a\\":1}": 1, "k:{\\"a\\":1}": {}}', 'k:{"a":1}'),
        # the repeat comes after an object that is closed: its keys are forgotten
        (b'{"a": {"x": 1}, "b": {"x": 1}, "a": 3}', "a"),
    ],
)
def test_repeated_keys_are_named(text, path):
    with pytest.raises(IngestError) as caught:
        reject_duplicate_keys(text)
    assert caught.value.errors[0].path == path
    assert caught.value.status == 400


def test_many_keys_in_one_object_are_checked_through_its_table():
    keys = [f"key{i}" for i in range(50_000)]
    text = ("{" + ",".join(f'"{k}": {i}' for i, k in enumerate(keys)) + "}").encode()
    assert first_duplicate(text) is None
    assert first_duplicate(text[:-1] + b', "key49999": 0}') == ["key49999"]
    assert first_duplicate(text[:-1] + b', "key0": 0}') == ["key0"]


@pytest.mark.parametrize("text", [b"", b"{", b'{"a" 1}', b"[1,]", b"NaN", b'{"a": 1} x'])
def test_text_the_scanner_cannot_read_is_left_to_the_decoder(text):
    with pytest.raises(ValueError):
        _first_problem(text)
    reject_duplicate_keys(text)  # no repeat to name: the decoder that follows reports it
    with pytest.raises(IngestError) as caught:
        parse_snapshot(text)
    assert caught.value.status in (400, 422)


def test_the_stdlib_scan_still_answers_without_the_c_scanner(monkeypatch):
    monkeypatch.setattr(body, "_first_problem", None)
    with pytest.raises(IngestError) as caught:
        reject_duplicate_keys(b'{"a": [{"b": 1, "b": 2}]}')
    assert caught.value.errors[0].path == "a[0].b"


def test_nesting_past_the_scanners_depth_is_a_400():
    with pytest.raises(IngestError) as caught:
        parse_snapshot(b'{"items": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    assert caught.value.status == 400


@pytest.mark.parametrize(
    ("text", "path"),
    [
        (b'{"a": ["x", "y\\u0000"]}', "a[1]"),
        (b'{"a": {"k\\u0000": 1}}', "a.k\x00"),
        (b'"\\u0000"', "body"),
    ],
)
def test_a_nul_is_named_when_no_key_repeats(text, path):
    with pytest.raises(IngestError) as caught:
        reject_duplicate_keys(text)
    assert caught.value.errors[0].path == path
    assert "NUL" in caught.value.errors[0].message


def test_an_escaped_backslash_before_u0000_is_no_nul():
    reject_duplicate_keys(b'{"a": "\\\\u0000"}')


def test_a_repeat_is_named_before_a_nul_elsewhere():
    with pytest.raises(IngestError) as caught:
        reject_duplicate_keys(b'{"a": "\\u0000", "b": {"c": 1, "c": 2}}')
    assert caught.value.errors[0].path == "b.c"


MAX_LIVE_KEYS = 1 << 20  # _body.c


def _object(n: int, prefix: str = "k") -> str:
    return "{" + ",".join(f'"{prefix}{i}":0' for i in range(n)) + "}"


def test_an_object_past_the_key_bound_is_named_and_refused():
    """What the scanner holds is bounded: an object of more keys than MAX_LIVE_KEYS (no
    Kubernetes object comes near) stops the scan, naming the object, and the body is a 413,
    where holding every key of a 90 MiB object took about 290 MiB."""
    text = '{"items":[' + _object(MAX_LIVE_KEYS + 1) + "]}"
    assert _first_problem(text.encode()) == ("too_many_keys", ["items", 0])
    with pytest.raises(IngestError) as raised:
        parse_snapshot(text.encode())
    assert raised.value.status == 413
    assert raised.value.errors[0].path == "items[0]"


def test_the_key_bound_counts_open_objects_only():
    """Closed objects let their keys go: siblings of 600,000 keys each pass, and a repeat in
    the last one is still found."""
    siblings = [_object(600_000), _object(600_000)]
    assert _first_problem(("[" + ",".join(siblings) + "]").encode()) is None
    last = siblings[1][:-1] + ',"k599999":1}'
    assert first_duplicate(("[" + siblings[0] + "," + last + "]").encode()) == [1, "k599999"]


def test_an_array_past_the_item_bound_is_named_and_refused():
    """A List of millions of tiny items held one decoder object per item (some 66 bytes:
    5 million cost 330 MB) before any check; past MAX_ITEMS elements the scan stops, naming
    the array, and the body is a 413 before anything is decoded."""
    at_bound = '{"kind":"List","items":[' + "0," * (MAX_ITEMS - 1) + "0]}"
    assert _first_problem(at_bound.encode()) is None
    past = '{"kind":"List","items":[' + "0," * MAX_ITEMS + "0]}"
    assert _first_problem(past.encode()) == ("too_many_items", ["items"])
    with pytest.raises(IngestError) as raised:
        parse_snapshot(past.encode())
    assert raised.value.status == 413
    assert raised.value.errors[0].path == "items"
    nested = '{"objects":{"kind":"List","items":[' + "{}," * MAX_ITEMS + "{}]}}"
    assert _first_problem(nested.encode()) == ("too_many_items", ["objects", "items"])


def test_a_string_of_millions_of_escapes_is_read_once():
    """The scanner looked for the closing quote again after every escape: 3 million escapes
    in one string (9 MiB) cost minutes of a worker's CPU before a 413 or a 201. Now one pass:
    the array after the string is still reached and its bound applied."""
    text = b'{"s":"' + b"a\\\\" * (3 << 20) + b'","items":[' + b"0," * MAX_ITEMS + b"0]}"
    assert _first_problem(text) == ("too_many_items", ["items"])
    quotes = b'{"k' + b'\\"' * (3 << 20) + b'":1,"k' + b'\\"' * (3 << 20) + b'":2}'
    assert first_duplicate(quotes) == ["k" + '"' * (3 << 20)]
