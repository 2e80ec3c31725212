"""The bounds of a JSON body's shape checked in Python, before anything is built: the stdlib
half of ``_body.c``'s (issue 24).

Where the C scanner is not built (no C compiler at install), ``body.reject_duplicate_keys``
falls back to ``json.loads``, which builds the whole tree: a ``List`` of 5 million tiny items
would be held, item by item, before any check. This module reads the body's structure
first, a piece of about ``PIECE`` bytes at a time, without building a value: strings are
cut out and every byte but brackets, braces and commas dropped (``_structure``: a few
``bytes`` operations on the whole piece), and what is left is walked with a stack of
counts. So it refuses, as
the C scanner does:

- an array of more than ``MAX_ITEMS`` elements (413 naming the array);
- more than ``MAX_LIVE_KEYS`` keys in the objects open at once (413 naming the object);
- nesting past ``MAX_DEPTH`` levels (400, the bound orjson applies to decision bodies).

Counting is all the first pass does; only a refused body is read again, token by token with
its keys, to name the path (``_path_of``). Text that is not JSON is left to the decoder that
follows, which says what is wrong with it.
"""

from __future__ import annotations

import json
import re

from service.ingest.errors import IngestError

# Elements of one array at most (_body.c's MAX_ITEMS): the decoder holds an object per item
# of a List (about 66 bytes each), so a million tiny items cost 66 MB before any check;
# 500,000 is three times the pods of the largest cluster Kubernetes supports.
MAX_ITEMS = 500_000
MAX_LIVE_KEYS = 1 << 20  # _body.c's MAX_LIVE_KEYS
MAX_DEPTH = 1024  # orjson's nesting bound
PIECE = 1 << 20  # bytes of the body read per step
_PATH_FRAMES = 40  # an error's path names at most this many levels (as yaml_json's do)

_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_BACKSLASH = ord("\\")
_STRUCTURE = re.compile(rb"[\[\]{}]|,+")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{},')
# For naming a path: keys (a string then a colon), other strings, and the structure.
_TOKENS = re.compile(rb"(" + _STRING + rb")(\s*:)?|[\[\]{},]", re.DOTALL)


class _Refusal(Exception):
    """Which bound the body passed, and the ordinal of the opening bracket it passed it in
    (the n-th ``[`` or ``{`` of the body, strings aside)."""

    def __init__(self, kind: str, opener: int) -> None:
        super().__init__(kind)
        self.kind, self.opener = kind, opener


def check_shape(data) -> None:
    """413 for an array past ``MAX_ITEMS`` or objects past ``MAX_LIVE_KEYS``, 400 for nesting
    past ``MAX_DEPTH``, each naming where; nothing for text within the bounds, JSON or not."""
    if isinstance(data, str):
        data = data.encode()
    try:
        _walk(data)
    except _Refusal as refusal:
        raise _error(refusal.kind, _path_of(data, refusal.opener)) from None


def _walk(data) -> None:
    """The first pass: counts only. Each open container is ``[is_array, commas, opener]``;
    an array of n > 0 elements holds n - 1 commas, an object of n keys as many."""
    stack: list[list] = []
    openers = 0
    live_keys = 0  # an open object counts one key before its first comma
    in_string = False
    size, at = len(data), 0
    while at < size:
        end = min(size, at + PIECE)
        while end < size and data[end - 1] == _BACKSLASH:
            end += 1  # a piece never ends inside a run of backslashes
        piece, in_string = _structure(data[at:end], in_string)
        at = end
        for token in _STRUCTURE.findall(piece):
            if token == b"[" or token == b"{":
                openers += 1
                if len(stack) >= MAX_DEPTH:
                    raise _Refusal("too_deep", openers)
                is_array = token == b"["
                stack.append([is_array, 0, openers])
                if not is_array:
                    live_keys += 1
                    if live_keys > MAX_LIVE_KEYS:
                        raise _Refusal("too_many_keys", openers)
            elif token == b"]" or token == b"}":
                if not stack:
                    return  # unbalanced: not JSON
                closed = stack.pop()
                if not closed[0]:
                    live_keys -= closed[1] + 1
            elif stack:
                top = stack[-1]
                top[1] += len(token)
                if top[0]:
                    if top[1] >= MAX_ITEMS:
                        raise _Refusal("too_many_items", top[2])
                else:
                    live_keys += len(token)
                    if live_keys > MAX_LIVE_KEYS:
                        raise _Refusal("too_many_keys", top[2])


def _structure(piece: bytes, in_string: bool) -> tuple[bytes, bool]:
    """The brackets, braces and commas of ``piece`` outside strings, and whether it ends
    inside one. Escapes go first: in a string every backslash starts a two-byte escape, so
    removing the escaped backslashes, then the escaped quotes, leaves quotes that only open
    and close strings. Then every byte but those and the structure goes; two quotes side by
    side can go too (an empty string, or two strings with nothing but a colon between
    them: either way no structure is in or out of a string for it), which leaves few
    quotes, and a split at those alternates outside and inside."""
    if b"\\" in piece:
        piece = piece.replace(b"\\\\", b"").replace(b'\\"', b"")
    piece = piece.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' not in piece:
        return (b"" if in_string else piece), in_string
    parts = piece.split(b'"')
    outside = parts[1::2] if in_string else parts[::2]
    return b"".join(outside), in_string ^ (len(parts) % 2 == 0)


def _path_of(data, opener: int) -> str:
    """The path of the ``opener``-th container, read again token by token with the keys."""
    stack: list[list] = []  # [is_array, index or key]
    seen = 0
    for token in _TOKENS.finditer(data):
        text = token.group(0)
        if token.group(2) is not None:  # a key
            if stack:
                stack[-1][1] = json.loads(token.group(1))
        elif text == b"[" or text == b"{":
            seen += 1
            if seen == opener:
                return _format(stack)
            stack.append([text == b"[", 0])
        elif text == b"]" or text == b"}":
            if stack:
                stack.pop()
        elif text == b"," and stack and stack[-1][0]:
            stack[-1][1] += 1
    return "body"  # pragma: no cover - the first pass found the opener


def _format(stack: list[list]) -> str:
    path = ""
    for is_array, part in stack[:_PATH_FRAMES]:
        if is_array:
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    if len(stack) > _PATH_FRAMES:
        path += "..."
    return path or "body"


def _error(kind: str, path: str) -> IngestError:
    if kind == "too_many_items":
        return IngestError.one(path, f"more than {MAX_ITEMS} items", status=413)
    if kind == "too_many_keys":
        return IngestError.one(
            path,
            "object too large: over 1048576 keys (or 64 MiB of escaped keys) open at once",
            status=413,
        )
    return IngestError.one(path, f"JSON nested too deeply (over {MAX_DEPTH} levels)", status=400)
