"""YAML bodies turned into JSON text, event by event, with the bounds checked before
anything is built (issue 24).

libyaml (PyYAML's C parser) yields one event at a time (a scalar, the start or end of a
mapping or sequence, a document), and its parser keeps its own nesting on the heap, not
on the C stack. Each event is written out as JSON at once, in a loop with an explicit
stack: nothing recurses, no Python tree of the document is ever held, and the JSON text
goes to a ``Spool`` (memory, then a temporary file) counted against the caller's limit as
it grows. The JSON then takes the path every JSON body takes (repeated keys, NUL, the
decoders), so YAML costs what its JSON form costs, plus the events' CPU.

Refused at the first event that shows them, each a 400 naming where:

- an anchor or an alias, whatever the line breaks around them (kubectl never prints
  either; refusing them rules out alias bombs);
- nesting deeper than JSON's (``MAX_DEPTH``, orjson's bound);
- a tag other than YAML's core ones (``!!str``, ``!!int``, ...), a merge key ``<<``, a key
  that is not a string (a number, a boolean, a mapping or sequence as a key), or a number
  JSON cannot hold (``.inf``, ``.nan``).

Scalars are resolved as PyYAML's SafeLoader resolves them (YAML 1.1: ``yes`` is true,
``0x1F`` is 31), except timestamps, which stay the text written: sigs.k8s.io/yaml's
``YAMLToJSON`` (go-yaml v2) keeps them as strings when decoding into an untyped value.
Several documents become a JSON array of the non-empty ones, one document itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import orjson
import yaml
import yaml.parser
import yaml.reader
import yaml.scanner

from service.ingest.errors import IngestError
from service.ingest.json_shape import MAX_ITEMS
from service.ingest.spool import Spool

try:  # libyaml's parser, where PyYAML was built with it (its wheels are)
    from yaml._yaml import CParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    CParser = None

# Events (nodes) read from one body by default: about half a second of a worker's CPU, and
# a YAML text of 6 to 8 MiB as kubectl writes it (VERDICT_MAX_YAML_NODES for the API).
MAX_EVENTS = 500_000
MAX_DEPTH = 1024  # orjson's nesting bound for JSON bodies (1024 levels pass, 1025 do not)
# PyYAML's own parser costs about twenty times libyaml's per event (17-27 us against 1-3 us,
# bench/RESULTS.md issue 24 part 3): without libyaml a body gets that share of the events.
PYTHON_PARSER_COST = 20
FLUSH_BYTES = 1 << 16  # JSON text gathered before it is written to the spool
READ_BYTES = 1 << 16  # input handed to libyaml per read
_PATH_FRAMES = 40  # an error's path names at most this many levels
_CACHED_SCALAR = 64  # plain scalars up to this length are resolved once per body

_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_CONSTRUCT = {
    "tag:yaml.org,2002:int": _CONSTRUCTOR.construct_yaml_int,
    "tag:yaml.org,2002:float": _CONSTRUCTOR.construct_yaml_float,
    "tag:yaml.org,2002:bool": _CONSTRUCTOR.construct_yaml_bool,
}


class _Refused(Exception):
    """A YAML construct this reader does not take; ``message`` says which."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Reader:
    """A body (bytes, bytearray or a mapped spool) handed to libyaml piece by piece, so a
    mapped body is never copied whole into the worker's memory."""

    def __init__(self, data) -> None:
        self._view = memoryview(data)
        self._at = 0

    def read(self, size: int = READ_BYTES) -> bytes:
        piece = self._view[self._at : self._at + size].tobytes()
        self._at += len(piece)
        return piece

    def close(self) -> None:
        self._view.release()


class _PythonParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    """PyYAML's pure-Python parser, where libyaml is not built: the same events, read from
    the stream 4 KiB at a time; its states and indents are lists, so nothing recurses."""

    def __init__(self, stream) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)

    def dispose(self) -> None:
        self.states, self.marks = [], []


def _parser(reader: _Reader):
    """libyaml's parser where it is built, else PyYAML's own."""
    return CParser(reader) if CParser is not None else _PythonParser(reader)


def event_budget(max_events: int) -> int:
    """The events a body may hold: ``max_events`` with libyaml, a twentieth without it, so
    that a body costs about the same CPU either way."""
    return max_events if CParser is not None else max(1, max_events // PYTHON_PARSER_COST)


class _Frame:
    """An open mapping or sequence: how many entries it has so far and, in a mapping,
    whether a key is expected next and the last key read (for error paths)."""

    __slots__ = ("count", "is_map", "key", "want_key")

    def __init__(self, is_map: bool) -> None:
        self.is_map = is_map
        self.count = 0
        self.key = ""
        self.want_key = is_map


def _path(stack: list[_Frame]) -> str:
    """Where the current event is, as JSON bodies' errors say it: ``items[3].metadata``."""
    path = ""
    for frame in stack[1:_PATH_FRAMES]:  # stack[0] holds the documents
        if frame.is_map:
            if not frame.want_key:
                path = f"{path}.{frame.key}" if path else frame.key
        else:
            path += f"[{frame.count}]"
    if len(stack) > _PATH_FRAMES:
        path += "..."
    return path or "body"


def _scalar_value(event):
    """The value of a scalar event as SafeLoader would construct it (timestamps as text)."""
    tag = event.tag
    if tag is None or tag == "!":
        tag = _RESOLVER.resolve(yaml.ScalarNode, event.value, event.implicit)
    if tag in (_STR, _TIMESTAMP):
        return event.value
    if tag == _NULL:
        return None
    construct = _CONSTRUCT.get(tag)
    if construct is None:
        if tag == _MERGE:
            raise _Refused("YAML merge keys (<<) are not supported")
        raise _Refused(f"YAML tag {tag} is not supported")
    try:
        return construct(yaml.ScalarNode(tag, event.value))
    except ValueError as exc:  # an integer past Python's digit limit, say
        raise _Refused(f"not a number JSON can hold: {exc}") from None


def _scalar_json(event) -> bytes:
    value = _scalar_value(event)
    if isinstance(value, float) and not math.isfinite(value):
        raise _Refused(f"{event.value!r} is not a number JSON can hold")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value).encode()  # any size, as a JSON number
    return orjson.dumps(value)


def _key_json(event) -> bytes:
    if event.tag is None and event.style:  # quoted or a block scalar: a string
        return orjson.dumps(event.value) + b":"
    value = _scalar_value(event)
    if not isinstance(value, str):
        raise _Refused(f"a mapping key must be a string, not {event.value!r}")
    return orjson.dumps(value) + b":"


class _Output:
    """JSON text gathered in a buffer and written to ``spool`` in pieces; past ``limit``
    bytes a 413, and ``on_grow(size)`` told the size at each write."""

    def __init__(self, spool: Spool, limit: int, on_grow) -> None:
        self.spool, self.limit, self.on_grow = spool, limit, on_grow
        self.size = 0

    def flush(self, buffer: bytearray) -> None:
        self.size += len(buffer)
        if self.size > self.limit:
            raise IngestError.one(
                "body",
                f"body exceeds the limit of {self.limit} bytes as JSON (converted from YAML)",
                status=413,
            )
        self.spool.write(buffer)
        if self.on_grow is not None:
            self.on_grow(self.size)


def _too_many_events(max_events: int) -> IngestError:
    without = "" if CParser is not None else " (this install reads YAML without libyaml)"
    return IngestError.one(
        "body",
        f"YAML body too large: over {max_events} nodes{without} (each costs about a "
        "microsecond to read, some thirty times what JSON costs); send it as JSON",
        status=413,
    )


def _too_many_items(stack: list[_Frame]) -> IngestError:
    """The sequence on top of ``stack`` passed MAX_ITEMS: named as the JSON scan names an
    array (its own path, not its element's)."""
    return IngestError.one(_path(stack[:-1]), f"more than {MAX_ITEMS} items", status=413)


def _convert(parser, out: _Output, spool: Spool, max_events: int) -> None:
    """The events of ``parser`` written to ``out`` as JSON text; a document-list frame at
    the bottom of the stack counts the non-empty documents. Past ``max_events`` events, a
    413: the CPU a YAML body costs is bounded as its memory is. A sequence (or a stream of
    documents) past MAX_ITEMS elements is a 413 naming it, at its first element too many,
    as a JSON array is."""
    scalar_cache: dict[tuple, bytes] = {}
    buffer = bytearray(b" ")  # becomes "[" if the stream holds several documents
    stack = [_Frame(False)]
    frame = stack[0]
    get_event = parser.get_event
    scalar_event, alias_event = yaml.ScalarEvent, yaml.AliasEvent
    mapping_start, sequence_start = yaml.MappingStartEvent, yaml.SequenceStartEvent
    mapping_end, sequence_end = yaml.MappingEndEvent, yaml.SequenceEndEvent
    stream_end = yaml.StreamEndEvent
    events = 0
    try:
        while True:
            event = get_event()
            events += 1
            if events > max_events:
                raise _too_many_events(max_events)
            kind = event.__class__
            if kind is scalar_event:
                if event.anchor is not None:
                    raise _Refused("YAML anchors and aliases are not supported")
                if frame.want_key:
                    frame.key, frame.want_key = event.value, False  # (for the error's path)
                    if frame.count:
                        buffer += b","
                    buffer += _key_json(event)
                    continue
                cacheable = not event.style and len(event.value) <= _CACHED_SCALAR
                text = scalar_cache.get((event.tag, event.value)) if cacheable else None
                if text is None:
                    text = _scalar_json(event)
                    if cacheable and len(scalar_cache) < 4096:
                        scalar_cache[(event.tag, event.value)] = text
                if len(stack) == 1 and text == b"null":
                    continue  # an empty document
                if frame.count and not frame.is_map:
                    if frame.count >= MAX_ITEMS:
                        raise _too_many_items(stack)
                    buffer += b","
                buffer += text
                frame.count += 1
                frame.want_key = frame.is_map
            elif kind is mapping_start or kind is sequence_start:
                if event.anchor is not None:
                    raise _Refused("YAML anchors and aliases are not supported")
                is_map = kind is mapping_start
                if (
                    event.tag is not None
                    and event.tag != "!"
                    and event.tag != (_MAP if is_map else _SEQ)
                ):
                    raise _Refused(f"YAML tag {event.tag} is not supported")
                if frame.want_key:
                    raise _Refused("a mapping key must be a string, not a collection")
                if len(stack) > MAX_DEPTH:
                    raise _Refused(f"YAML nested too deeply (over {MAX_DEPTH} levels)")
                if frame.count and not frame.is_map:
                    if frame.count >= MAX_ITEMS:
                        raise _too_many_items(stack)
                    buffer += b","
                buffer += b"{" if is_map else b"["
                frame = _Frame(is_map)
                stack.append(frame)
            elif kind is mapping_end or kind is sequence_end:
                buffer += b"}" if frame.is_map else b"]"
                stack.pop()
                frame = stack[-1]
                frame.count += 1
                frame.want_key = frame.is_map
            elif kind is alias_event:
                raise _Refused("YAML anchors and aliases are not supported")
            elif kind is stream_end:
                break
            if len(buffer) >= FLUSH_BYTES:
                out.flush(buffer)
                buffer = bytearray()
    except _Refused as exc:
        raise IngestError.one(_path(stack), exc.message, status=400) from None
    documents = stack[0].count
    if documents == 0:
        buffer += b"[]"
    elif documents > 1:
        buffer += b"]"
    out.flush(buffer)
    if documents > 1:
        spool.replace_first_byte(b"[")


def yaml_to_json(
    data,
    *,
    limit: int,
    on_grow: Callable[[int], object] | None = None,
    spool_over: int | None = None,
    max_events: int = MAX_EVENTS,
):
    """A YAML body (bytes, bytearray or a mapped spool) as JSON text: a bytearray, or past
    ``spool_over`` bytes a read-only mapping of a temporary file. 413 once the JSON passes
    ``limit`` bytes or past ``max_events`` events (scalars, starts and ends of collections);
    400 naming the place of the first construct refused (see the module) or of invalid
    YAML."""
    reader = _Reader(data)
    parser = None
    try:
        parser = _parser(reader)  # PyYAML's own reads the start of the body already
        with Spool(spool_over) as spool:
            _convert(parser, _Output(spool, limit, on_grow), spool, event_budget(max_events))
            return spool.result()
    except yaml.YAMLError as exc:
        raise IngestError.one("body", f"invalid YAML: {exc}", status=400) from None
    finally:
        if parser is not None:
            parser.dispose()
        reader.close()
