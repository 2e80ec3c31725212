"""YAML read event by event into JSON text (issue 24): what it refuses, at the first event
that shows it, and that nothing recurses or grows past the limit."""

from __future__ import annotations

import mmap

import orjson
import pytest

from service.ingest import yaml_json
from service.ingest.errors import IngestError
from service.ingest.spool import FileMapping
from service.ingest.yaml_json import MAX_DEPTH, MAX_ITEMS, PYTHON_PARSER_COST, yaml_to_json

LIMIT = 1 << 30
EVENTS = 10**9  # no event budget: the tests that are not about it


@pytest.fixture(autouse=True, params=["libyaml", "python"])
def parser(request, monkeypatch):
    """Every test here runs on libyaml's parser and on PyYAML's own, the one an install
    without libyaml has (``yaml_json`` checks ``CParser``)."""
    if request.param == "python":
        monkeypatch.setattr(yaml_json, "CParser", None)
    return request.param


def as_json(text: str | bytes, limit: int = LIMIT, **options):
    data = text.encode() if isinstance(text, str) else text
    options.setdefault("max_events", EVENTS)
    return orjson.loads(memoryview(yaml_to_json(data, limit=limit, **options)))


def refused(text: str | bytes, limit: int = LIMIT, max_events: int = EVENTS) -> IngestError:
    data = text.encode() if isinstance(text, str) else text
    with pytest.raises(IngestError) as caught:
        yaml_to_json(data, limit=limit, max_events=max_events)
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


def test_depth_is_bounded_as_json_s_and_nothing_recurses(parser):
    """PyYAML's scanner looks at every flow collection still open on the line for each
    token (a possible key): 1,025 "[" on one line cost it about 2 s, so it is spared the
    long flow lines here (still refused at 1,025 levels, whatever follows)."""
    flow = ("[" * (MAX_DEPTH + 1), "[" * 30_000) if parser == "libyaml" else ()
    assert as_json("- " * MAX_DEPTH + "x") is not None
    if parser == "libyaml":
        assert as_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    for text in (*flow, "- " * 30_000 + "x", "{a: " * 30_000):
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
    result = yaml_to_json(text.encode(), limit=LIMIT, spool_over=1024, max_events=EVENTS)
    assert isinstance(result, FileMapping)
    assert orjson.loads(memoryview(result)) == [{"n": i} for i in range(20_000)]


def test_a_mapped_input_is_read_in_pieces(tmp_path):
    path = tmp_path / "body.yaml"
    path.write_bytes(b"items:\n" + b"- {kind: Pod}\n" * 10_000)
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        assert len(as_json(m)["items"]) == 10_000


def test_past_max_events_a_413_before_the_rest_is_read(parser):
    """Without libyaml each event costs some twenty times more: the budget is that share."""
    share = 1 if parser == "libyaml" else PYTHON_PARSER_COST
    text = "items:\n" + "- a\n" * 1000
    assert len(as_json(text, max_events=1010 * share)["items"]) == 1000
    error = refused(text, max_events=1000 * share)
    assert error.status == 413 and "send it as JSON" in error.errors[0].message
    assert ("without libyaml" in error.errors[0].message) == (parser == "python")


def _items(count: int, nested: bool) -> bytes:
    if nested:  # a flow sequence inside a block mapping inside a sequence
        return b"- kind: List\n  items: [" + b"0," * (count - 1) + b"0]\n"
    return b"kind: List\nitems:\n" + b"- 0\n" * count


@pytest.mark.parametrize("nested", [False, True])
def test_a_sequence_past_max_items_is_a_413_naming_it(parser, nested, monkeypatch):
    """The JSON scan's bound on an array's elements, applied to the events: refused at the
    element one too many, before the JSON of the rest is written. At full size once, on
    libyaml (a second); the other cases run the same loop with a bound of 1,000."""
    bound = MAX_ITEMS
    if parser == "python" or nested:
        bound = 1000
        monkeypatch.setattr(yaml_json, "MAX_ITEMS", bound)
    assert len(_json_items(as_json(_items(bound, nested)), nested)) == bound
    error = refused(_items(bound + 1, nested))
    assert error.status == 413
    assert error.errors[0].path == ("[0].items" if nested else "items")
    assert error.errors[0].message == f"more than {bound} items"


def _json_items(document, nested: bool) -> list:
    return document[0]["items"] if nested else document["items"]


def test_documents_past_max_items_are_a_413_naming_the_body(monkeypatch):
    monkeypatch.setattr(yaml_json, "MAX_ITEMS", 10)
    assert len(as_json("---\na: 1\n" * 10)) == 10
    error = refused("---\na: 1\n" * 11)
    assert (error.status, error.errors[0].path) == (413, "body")
