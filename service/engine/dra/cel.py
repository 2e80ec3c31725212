"""Device selectors in CEL, as k8s.io/dynamic-resource-allocation/cel (v1.35) compiles and
evaluates them, on the ``common-expression-language`` package (cel-rust; see
docs/dynamic-resources.md for why this implementation).

The environment mirrors ``newCompiler``: one variable, ``device``, with ``driver`` (string),
``attributes`` and ``capacity`` (domain -> name -> value; an unqualified name belongs to the
driver's domain, ``parseQualifiedName``; an unknown domain reads as an empty map, upstream's
``mapper``), and the Kubernetes library functions selectors use: ``quantity()`` with
``compareTo``/``isGreaterThan``/``isLessThan``/``add``/``sub``/``asInteger``/``isInteger``/
``asApproximateFloat``/``sign``, ``isQuantity()``, and ``semver()`` with ``compareTo``/
``isGreaterThan``/``isLessThan``/``major``/``minor``/``patch``, ``isSemver()``.

Quantities and versions are CEL maps with one private key (the library gives no opaque
values): a quantity is its exact value as a fraction ``"n/d"`` (so ``==`` compares values,
as resource.Quantity's Equal does), a version its canonical string.

The API server's static checks (types, cost limit) are made on the syntax tree by
service/engine/dra/cel_check.py, since this package has no checker; the length limit here.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

import cel

from service.engine.dra.cel_check import SelectorCheckError, check_selector
from service.engine.objects import Device
from service.engine.quantity import QuantityError, parse_quantity

__all__ = [
    "MAX_EXPRESSION_LENGTH",
    "CelError",
    "Selector",
    "compile_selector",
    "device_matches",
    "device_variable",
    "expression_error",
    "parse_semver",
]

# resourceapi.CELSelectorExpressionMaxLength
MAX_EXPRESSION_LENGTH = 10 * 1024

_QTY = "\x00quantity"
_VER = "\x00semver"


class CelError(Exception):
    """A selector that fails to compile or to evaluate; the message is cel-go's wording
    where it is known."""


# --- semver (blang/semver's Parse, strict: what a version attribute must be) ---
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


def parse_semver(text: str) -> tuple[int, int, int, tuple[str, ...]] | None:
    """A strict semantic version 2.0.0 (major, minor, patch, pre-release parts), or None."""
    m = _SEMVER.match(text)
    if m is None:
        return None
    pre = tuple(m.group(4).split(".")) if m.group(4) else ()
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), pre


def _semver_key(text: str) -> tuple:
    """semver.Version.Compare's order: numbers, then a release above its pre-releases,
    pre-release identifiers numeric below alphanumeric."""
    parsed = parse_semver(text)
    if parsed is None:
        raise CelError(f"invalid semver: {text}")
    major, minor, patch, pre = parsed
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre)
    return (major, minor, patch, 1 if not pre else 0, parts)


def _version(text: str) -> dict:
    return {_VER: text}


def _quantity_value(q: dict) -> Fraction:
    return Fraction(q[_QTY])


def _quantity(value: Fraction) -> dict:
    return {_QTY: f"{value.numerator}/{value.denominator}"}


def _parse_quantity(text: str) -> dict:
    try:
        return _quantity(parse_quantity(text).value)
    except QuantityError as exc:
        raise CelError(f"quantities must match the regular expression: {exc}") from None


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def _cmp(a, b) -> int:
    return (a > b) - (a < b)


def _ordered(a: dict, b: dict) -> int:
    """compareTo on two quantities or two versions."""
    if _QTY in a and _QTY in b:
        return _cmp(_quantity_value(a), _quantity_value(b))
    if _VER in a and _VER in b:
        return _cmp(_semver_key(a[_VER]), _semver_key(b[_VER]))
    raise CelError("no such overload")


def _as_integer(q: dict) -> int:
    v = _quantity_value(q)
    if v.denominator != 1 or not -(2**63) <= v.numerator < 2**63:
        raise CelError("cannot convert value to integer")
    return v.numerator


def _semver_part(index: int):
    def part(v: dict) -> int:
        if _VER not in v:
            raise CelError("no such overload")
        return _semver_key(v[_VER])[index]

    return part


def _semver(text: str) -> dict:
    if parse_semver(text) is None:
        raise CelError(f"Could not parse semver: {text}")
    return _version(text)


_FUNCTIONS = {
    "quantity": _parse_quantity,
    "isQuantity": _is_quantity,
    "compareTo": _ordered,
    "isGreaterThan": lambda a, b: _ordered(a, b) > 0,
    "isLessThan": lambda a, b: _ordered(a, b) < 0,
    "add": lambda a, b: _quantity(
        _quantity_value(a) + (_quantity_value(b) if isinstance(b, dict) else Fraction(b))
    ),
    "sub": lambda a, b: _quantity(
        _quantity_value(a) - (_quantity_value(b) if isinstance(b, dict) else Fraction(b))
    ),
    "asInteger": _as_integer,
    "isInteger": lambda q: _quantity_value(q).denominator == 1,
    "asApproximateFloat": lambda q: float(_quantity_value(q)),
    "sign": lambda q: _cmp(_quantity_value(q), 0),
    "semver": _semver,
    "isSemver": lambda text: parse_semver(text) is not None,
    "major": _semver_part(0),
    "minor": _semver_part(1),
    "patch": _semver_part(2),
}


class Selector:
    """A compiled selector (upstream's CompilationResult): the expression and its program."""

    __slots__ = ("expression", "program")

    def __init__(self, expression: str, program) -> None:
        self.expression = expression
        self.program = program


def expression_error(expression: str) -> str | None:
    """What the API server says of a selector it refuses (validateCELSelector), or None:
    too long, not a CEL expression, refused by the type checker or over the cost limit
    (service/engine/dra/cel_check.py)."""
    if len(expression.encode()) > MAX_EXPRESSION_LENGTH:
        return f"Too long: may not be more than {MAX_EXPRESSION_LENGTH} bytes"
    if not expression.strip():
        return "Required value"
    try:
        compile_selector(expression)
    except CelError as exc:
        return f"Invalid value: compilation failed: {exc}"
    try:
        check_selector(expression)
    except SelectorCheckError as exc:
        return f"Forbidden: {exc}" if exc.forbidden else f"Invalid value: {exc}"
    return None


@lru_cache(maxsize=4096)
def compile_selector(expression: str) -> Selector:
    """cel.Cache.GetOrCompile: the selector compiled once per expression."""
    try:
        return Selector(expression, cel.compile(expression))
    except (ValueError, RuntimeError) as exc:
        raise CelError(str(exc).replace("\n", " ")) from None


def _grouped(values: dict, driver: str, convert) -> dict[str, dict]:
    """parseQualifiedName over a device's names: domain -> id -> CEL value."""
    out: dict[str, dict] = {}
    for name, value in values.items():
        domain, sep, ident = name.partition("/")
        if not sep:
            domain, ident = driver, name
        out.setdefault(domain, {})[ident] = convert(value)
    return out


def _attribute_value(attr):
    return _version(attr.value) if attr.kind == "version" else attr.value


def device_variable(driver: str, device: Device) -> dict:
    """The ``device`` variable of ``DeviceMatches`` for one device of ``driver``."""
    return {
        "driver": driver,
        "attributes": _grouped(device.attributes, driver, _attribute_value),
        "capacity": _grouped(device.capacity, driver, _parse_quantity),
    }


def device_matches(selector: Selector, variable: dict) -> bool:
    """CompilationResult.DeviceMatches: the selector on one device (``device_variable``).
    An unknown domain reads as an empty map: a missing top-level key is added empty and
    the (pure) expression evaluated again. Raises CelError on a runtime error."""
    attributes, capacity = variable["attributes"], variable["capacity"]
    added: list[str] = []
    try:
        for _ in range(8):
            try:
                result = selector.program.execute({"device": variable, **_FUNCTIONS})
            except KeyError as exc:
                key = exc.args[0] if exc.args else ""
                if isinstance(key, str) and key not in attributes and key not in capacity:
                    attributes[key] = {}
                    capacity[key] = {}
                    added.append(key)
                    continue
                raise CelError(f"no such key: {key}") from None
            except CelError:
                raise
            except Exception as exc:  # the library's runtime errors
                raise CelError(str(exc).replace("\n", " ")) from None
            break
        else:
            raise CelError("no such key")
    finally:
        for key in added:
            attributes.pop(key, None)
            capacity.pop(key, None)
    if not isinstance(result, bool):
        raise CelError(f"CEL result of type {type(result).__name__} could not be converted to bool")
    return result
