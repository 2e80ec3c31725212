"""Decoding Kubernetes JSON into the wire structs (errors naming the field), and what the
families' conversions share: the Interner, names, quantities as base-unit integers."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import msgspec
import orjson

from service.engine.quantity import QuantityError, given_text, parse_quantity, to_base_units
from service.ingest import wire
from service.ingest.errors import FieldError, IngestError

_DECODERS: dict[type, msgspec.json.Decoder] = {}
_MSGSPEC_PATH = re.compile(r"^(.*?)(?: - at `\$(.*)`)?$", re.S)


def _decoder(kind: type) -> msgspec.json.Decoder:
    decoder = _DECODERS.get(kind)
    if decoder is None:
        decoder = _DECODERS[kind] = msgspec.json.Decoder(kind)
    return decoder


def _validation_error(
    exc: msgspec.ValidationError | msgspec.DecodeError, prefix: str
) -> IngestError:
    """Turn msgspec's "Expected `int`, got `str` - at `$.spec.priority`" into a field path."""
    match = _MSGSPEC_PATH.match(str(exc))
    message, at = (match.group(1), match.group(2) or "") if match else (str(exc), "")
    path = at[1:] if at.startswith(".") else at
    return IngestError([FieldError(path, message)]).prefixed(prefix)


def decode_json(data: bytes | memoryview, kind: type, prefix: str = "") -> Any:
    """Decode JSON bytes into a wire struct; errors name the field."""
    try:
        return _decoder(kind).decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise _validation_error(exc, prefix) from None
    except RecursionError:
        raise IngestError.one(prefix or "body", "JSON nested too deeply", status=400) from None


def convert_object(obj: Any, kind: type, prefix: str = "") -> Any:
    """Like decode_json, for objects already parsed (YAML, a decision request's ``pod``)."""
    # Through JSON bytes, so that the same decoder (and its Raw fields) serves both paths.
    try:
        data = orjson.dumps(obj)
    except (orjson.JSONEncodeError, TypeError) as exc:
        raise IngestError.one(
            prefix or "body", f"not representable as JSON: {exc}", status=400
        ) from None
    return decode_json(data, kind, prefix)


# --- sharing ---


class Interner:
    """Shares equal immutable parts between objects of one snapshot (replicas of a workload
    have identical containers, tolerations and labels), which divides the memory a large
    snapshot takes. The model is frozen, so shared parts are never changed in place."""

    def __init__(self) -> None:
        self._values: dict = {}

    def value(self, obj):
        return self._values.setdefault(obj, obj)

    def get(self, key):
        return self._values.get(key)

    def put(self, key, obj):
        self._values[key] = obj
        return obj

    def mapping(self, d: dict) -> dict:
        if not d:
            return _EMPTY
        return self._values.setdefault(("map", *d.items()), d)


_EMPTY: dict = {}


def require_name(raw: Any, what: str, prefix: str) -> None:
    """metadata.name is required: its absence is refused at once (``what`` needs a name)."""
    if not raw.metadata.name:
        raise IngestError.one(f"{prefix}.metadata.name", f"{what} needs a name")


def name_errors(meta: wire.Metadata, what: str) -> list[FieldError]:
    """The errors of an object's conversion, begun with its missing name if it has none."""
    if meta.name:
        return []
    return [FieldError("metadata.name", f"{what} needs a name")]


# --- quantities ---


@lru_cache(maxsize=65536)
def base_units(name: str, value: wire.QuantityValue) -> tuple[int, str]:
    quantity = parse_quantity(value.strip() if isinstance(value, str) else value)
    if quantity.sign() < 0:
        raise QuantityError("must be greater than or equal to 0")
    return to_base_units(name, quantity), quantity.format


@lru_cache(maxsize=65536)
def _given(name: str, value: wire.QuantityValue, first_format: str) -> str | None:
    """The quantity as the API server serves it, when its integer and the pod's (node's)
    first format for ``name`` cannot rebuild it exactly (see engine.quantity.given_text);
    else None."""
    if isinstance(value, str):
        text = value.strip()
    else:  # a JSON number, parsed as its decimal string (a float as repr)
        text = repr(value) if isinstance(value, float) else str(value)
    amount, _ = base_units(name, value)
    return given_text(name, parse_quantity(text), amount, first_format)


def resource_list(
    raw: wire.WireResourceList | None,
    path: str,
    errors: list[FieldError],
    formats: dict[str, str],
    given: dict[str, str] | None = None,
) -> dict[str, int]:
    """Base-unit integers of a resource list; the quantities they cannot rebuild go to
    ``given`` as written."""
    if not raw:
        return {}
    out: dict[str, int] = {}
    for name, value in raw.items():
        try:
            amount, fmt = base_units(name, value)
        except QuantityError as exc:
            errors.append(FieldError(f"{path}.{name}", f"invalid quantity {value!r}: {exc}"))
            continue
        out[name] = amount
        first = formats.setdefault(name, fmt)
        if given is not None:
            text = _given(name, value, first)
            if text is not None:
                given[name] = text
    return out
