"""The JSON values of ``inspect``'s rows, as ``json.loads`` reads the jar's text: one stored value
read into a column of a type (:func:`json_atom`: numbers as numbers, a float32 by its shortest
decimal as Java's ``Float.toString`` writes it, a decimal by its plain text, NaN and infinities
as strings, bytes as text when they are valid UTF-8, else ``0x`` and their hex, dates as
``YYYY-MM-DD``, timestamps as Java's ``Instant.toString``), and the flat values of a feature's
lists. Also the shape of the features a column's reader reads (:data:`Features`, :data:`Lists`,
:data:`Reader`).
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from spark_tfrecord._format.columns.conversions import java_float
from spark_tfrecord._format.columns.json_errors import Mismatch, Unsupported
from spark_tfrecord._format.entries.wire import BYTES, FLOAT, INT64

#: A decoded record: per feature name, its kind and values; per feature list name, its steps.
Features = Mapping[str, tuple[int, list[Any]]]
Lists = Mapping[str, list[tuple[int, list[Any]]]]
#: Reads one column's JSON value from a record's features; raises Mismatch.
Reader = Callable[[Features, Lists], Any]

_INT_RANGES = {"long": 64, "integer": 32, "short": 16, "byte": 8}
_EPOCH = datetime.datetime(1970, 1, 1)


def java_double(v: float) -> str:
    """A double as Java's ``Double.toString`` writes it."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return _java_decimal(repr(v), abs(v))


def _java_decimal(text: str, magnitude: float) -> str:
    """Python's shortest repr in Java's notation: plain from 1e-3 up to 1e7, else d.dddEn."""
    d = decimal.Decimal(text)
    if magnitude == 0 or 1e-3 <= magnitude < 1e7:
        plain = format(d, "f")
        if "." not in plain:
            plain += ".0"
        return plain
    sign, digits, exponent = d.as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    exp = exponent + len(digits) - 1  # type: ignore[operator]
    mantissa = ds[0] + "." + (ds[1:] or "0")
    return ("-" if sign else "") + f"{mantissa}E{exp}"


def json_number(text: str) -> Any:
    """What ``json.loads`` makes of a number the jar writes (strings for NaN and infinities)."""
    if text in ("NaN", "Infinity", "-Infinity"):
        return text
    return float(text)


def json_bytes(b: bytes) -> str:
    """Bytes as the jar shows them: their text when valid UTF-8, else ``0x`` and their hex."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + b.hex()


def _instant(micros: int) -> str:
    """Java's ``Instant.toString`` of ``micros`` since 1970-01-01 (ISO_INSTANT: seconds always,
    the fraction in groups of three digits as needed)."""
    seconds, us = divmod(micros, 1_000_000)
    t = _EPOCH + datetime.timedelta(seconds=seconds)
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    if us:
        fraction = f"{us:06d}"
        text += "." + (fraction[:3] if fraction.endswith("000") else fraction)
    return text + "Z"


def _kind_mismatch(column: str, type_name: str, k: int) -> Mismatch:
    kinds = {BYTES: "bytes_list", FLOAT: "float_list", INT64: "int64_list"}
    return Mismatch(column, f"a {kinds.get(k, 'feature')} cannot be read as {type_name}")


def json_atom(type_name: str, column: str) -> Callable[[int, Any], Any]:
    """The JSON value of one value of kind ``k`` read into a column of type ``type_name``."""
    made = (
        _int64_atom(type_name, column)
        or _number_atom(type_name, column)
        or _bytes_atom(type_name, column)
    )
    if made is None:
        raise Unsupported(f"column {column!r} of type {type_name}")
    return made


def _int64_atom(type_name: str, column: str) -> Callable[[int, Any], Any] | None:
    """:func:`json_atom` for the types stored as int64 only: integers, boolean, date, timestamps."""
    if type_name in _INT_RANGES:
        bits = _INT_RANGES[type_name]

        def integer(k: int, v: Any) -> Any:
            if k != INT64:
                raise _kind_mismatch(column, type_name, k)
            v = int(v)
            if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
                raise Mismatch(column, f"cannot hold the value {v}")
            return v

        return integer
    if type_name == "boolean":

        def boolean(k: int, v: Any) -> Any:
            if k != INT64:
                raise _kind_mismatch(column, type_name, k)
            if int(v) not in (0, 1):
                raise Mismatch(
                    column, f"cannot hold the value {int(v)} (a boolean is stored as 0 or 1)"
                )
            return int(v) == 1

        return boolean
    if type_name == "date":

        def date(k: int, v: Any) -> Any:
            if k != INT64:
                raise _kind_mismatch(column, type_name, k)
            return (datetime.date(1970, 1, 1) + datetime.timedelta(days=int(v))).isoformat()

        return date
    if type_name in ("timestamp", "timestamp_ntz"):

        def timestamp(k: int, v: Any) -> Any:
            if k != INT64:
                raise _kind_mismatch(column, type_name, k)
            return _instant(int(v))

        return timestamp
    return None


def _number_atom(type_name: str, column: str) -> Callable[[int, Any], Any] | None:
    """:func:`json_atom` for float, double and decimals (from a float or an int64)."""
    if type_name == "float":

        def float32(k: int, v: Any) -> Any:
            if k not in (FLOAT, INT64):
                raise _kind_mismatch(column, type_name, k)
            return json_number(java_float(float(np.float32(v))))

        return float32
    if type_name == "double":

        def float64(k: int, v: Any) -> Any:
            if k not in (FLOAT, INT64):
                raise _kind_mismatch(column, type_name, k)
            return json_number(java_double(float(v)))

        return float64
    if type_name.startswith("decimal("):
        precision, scale = (int(x) for x in type_name[len("decimal(") : -1].split(","))

        def dec(k: int, v: Any) -> Any:
            if k == FLOAT:
                if math.isnan(v) or math.isinf(v):
                    raise Mismatch(column, f"cannot hold the value {java_float(v)}")
                d = decimal.Decimal(java_float(v))
            elif k == INT64:
                d = decimal.Decimal(int(v))
            else:
                raise _kind_mismatch(column, type_name, k)
            d = d.quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP)
            if len(d.as_tuple().digits) > precision and d != 0:
                raise Mismatch(column, f"cannot hold the value {d}")
            return float(format(d, "f"))

        return dec
    return None


def _bytes_atom(type_name: str, column: str) -> Callable[[int, Any], Any] | None:
    """:func:`json_atom` for string (from any kind) and binary."""
    if type_name == "string":

        def string(k: int, v: Any) -> Any:
            if k == BYTES:
                return json_bytes(v)
            if k == INT64:
                return str(int(v))
            if k == FLOAT:
                return java_float(v)
            raise _kind_mismatch(column, type_name, k)

        return string
    if type_name == "binary":

        def binary(k: int, v: Any) -> Any:
            if k != BYTES:
                raise _kind_mismatch(column, type_name, k)
            return json_bytes(v)

        return binary
    return None


def flat_values(lists: list[Any]) -> list[Any]:
    """The values of a feature's lists, in one list."""
    out: list[Any] = []
    for values in lists:
        out.extend(values.tolist() if isinstance(values, np.ndarray) else values)
    return out


def float_values(kind: int, lists: list[Any]) -> list[Any]:
    """Float32 values (kept as float32 for the converters), or ints."""
    if kind == FLOAT:
        out: list[Any] = []
        for values in lists:
            out.extend(np.asarray(values, np.float32))
        return out
    return flat_values(lists)
