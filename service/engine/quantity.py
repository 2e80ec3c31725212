"""Kubernetes ``resource.Quantity``: parsing, exact arithmetic, integer views, canonical strings.

Mirrors staging/src/k8s.io/apimachinery/pkg/api/resource (quantity.go, suffix.go, amount.go,
math.go, scale_int.go) as of kubernetes master, k8s 1.3x: ``ParseQuantity``, ``Cmp``,
``Value``, ``MilliValue`` and ``String``.
Values are held as exact ``Fraction``s; nothing here ever goes through a float.

One deliberate deviation, for inputs no pod or node carries: parsing rejects (with the ErrNumeric text) a number with more than
``MAX_SIGNIFICANT_DIGITS`` significant digits, or a decimal magnitude of
``10**MAX_DECIMAL_MAGNITUDE`` or more. Upstream keeps such values in an int64-scaled or
big-decimal form; an exact ``Fraction`` of ``1e2147483647`` would not fit in memory.

The integer views (``milli_value``/``int_value``/``scaled_value``) are int64 as v1.35's are,
never saturated: they depend on how upstream holds the quantity (``Quantity.rep``), an
int64Amount{value, scale} or an inf.Dec{unscaled, scale}. ParseQuantity and Add decide that
representation; ``scaled_value`` then follows int64Amount.AsScaledInt64 (a scale-up by
10^1/2/3/6/9 wraps around, any other returns 0 on overflow; a scale-down rounds away from
zero) or math.go scaledValue (the low 64 bits of a big.Int, a scale-up multiplied in int64).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

__all__ = [
    "BINARY_SI",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "ERR_FORMAT_WRONG",
    "ERR_NUMERIC",
    "ERR_SUFFIX",
    "Quantity",
    "QuantityError",
    "as_scaled_int64",
    "base_units_to_string",
    "dec_scaled_value",
    "format_quantity",
    "from_base_units",
    "given_text",
    "milli_value",
    "negative_scale_int64",
    "parse_quantity",
    "positive_scale_int64",
    "to_base_units",
    "value",
    "wrap_int64",
    "wrap_int64_values",
]

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

# Upstream error texts (ErrFormatWrong, ErrNumeric, ErrSuffix), word for word.
ERR_FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

# Engineering limits (see the module docstring); far beyond any real quantity.
MAX_SIGNIFICANT_DIGITS = 1000
MAX_DECIMAL_MAGNITUDE = 1000

_NANO = 10**9
_MAX_INT64 = 2**63 - 1
_MAX_INT32 = 2**31 - 1
# Largest value a BinarySI quantity may parse to, in nano-units.
_BINARY_CAP_NANO = _MAX_INT64 * _NANO
# Digits an int64 is trusted to hold in the parser's fast path (maxInt64Factors).
_MAX_INT64_FACTORS = 18

# Same language as the upstream hand-written scanner (parseQuantityString): optional sign,
# digits, optional "." and digits, a run of suffix letters, then an optional signed integer.
_SCAN = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_EXPONENT = re.compile(r"[+-]?[0-9]+")

# suffix -> (base, exponent, format), as quantitySuffixer.interpret's lookup tables: the
# decimal suffixes are powers of ten, the binary ones powers of two.
_DECIMAL_EXPONENTS = {
    "": 0,
    "n": -9,
    "u": -6,
    "m": -3,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_EXPONENTS = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIXES: dict[str, tuple[int, int, str]] = {
    **{s: (10, e, DECIMAL_SI) for s, e in _DECIMAL_EXPONENTS.items()},
    **{s: (2, e, BINARY_SI) for s, e in _BINARY_EXPONENTS.items()},
}
_DECIMAL_SUFFIX_BY_EXPONENT = {e: s for s, (b, e, _) in _SUFFIXES.items() if b == 10}
_BINARY_SUFFIX_BY_POWER = {e // 10: s for s, (b, e, _) in _SUFFIXES.items() if b == 2}


class QuantityError(ValueError):
    """A string ParseQuantity rejects; ``str(err)`` is the upstream error text."""


def _as_fraction(value: object) -> Fraction:
    """Exact Fraction for a Fraction/int/Decimal; floats and bools are refused (inexact)."""
    if type(value) is Fraction:
        return value
    if isinstance(value, bool) or not isinstance(value, int | Fraction | Decimal):
        raise TypeError(f"quantity value must be an exact number, not {type(value).__name__}")
    return Fraction(value)


@dataclass(frozen=True, slots=True, eq=False)
class Quantity:
    """An exact quantity and its remembered format (resource.Quantity).

    ``value`` is exact (after parse-time rounding). Equality and hashing use the numeric
    value only, like Quantity.Equal/Cmp: ``parse_quantity("1Gi") == parse_quantity("1024Mi")``.
    ``_text`` is what String() returns when already known: the input string when the
    parser's fast path judged it canonical, else the canonical form once computed.
    """

    value: Fraction
    format: str
    _text: str | None = field(default=None, repr=False)
    # (is_dec, scale): int64Amount{value / 10**scale, scale} when is_dec is False, else
    # inf.Dec{value * 10**scale, scale}. None: as ParseQuantity reads the canonical string
    # (what the API server serves), derived on first use.
    _rep: tuple[bool, int] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if type(self.value) is not Fraction:
            object.__setattr__(self, "value", _as_fraction(self.value))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self.value == other.value
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.value)

    def __gt__(self, other: Quantity) -> bool:
        """Quantity.Cmp(other) > 0 (maxResourceList keeps the larger, the first on a tie)."""
        return self.value > other.value

    def milli_value(self) -> int:
        """The int64 of q * 1000: mirrors Quantity.MilliValue (the kubelet/scheduler cpu unit)."""
        return self.scaled_value(-3)

    def int_value(self) -> int:
        """The int64 of q: mirrors Quantity.Value (bytes/counts for every non-cpu resource)."""
        return self.scaled_value(0)

    @property
    def rep(self) -> tuple[bool, int]:
        """(is_dec, scale) of upstream's representation (see the field's comment)."""
        rep = self._rep
        if rep is None:
            rep = _parse_cached(format_quantity(self.value, self.format)).rep
            object.__setattr__(self, "_rep", rep)
        return rep

    def scaled_value(self, scale: int) -> int:
        """q / 10**scale as Go's int64: mirrors Quantity.ScaledValue (v1.35).

        An int64Amount goes through AsScaledInt64 (its ok ignored), an inf.Dec through
        math.go scaledValue; neither saturates ("1E18" cpu is 0 millicores).
        """
        is_dec, own = self.rep
        if not is_dec:
            return as_scaled_int64(_at_scale(self.value, own), own, scale)[0]
        return dec_scaled_value(_at_scale(self.value, -own), own, -scale)

    def sign(self) -> int:
        """-1, 0 or 1: mirrors Quantity.Sign."""
        return (self.value > 0) - (self.value < 0)

    def is_zero(self) -> bool:
        """Mirrors Quantity.IsZero (format is irrelevant)."""
        return self.value == 0

    def cmp(self, other: Quantity | int | Fraction) -> int:
        """-1/0/1 on exact values, format ignored: mirrors Quantity.Cmp."""
        a = self.value
        b = other.value if isinstance(other, Quantity) else _as_fraction(other)
        return (a > b) - (a < b)

    def __add__(self, other: Quantity) -> Quantity:
        """Exact sum: mirrors Quantity.Add (receiver's format, argument's if receiver is 0).

        Sums are never rounded or capped; only parsing does that. The representation
        follows Add: two int64Amounts stay one when int64Amount.Add succeeds, else (or
        when either is an inf.Dec) the sum is an inf.Dec at the larger Dec scale.
        """
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other.format if self.value == 0 else self.format
        return Quantity(self.value + other.value, fmt, None, _sum_rep(self, other, 1))

    def __sub__(self, other: Quantity) -> Quantity:
        """Exact difference: mirrors Quantity.Sub (same format and representation rules)."""
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other.format if self.value == 0 else self.format
        return Quantity(self.value - other.value, fmt, None, _sum_rep(self, other, -1))

    def __neg__(self) -> Quantity:
        """Mirrors Quantity.Neg: same format and representation, negated value."""
        return Quantity(-self.value, self.format, None, self._rep)

    def __str__(self) -> str:
        """Mirrors Quantity.String: the cached parse input if any, else the canonical form."""
        text = self._text
        if text is None:
            text = format_quantity(self.value, self.format)
            object.__setattr__(self, "_text", text)
        return text


def _interpret_suffix(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) for a suffix: mirrors quantitySuffixer.interpret.

    Case matters ("K", "mi" are errors). "e<int>"/"E<int>" is DecimalExponent with the
    exponent limited to [-MaxInt32, MaxInt32] (newer upstream; it used to wrap around).
    """
    known = _SUFFIXES.get(suffix)
    if known is not None:
        return known
    if len(suffix) > 1 and suffix[0] in "eE" and _EXPONENT.fullmatch(suffix, 1):
        exponent = int(suffix[1:])
        if -_MAX_INT32 <= exponent <= _MAX_INT32:
            return 10, exponent, DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


def _magnitude_nanos(digits: str, base: int, exponent: int, denom_len: int) -> int:
    """|value| in nano-units, rounded up: the exact part of resource.ParseQuantity.

    ``digits`` are all the digits of the number (integer then fraction part), so
    |value| = int(digits) * base**exponent / 10**denom_len. Values under 1n become 1n
    without building huge powers of ten (newer upstream's sub-nano shortcut).
    """
    significant = digits.lstrip("0")
    if not significant:
        return 0
    stripped = significant.rstrip("0")
    # |value| = int(stripped) * 10**power10 * base**exponent, int(stripped) has k digits
    power10 = (len(significant) - len(stripped)) - denom_len
    k = len(stripped)
    if base == 10:
        power10 += exponent
        order = k + power10  # |value| < 10**order
        two_power = 0
    else:
        order = k + power10 + 19  # 2**60 < 10**19
        two_power = exponent
        if k + power10 - 1 >= 19:  # >= 10**18 * 1024 > 2**63 - 1: capped anyway
            return _BINARY_CAP_NANO + 1
    if order <= -9:
        return 1
    if k > MAX_SIGNIFICANT_DIGITS or (base == 10 and order > MAX_DECIMAL_MAGNITUDE):
        raise QuantityError(ERR_NUMERIC)
    mantissa = int(stripped) << two_power
    shift = power10 + 9
    if shift >= 0:
        return mantissa * 10**shift
    return -(-mantissa // 10**-shift)


def _parse(text: str) -> Quantity:
    """Mirrors resource.ParseQuantity, k8s 1.3x (value, format, and the string it caches)."""
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(Fraction(0), DECIMAL_SI, "0", (False, 0))
    match = _SCAN.fullmatch(text)
    if match is None:
        raise QuantityError(ERR_FORMAT_WRONG)
    sign, num_raw, denom, suffix = match.groups()
    denom = denom or ""
    base, exponent, fmt = _interpret_suffix(suffix)

    # Upstream has an int64 fast path and a big-decimal slow path. Both are exact, but only
    # the fast path may keep the input as the String() form, and only the slow path fails
    # on a number with no digits at all ("Pi", ".e-10").
    num = num_raw.lstrip("0") or "0"
    shifted = num + denom
    cached: str | None = None
    # The fast path keeps an int64Amount{digits, scale}; the slow one an inf.Dec rounded up
    # to nano (scale 9), or maxAllowed (scale 0) for a capped BinarySI amount.
    if base == 10:
        scale = exponent - len(denom)
        fast = len(shifted) <= _MAX_INT64_FACTORS and scale >= -9
        if fast and scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
            cached = text
    else:
        scale = 0
        fast = not denom and 15 - len(num) - exponent * 3 // 10 - 1 >= 0
        if fast and int(num) & 7:
            cached = text
    if not fast and not num_raw and not denom:
        raise QuantityError(ERR_NUMERIC)

    nanos = _magnitude_nanos(num_raw + denom, base, exponent, len(denom))
    if fast:
        rep = (False, scale)
    elif nanos == 0:  # inf.Dec.SetString's scale, moved by the suffix; never rounded
        rep = (True, len(denom) - exponent if base == 10 else len(denom))
    else:
        rep = (True, 9)
    if fmt == BINARY_SI:
        if nanos > _BINARY_CAP_NANO:
            nanos = _BINARY_CAP_NANO
            rep = (True, 0)  # maxAllowed = inf.NewDec(MaxInt64, 0)
        elif 0 < nanos < _NANO:
            fmt = DECIMAL_SI
    if sign == "-":
        nanos = -nanos
    return Quantity(Fraction(nanos, _NANO), fmt, cached, rep)


@functools.lru_cache(maxsize=1 << 16, typed=True)
def _parse_cached(text: str | int | float) -> Quantity:
    """Type dispatch for parse_quantity, memoised; ``typed=True`` keeps 1, 1.0 and True apart."""
    if isinstance(text, str):
        return _parse(text)
    if isinstance(text, bool):
        raise QuantityError(ERR_FORMAT_WRONG)
    if isinstance(text, int):
        try:
            digits = str(text)
        except ValueError as exc:  # more digits than int->str conversion allows
            raise QuantityError(ERR_NUMERIC) from exc
        return _parse(digits)
    if isinstance(text, float):
        if not math.isfinite(text):
            raise QuantityError(ERR_FORMAT_WRONG)
        return _parse(repr(text))
    raise QuantityError(ERR_FORMAT_WRONG)


def parse_quantity(text: str | int | float) -> Quantity:
    """Parse a quantity string (or a JSON number): mirrors resource.ParseQuantity, k8s 1.3x.

    Memoised (LRU, 65536 entries) because the same strings recur across hundreds of
    thousands of containers. An int is parsed as its decimal string, a float as ``repr()``
    (JSON decoding has already lost the original spelling). Any other type, bools included,
    is a QuantityError, never a TypeError. Unlike the API server's UnmarshalJSON,
    surrounding whitespace is an error here, exactly as in ParseQuantity.
    """
    try:
        return _parse_cached(text)
    except TypeError:  # unhashable input (list, dict): not a quantity
        raise QuantityError(ERR_FORMAT_WRONG) from None


parse_quantity.cache_info = _parse_cached.cache_info  # type: ignore[attr-defined]
parse_quantity.cache_clear = _parse_cached.cache_clear  # type: ignore[attr-defined]


def _decimal_parts(value: Fraction) -> tuple[int, int]:
    """(m, e) with value == m * 10**e, m free of trailing zeros (removeBigIntFactors).

    Only terminating decimals are representable (upstream holds an inf.Dec); value != 0.
    """
    den = value.denominator
    twos = (den & -den).bit_length() - 1
    rest = den >> twos
    fives = 0
    while rest % 5 == 0:
        rest //= 5
        fives += 1
    if rest != 1:
        raise ValueError(f"{value} is not a terminating decimal; a Quantity cannot hold it")
    places = max(twos, fives)
    mantissa = value.numerator * (10**places // den)
    exponent = -places
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    return mantissa, exponent


def _canonical_decimal(value: Fraction, fmt: str) -> str:
    """Base-10 canonical form: mirrors AsCanonicalBytes + constructBytes(10, e, fmt).

    The exponent is lowered to a multiple of 3. DecimalSI without a suffix for it (beyond
    "E" or below "n") falls back to exponent notation, as upstream since #140459; older
    releases silently dropped the suffix ("1000E" printed as "1").
    """
    mantissa, exponent = _decimal_parts(value)
    drop = exponent % 3
    mantissa *= 10**drop
    exponent -= drop
    if fmt == DECIMAL_SI:
        suffix = _DECIMAL_SUFFIX_BY_EXPONENT.get(exponent)
        if suffix is not None:
            return f"{mantissa}{suffix}"
    if exponent == 0:
        return str(mantissa)
    return f"{mantissa}e{exponent}"


def format_quantity(value: Fraction | int, fmt: str) -> str:
    """Canonical string of an exact value in a format: mirrors Quantity.CanonicalizeBytes.

    Zero is "0". BinarySI prints as DecimalSI when |value| < 1024 or value is not whole;
    otherwise factors of 1024 become Ki..Ei ("1536Mi", "1025"), and beyond Ei it falls back
    to exact base-10 exponent form (#140459). An unknown format prints as DecimalExponent.
    """
    value = _as_fraction(value)
    if value == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 < value < 1024 or value.denominator != 1:
            return _canonical_decimal(value, DECIMAL_SI)
        mantissa = value.numerator
        power = 0
        while mantissa % 1024 == 0:
            mantissa //= 1024
            power += 1
        if power == 0:
            return str(mantissa)
        suffix = _BINARY_SUFFIX_BY_POWER.get(power)
        if suffix is None:
            return _canonical_decimal(value, DECIMAL_EXPONENT)
        return f"{mantissa}{suffix}"
    if fmt != DECIMAL_SI:
        fmt = DECIMAL_EXPONENT
    return _canonical_decimal(value, fmt)


MIN_INT64 = -(2**63)
MAX_INT64 = 2**63 - 1


def wrap_int64(value: int) -> int:
    """``value`` as Go's int64 arithmetic leaves it: two's complement, wrapping around past
    either bound (NodeInfo.Requested adds pods' int64 requests with ``+=``, unchecked)."""
    if MIN_INT64 <= value <= MAX_INT64:
        return value
    return ((value - MIN_INT64) & 0xFFFFFFFFFFFFFFFF) + MIN_INT64


def wrap_int64_values(sums: dict[str, int]) -> dict[str, int]:
    """``sums`` with every value wrapped to int64 (in place; returned for chaining)."""
    for name, value in sums.items():
        if not MIN_INT64 <= value <= MAX_INT64:
            sums[name] = wrap_int64(value)
    return sums


def _go_quo(a: int, b: int) -> int:
    """Go's integer division (truncated toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def int64_add(a: int, b: int) -> tuple[int, bool]:
    """a + b, ok=False when it leaves int64: mirrors math.go int64Add."""
    c = a + b
    return (c, True) if MIN_INT64 <= c <= MAX_INT64 else (0, False)


def int64_multiply_scale(a: int, b: int) -> tuple[int, bool]:
    """a * b for b > 1: mirrors math.go int64MultiplyScale (and int64MultiplyScale10/100/1000,
    the same rule): on overflow, the wrapped product with ok=False; MinInt64 gives 0."""
    if a in (0, 1):
        return a * b, True
    if a == MIN_INT64:
        return 0, False
    c = wrap_int64(a * b)
    return c, _go_quo(c, b) == a


def positive_scale_int64(base: int, scale: int) -> tuple[int, bool]:
    """base * 10**scale in int64: mirrors amount.go positiveScaleInt64 (v1.35). Scales 1, 2,
    3, 6 and 9 multiply once (wrapped on overflow); any other multiplies by 10 in a loop
    and gives 0 on overflow. Not saturated (later upstream saturates)."""
    if scale == 0:
        return base, True
    if scale in (1, 2, 3, 6, 9):
        return int64_multiply_scale(base, 10**scale)
    value = base
    for _ in range(scale):
        value, ok = int64_multiply_scale(value, 10)
        if not ok:
            return 0, False
    return value, True


def negative_scale_int64(base: int, scale: int) -> tuple[int, bool]:
    """base / 10**scale, rounded away from zero: mirrors amount.go negativeScaleInt64."""
    if scale == 0:
        return base, True
    value = base
    fraction = False
    for _ in range(scale):
        if not fraction and value % 10 != 0:
            fraction = True
        value = _go_quo(value, 10)
        if value == 0:
            if fraction:
                return (1 if base > 0 else -1), False
            return 0, True
    if fraction:
        value += 1 if base > 0 else -1
    return value, not fraction


def as_scaled_int64(value: int, own_scale: int, scale: int) -> tuple[int, bool]:
    """int64Amount{value, own_scale} at ``scale``: mirrors amount.go
    int64Amount.AsScaledInt64 (a scale-down is always ok; ScaledValue ignores ok)."""
    if own_scale < scale:
        return negative_scale_int64(value, scale - own_scale)[0], True
    return positive_scale_int64(value, own_scale - scale)


def _go_int64_of_pow10(k: int) -> int:
    """int64(math.Pow10(k)) on amd64: exact up to 10**18, else out of range: MinInt64."""
    return 10**k if k <= 18 else MIN_INT64


def dec_scaled_value(unscaled: int, scale: int, new_scale: int) -> int:
    """inf.Dec{unscaled, scale} at ``new_scale`` as int64: mirrors math.go scaledValue
    (v1.35). Same scale: big.Int.Int64 (the low 64 bits). Scale-up: Int64() times
    int64(math.Pow10(k)), wrapping. Scale-down: divide, +1 on any remainder (truncating
    int64 division below MaxInt64 and 10**19, else big.Int's Euclidean DivMod), low 64 bits.
    """
    dif = scale - new_scale
    if dif == 0:
        return wrap_int64(unscaled)
    if dif < 0:
        return wrap_int64(wrap_int64(unscaled) * _go_int64_of_pow10(-dif))
    if unscaled < MAX_INT64 and dif < 19:
        low = wrap_int64(unscaled)
        divisor = 10**dif
        result = _go_quo(low, divisor)
        return result + 1 if low - result * divisor != 0 else result
    result, remainder = divmod(unscaled, 10**dif)
    return wrap_int64(result + 1 if remainder else result)


def _at_scale(v: Fraction, scale: int) -> int:
    """v / 10**scale, which is whole (v is a multiple of 10**scale)."""
    if scale < 0:
        return v.numerator * 10**-scale // v.denominator
    return v.numerator // (v.denominator * 10**scale)


def _sum_rep(x: Quantity, y: Quantity, sign: int) -> tuple[bool, int]:
    """Representation of Quantity.Add (sign 1) / Sub (sign -1): int64Amount.Add when both
    are int64Amounts and it succeeds, else inf.Dec.Add at the larger of the Dec scales
    (an int64Amount{v, s} converts to the Dec{v, -s}: int64Amount.AsDec).

    int64Amount.Add keeps the receiver when the argument is 0, takes the argument when the
    receiver is 0, else brings the larger scale down to the smaller (positiveScaleInt64)
    and adds (int64Add); it fails when either step leaves int64."""
    x_dec, xs = x.rep
    y_dec, ys = y.rep
    if not x_dec and not y_dec:
        if not y.value:
            return False, xs
        if not x.value:
            return False, ys
        low = xs if xs < ys else ys
        a = _at_scale(x.value, low)
        b = _at_scale(y.value, low)
        total = a + b if sign > 0 else a - b
        if (
            MIN_INT64 <= a <= MAX_INT64
            and MIN_INT64 <= b <= MAX_INT64
            and MIN_INT64 <= total <= MAX_INT64
        ):
            return False, low
    return True, max(xs if x_dec else -xs, ys if y_dec else -ys)


def milli_value(q: Quantity) -> int:
    """Mirrors Quantity.MilliValue: ScaledValue(Milli)."""
    return q.scaled_value(-3)


def value(q: Quantity) -> int:
    """Mirrors Quantity.Value: ScaledValue(0)."""
    return q.scaled_value(0)


def to_base_units(resource_name: str, q: Quantity) -> int:
    """The kubelet/scheduler int64 of a quantity: MilliValue for "cpu", Value otherwise
    (Go's int64, never saturated: "1E18" cpu is 0)."""
    if resource_name == "cpu":
        return q.milli_value()
    return q.int_value()


@functools.lru_cache(maxsize=1 << 16)
def from_base_units(resource_name: str, amount: int, fmt: str) -> Quantity:
    """The quantity an integer of ``to_base_units`` stands for, in ``fmt``, with no cached
    string (String() is then the canonical form). Memoised: the same amounts recur across
    pods, and each one's representation (``Quantity.rep``) is then derived once."""
    value = Fraction(amount, 1000) if resource_name == "cpu" else Fraction(amount)
    return Quantity(value, fmt)


def given_text(resource_name: str, q: Quantity, amount: int, fmt: str) -> str | None:
    """The quantity as the API server serves it, ``String()`` (the input when the parser
    kept it), when ``from_base_units(amount, fmt)`` would not be the same quantity to String() and
    Add: another value (sub-milli cpu, a fraction of a byte, past int64), another format, or
    a String() that is not the canonical form (the parser's cached input, "1E18"); None when
    the integer rebuilds it.

    The scheduler and the kubelet never read a quantity as written: the API server stores
    String() and they parse that. So ``1.5e20`` (int64Amount{15, 19}) is kept as ``150e18``
    ({150, 18}), whose sums overflow as the scheduler's do."""
    rebuilt = from_base_units(resource_name, amount, fmt)
    if q.value != rebuilt.value or q.format != fmt or str(q) != str(rebuilt):
        return str(q)
    return None


def base_units_to_string(resource_name: str, amount: int, fmt: str) -> str:
    """Inverse of to_base_units for printing: cpu amounts are millicores, others whole units."""
    value = Fraction(amount, 1000) if resource_name == "cpu" else Fraction(amount)
    return format_quantity(value, fmt)
