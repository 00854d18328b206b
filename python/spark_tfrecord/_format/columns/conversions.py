"""How features' values become a column's (in the loaders' dtypes), as the jar's TypeTable reads."""

from __future__ import annotations

import codecs
import decimal
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from spark_tfrecord._format.entries.wire import BYTES, FLOAT, INT64


class OutOfRange(Exception):
    """A value the column's type cannot hold; the jar's message (``cannot hold the value 300``)."""


Convert = Callable[[Any], Any]

#: Spark 4.1's ``TIME(p)``: nanoseconds since midnight, below this.
NANOS_PER_DAY = 86_400 * 10**9
#: A ``time(p)`` type name.
TIME = re.compile(r"time\(\d\)")
_ONE = decimal.Decimal(1)
#: A ``decimal(p,s)`` type name: its precision and scale.
DECIMAL = re.compile(r"decimal\((\d+),\s*(-?\d+)\)")


class Conversion:
    """Per kind k: ``by_kind[k]`` converts its values (None: not read); ``exact[k]``: a no-op."""

    __slots__ = ("by_kind", "exact", "name", "value")

    def __init__(self, name: str, value: str, by_kind: dict[int, Convert | None]) -> None:
        self.name = name
        self.value = value
        self.by_kind = {k: by_kind.get(k) for k in (BYTES, FLOAT, INT64)}
        self.exact = {k: f is _same for k, f in self.by_kind.items()}

    def accepts(self, kind: int) -> bool:
        """Whether the type reads a feature of ``kind``."""
        return self.by_kind.get(kind) is not None


def _same(values: Any) -> Any:
    return values


def _ranged(low: int, high: int, note: str = "") -> Convert:
    def check(values: Any) -> Any:
        if len(values) and (int(values.min()) < low or int(values.max()) > high):
            bad = values[(values < low) | (values > high)][0]
            raise OutOfRange(f"cannot hold the value {int(bad)}{note}")
        return values

    return check


#: The int64 readings of integral types: ``_same``, or a check of the type's range.
_INTEGRAL: dict[str, Convert] = {
    "boolean": _ranged(0, 1, " (a boolean is stored as 0 or 1)"),
    "tinyint": _ranged(-(2**7), 2**7 - 1),
    "smallint": _ranged(-(2**15), 2**15 - 1),
    "int": _ranged(-(2**31), 2**31 - 1),
    "date": _ranged(-(2**31), 2**31 - 1),
    "bigint": _same,
    "timestamp": _same,
    "timestamp_ntz": _same,
}
_NANOS_OF_DAY = _ranged(
    0, NANOS_PER_DAY - 1, f" (a time is nanoseconds since midnight, from 0 to {NANOS_PER_DAY})"
)


#: The codec error handler decoding non-UTF-8 bytes as Java does (registered on first use).
JAVA_REPLACE = "spark_tfrecord.java_replace"


def _java_replace(error: UnicodeError) -> tuple[str, int]:
    """U+FFFD per invalid sequence as Java's UTF-8 decoder gives: an encoded surrogate is one."""
    assert isinstance(error, UnicodeDecodeError)
    data, at = error.object, error.start
    if data[at] == 0xED and at + 1 < len(data) and 0xA0 <= data[at + 1] <= 0xBF:
        third = at + 2 < len(data) and 0x80 <= data[at + 2] <= 0xBF
        return "\ufffd", at + (3 if third else 2)
    return "\ufffd", error.end


def _utf8(values: Any) -> Any:
    # pyspark shows non-UTF-8 string bytes as Java decodes them: U+FFFD per invalid sequence.
    try:
        return [v.decode("utf-8") for v in values]  # strict: the fastest call, when it is UTF-8
    except UnicodeDecodeError:
        return [v.decode("utf-8", JAVA_REPLACE) for v in values]


def java_float(x: Any) -> str:
    """A float32 as Java's (JDK 19+) ``Float.toString`` writes it: shortest digits, at least two."""
    v = np.float32(x)
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0.0" if np.signbit(v) else "0.0"
    sign = "-" if v < 0 else ""
    a = abs(v)
    mantissa, exponent = np.format_float_scientific(a, unique=True, trim="-").split("e")
    digits = mantissa.replace(".", "")
    if len(digits) == 1:
        mantissa, exponent = np.format_float_scientific(a, precision=1, unique=False).split("e")
        digits = mantissa.replace(".", "").rstrip("0") or "0"
    e = int(exponent)
    if -3 <= e < 7:
        if e >= 0:
            whole, fraction = digits[: e + 1].ljust(e + 1, "0"), digits[e + 1 :] or "0"
        else:
            whole, fraction = "0", "0" * (-e - 1) + digits
        return f"{sign}{whole}.{fraction}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{e}"


def _decimal(precision: int, scale: int) -> tuple[Convert, Convert]:
    """A decimal(p,s)'s readings of int64 and float values: Spark's decimal, half-up, as float32."""
    quantum = decimal.Decimal(1).scaleb(-scale)
    context = decimal.Context(prec=1000, rounding=decimal.ROUND_HALF_UP)
    limit = decimal.Decimal(10) ** (precision - scale)

    def put(value: decimal.Decimal, shown: Any) -> float:
        rounded = value.quantize(quantum, context=context)
        if abs(rounded) >= limit:
            raise OutOfRange(f"cannot hold the value {shown}")
        return float(rounded) + 0.0  # a decimal has no -0

    def from_int64(values: Any) -> Any:
        out = np.empty(len(values), np.float32)
        for j, v in enumerate(values.tolist()):
            put(decimal.Decimal(v), v)
            out[j] = np.float32(v)
        return out

    def from_float(values: Any) -> Any:
        out = np.empty(len(values), np.float32)
        for j, v in enumerate(values):
            if not np.isfinite(v):
                raise OutOfRange(f"cannot hold the value {java_float(v)}")
            exact = decimal.Decimal(java_float(v))
            # Spark's Decimal of a negative scale (1.0E+10) has scale 0: its text is plain.
            negative_scale = int(exact.as_tuple().exponent) > 0  # finite: an int
            shown = exact.quantize(_ONE, context=context) if negative_scale else exact
            out[j] = np.float32(put(exact, shown))
        return out

    return from_int64, from_float


def stored(name: str) -> Conversion:
    """A numeric column's values as stored (int64s, float32s), for a reader that converts them."""
    return Conversion(name, "float", {FLOAT: _same, INT64: _same})


def conversion(name: str, *, vector: bool = False) -> Conversion:
    """The conversion of Spark type ``name`` (simpleString), or of a vector's; else KeyError."""
    if vector or name == "double":  # Spark's double, given as float32
        return Conversion(
            name, "float", {FLOAT: _same, INT64: lambda v: v.astype(np.float64).astype(np.float32)}
        )
    if name == "float":  # round to nearest, as Java's long-to-float
        return Conversion(name, "float", {FLOAT: _same, INT64: lambda v: v.astype(np.float32)})
    if name in _INTEGRAL:
        return Conversion(name, "int", {INT64: _INTEGRAL[name]})
    if TIME.fullmatch(name):
        return Conversion(name, "int", {INT64: _NANOS_OF_DAY})
    if name == "string" or name.startswith("string collate "):  # a collation only orders
        codecs.register_error(JAVA_REPLACE, _java_replace)
        text: dict[int, Convert | None] = {
            BYTES: _utf8,
            INT64: lambda v: [str(int(x)) for x in v],
            FLOAT: lambda v: [java_float(x) for x in v],
        }
        return Conversion(name, "str", text)
    if name == "binary":
        return Conversion(name, "bytes", {BYTES: _same})
    found = DECIMAL.fullmatch(name)
    if found:
        from_int64, from_float = _decimal(int(found.group(1)), int(found.group(2)))
        return Conversion(name, "float", {INT64: from_int64, FLOAT: from_float})
    raise KeyError(name)
