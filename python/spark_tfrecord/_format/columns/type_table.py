"""How each Spark type a feature value can take is written: the jar's ``codec/TypeTable``."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, NamedTuple, Union

import numpy as np
import numpy.typing as npt

from spark_tfrecord._format.columns import arrow
from spark_tfrecord._format.columns.conversions import DECIMAL, TIME
from spark_tfrecord._format.columns.schema import SIMPLE_NAMES, is_vector
from spark_tfrecord._format.columns.schema import type_name as name
from spark_tfrecord._format.entries.wire import BYTES, FLOAT, INT64
from spark_tfrecord._format.frames.packing import Bytes, Ints

Int64s = npt.NDArray[np.int64]
Float32s = npt.NDArray[np.float32]
#: What an entry reads from an Arrow array: int64s, float32s, or bytes with n+1 offsets.
Values = Union[Int64s, Float32s, tuple[Bytes, Ints]]


#: The largest Java int: a vector's largest size.
INT_MAX = 2**31 - 1


class Entry(NamedTuple):
    """One type of the table: Spark's name, the kind it is written as, and its reader."""

    name: str
    kind: int
    read: Callable[[Any], Values]
    doc: str


def simple_string(t: Any) -> str:
    """Spark's ``simpleString`` of the type, as the jar's messages spell it."""
    if isinstance(t, str):
        return SIMPLE_NAMES.get(t, t).replace(", ", ",")
    n = name(t)
    if n == "array":
        return f"array<{simple_string(t['elementType'])}>"
    if n == "map":
        return f"map<{simple_string(t['keyType'])},{simple_string(t['valueType'])}>"
    if n == "struct":
        fields = ",".join(f"{f['name']}:{simple_string(f['type'])}" for f in t["fields"])
        return f"struct<{fields}>"
    if is_vector(t):
        return "vector"
    if n == "udt":
        return simple_string(t["sqlType"]) if "sqlType" in t else str(t.get("class"))
    return n


def entry(t: Any) -> Entry | None:
    """The entry of a type a feature value can take; None for every other type."""
    if not isinstance(t, str):
        return None
    if t in _ENTRIES:
        return _ENTRIES[t]
    if t.startswith("string collate "):  # a collation orders values; their bytes are UTF-8
        return _ENTRIES["string"]
    if TIME.fullmatch(t):
        return Entry(t, INT64, arrow.nanos_of_day, f"{t} (nanoseconds since midnight)")
    m = DECIMAL.fullmatch(t)
    if m is None:
        return None
    precision, scale = int(m.group(1)), int(m.group(2))
    return Entry(f"decimal({precision},{scale})", FLOAT, lambda a: _decimals(a, scale), "decimal")


def describe_supported() -> str:
    """The types of each kind, as the jar's supported-types message lists them."""

    def of(kind: int) -> list[str]:
        return [e.doc for e in _LISTED if e.kind == kind]

    return (
        f"{', '.join(of(INT64))} (int64_list); "
        f"{', '.join([*of(FLOAT), 'ML vectors'])} (float_list); "
        f"{', '.join(of(BYTES))} (bytes_list)"
    )


# --- readers ---------------------------------------------------------------------------------

_INTEGERS = {
    "int8": "<i1",
    "int16": "<i2",
    "int32": "<i4",
    "int64": "<i8",
    "uint8": "<u1",
    "uint16": "<u2",
    "uint32": "<u4",
    "uint64": "<u8",
}


def _integers(a: Any) -> Int64s:
    return arrow.fixed(a, _INTEGERS[arrow.type_name(a)]).astype(np.int64, copy=False)


def _floats(a: Any) -> Float32s:
    t = arrow.type_name(a)
    if t == "float":
        return arrow.fixed(a, "<f4")
    with np.errstate(over="ignore", invalid="ignore"):
        return arrow.fixed(a, "<f8" if t == "double" else "<f2").astype(np.float32)


def _decimals(a: Any, scale: int) -> Float32s:
    """Each decimal as the nearest float (ties to even), as the JVM's ``BigDecimal.floatValue``."""
    words = arrow.decimal_words(a)
    low, high = words[:, 0], words[:, 1]
    out = np.empty(len(low), np.float32)
    small = (high == (low >> 63)) & (np.abs(low) < (1 << 24)) & (0 <= scale <= 10)
    if small.all():
        # Both operands exact in float32: the quotient is correctly rounded.
        return (low.astype(np.float32) / np.float32(10**scale)).astype(np.float32)
    for i, (lo, hi) in enumerate(zip(low.tolist(), high.tolist())):
        out[i] = _nearest_float32((hi << 64) | (lo & 0xFFFFFFFFFFFFFFFF), scale)
    return out


def _nearest_float32(unscaled: int, scale: int) -> np.float32:
    """unscaled * 10^-scale rounded once to float32 (a double rounded again can miss by one)."""
    exact = Fraction(unscaled, 10**scale) if scale >= 0 else Fraction(unscaled * 10**-scale)
    d = float(exact)
    with np.errstate(over="ignore"):
        f = np.float32(d)
    if np.isinf(f) or float(f) == d:
        return f
    other = np.nextafter(f, np.float32(np.inf if d > float(f) else -np.inf))
    mid = (float(f) + float(other)) / 2
    if mid != d or exact == Fraction(mid):
        return f
    up = exact > Fraction(mid)
    return max(f, other) if up else min(f, other)


_LISTED = (
    Entry("boolean", INT64, arrow.booleans, "boolean"),
    Entry("tinyint", INT64, _integers, "tinyint"),
    Entry("smallint", INT64, _integers, "smallint"),
    Entry("int", INT64, _integers, "int"),
    Entry("bigint", INT64, _integers, "bigint"),
    Entry("date", INT64, arrow.days, "date (days since 1970-01-01)"),
    Entry("timestamp", INT64, arrow.micros, "timestamp"),
    Entry("timestamp_ntz", INT64, arrow.micros, "timestamp_ntz (microseconds since 1970-01-01)"),
    Entry("float", FLOAT, _floats, "float"),
    Entry("double", FLOAT, _floats, "double"),
    Entry("decimal(10,0)", FLOAT, lambda a: _decimals(a, 0), "decimal"),
    Entry("string", BYTES, arrow.binary, "string"),
    Entry("binary", BYTES, arrow.binary, "binary"),
)
_JSON_NAMES = (
    "boolean",
    "byte",
    "short",
    "integer",
    "long",
    "date",
    "timestamp",
    "timestamp_ntz",
    "float",
    "double",
)
_ENTRIES = {**dict(zip(_JSON_NAMES, _LISTED)), "string": _LISTED[11], "binary": _LISTED[12]}
#: The element types a per-element list (``tfrecord.listLength``) can hold: fixed-size ones.
FIXED_SIZE = frozenset(_JSON_NAMES)
