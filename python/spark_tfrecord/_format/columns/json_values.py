"""The JSON values of ``inspect``'s rows, as ``json.loads`` reads the jar's text."""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Callable
from typing import Any

from spark_tfrecord._format.columns.conversions import java_float

_EPOCH = datetime.datetime(1970, 1, 1)


def java_double(v: float) -> str:
    """A double as Java's ``Double.toString`` writes it."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    # Python's shortest repr in Java's notation: plain from 1e-3 up to 1e7, else d.dddEn.
    d = decimal.Decimal(repr(v))
    if v == 0 or 1e-3 <= abs(v) < 1e7:
        plain = format(d, "f")
        return plain if "." in plain else plain + ".0"
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
    """Java's ``Instant.toString`` of ``micros`` since 1970-01-01 (ISO_INSTANT)."""
    seconds, us = divmod(micros, 1_000_000)
    t = _EPOCH + datetime.timedelta(seconds=seconds)
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    if us:
        fraction = f"{us:06d}"
        text += "." + (fraction[:3] if fraction.endswith("000") else fraction)
    return text + "Z"


def json_value(type_name: str) -> Callable[[Any], Any] | None:
    """The JSON value of an exact-layout value of leaf type ``type_name``; None if not shown."""
    if type_name in ("long", "integer", "short", "byte"):
        return int
    if type_name.startswith("decimal("):
        return lambda v: float(format(v, "f"))
    return _VALUES.get(type_name)


_VALUES: dict[str, Callable[[Any], Any]] = {
    "boolean": lambda v: int(v) == 1,
    "date": lambda v: (datetime.date(1970, 1, 1) + datetime.timedelta(days=int(v))).isoformat(),
    "timestamp": lambda v: _instant(int(v)),
    "timestamp_ntz": lambda v: _instant(int(v)),
    "float": lambda v: json_number(java_float(v)),
    "double": lambda v: json_number(java_double(float(v))),
    "string": lambda v: v if isinstance(v, str) else json_bytes(v),  # bytes, or a number's text
    "binary": json_bytes,
}
