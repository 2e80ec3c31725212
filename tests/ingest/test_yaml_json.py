"""YAML read event by event into JSON text (issue 24): what it refuses, at the first event
that shows it, and that nothing recurses or grows past the limit."""

from __future__ import annotations

import mmap

import orjson
import pytest

from service.ingest.errors import IngestError
from service.ingest.spool import FileMapping
from service.ingest.yaml_json import MAX_DEPTH, yaml_to_json

LIMIT = 1 << 30


def as_json(text: str | bytes, limit: int = LIMIT, **options):
    data = text.encode() if isinstance(text, str) else text
    return orjson.loads(memoryview(yaml_to_json(data, limit=limit, **options)))


def refused(text: str | bytes, limit: int = LIMIT) -> IngestError:
    data = text.encode() if isinstance(text, str) else text
    with pytest.raises(IngestError) as caught:
        yaml_to_json(data, limit=limit)
    return caught.value


def test_scalars_resolve_as_safe_loader_resolves_them_timestamps_kept_as_written():
    doc = "a: [x, 'y', 0x1f, yes, ~, 1.5, 2026-11-20T10:00:00Z, '1', 12345678901234567890123]\n"
    text = bytes(yaml_to_json(doc.encode(), limit=LIMIT)).strip()
    assert text == (
        b'{"a":["x","y",31,true,null,1.5,"2026-11-20T10:00:00Z","1",12345678901234567890123]}'
    )


def test_documents_one_is_itself_several_are_a_list_empty_ones_skipped():
    assert as_json("a: 1\n") == {"a": 1}
    assert as_json("---\na: 1\n---\n---\nb: [2]\n") == [{"a": 1}, {"b": [2]}]
    assert as_json("a: 1\n---\n~\n") == {"a": 1}
    assert as_json("") == []


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("a:\n  b:\n  - c: &x 1\n", "a.b[0].c"),
        ("a: *x\n", "a"),
        ("a:\n  b:\u2028  - &x c\n", "a.b[0]"),  # U+2028 is a line break to libyaml
        ("a: [1,\u0085 &x 2]\n", "a[1]"),  # and so is U+0085 (NEL)
        ("a: [1,\u2029&x [2]]\n", "a[1]"),
        ("- !!map &x {b: 1}\n", "[0]"),
    ],
)
def test_anchors_and_aliases_are_refused_whatever_the_line_breaks(text, path):
    error = refused(text)
    assert error.status == 400
    assert error.errors[0].path == path
    assert "anchors and aliases" in error.errors[0].message


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        ("a:\n  1: x\n", "a.1", "key must be a string"),
        ("? [a]\n: b\n", "body", "key must be a string"),
        ("a: !!binary aGVsbG8=\n", "a", "tag tag:yaml.org,2002:binary"),
        ("a: !custom x\n", "a", "tag !custom"),
        ("a: .inf\n", "a", "JSON can hold"),
        ("<<: {a: 1}\n", "<<", "merge keys"),
        ("a: 'b\n", "body", "invalid YAML"),
        (b"a: \xff\n", "body", "invalid YAML"),
    ],
)
def test_what_json_cannot_say_is_a_400_naming_where(text, path, message):
    error = refused(text)
    assert (error.status, error.errors[0].path) == (400, path)
    assert message in error.errors[0].message


def test_depth_is_bounded_as_json_s_and_nothing_recurses():
    assert as_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    for text in ("[" * (MAX_DEPTH + 1), "[" * 30_000, "- " * 30_000 + "x", "{a: " * 30_000):
        error = refused(text)
        assert error.status == 400 and "nested too deeply" in error.errors[0].message
        assert len(error.errors[0].path) < 200


def test_the_json_is_counted_against_the_limit_as_it_grows():
    grown = []
    error = refused("- " + "a" * 100 + "\n", limit=50)
    assert error.status == 413
    text = "".join(f"- item-{i}\n" for i in range(50_000))
    as_json(text, on_grow=grown.append)
    assert (
        grown
        and grown == sorted(grown)
        and grown[-1] == len(orjson.dumps([f"item-{i}" for i in range(50_000)])) + 1
    )  # the leading placeholder byte


def test_past_spool_over_the_json_is_a_mapped_file_and_several_documents_still_a_list():
    text = "".join(f"---\nn: {i}\n" for i in range(20_000))
    result = yaml_to_json(text.encode(), limit=LIMIT, spool_over=1024)
    assert isinstance(result, FileMapping)
    assert orjson.loads(memoryview(result)) == [{"n": i} for i in range(20_000)]


def test_a_mapped_input_is_read_in_pieces(tmp_path):
    path = tmp_path / "body.yaml"
    path.write_bytes(b"items:\n" + b"- {kind: Pod}\n" * 10_000)
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        assert len(as_json(m)["items"]) == 10_000


def test_past_max_events_a_413_before_the_rest_is_read():
    text = "items:\n" + "- a\n" * 1000
    assert len(as_json(text, max_events=1010)["items"]) == 1000
    with pytest.raises(IngestError) as caught:
        yaml_to_json(text.encode(), limit=LIMIT, max_events=500)
    assert caught.value.status == 413 and "send it as JSON" in caught.value.errors[0].message
