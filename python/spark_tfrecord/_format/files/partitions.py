"""Partition columns from ``name=value`` folder names, as Spark's ``PartitioningUtils`` infers them.
Values are in the loaders' dtypes: dates as days since 1970-01-01, timestamps as microseconds
(the folder's local time read in this process's time zone), doubles and decimals as ``float``.
"""

from __future__ import annotations

import datetime
import decimal
import os
import re
from collections.abc import Sequence

from spark_tfrecord._format.files.files import is_url, local_path

#: The folder name Spark writes for a null partition value.
NULL_NAME = "__HIVE_DEFAULT_PARTITION__"

_HEX = re.compile(r"%([0-9A-Fa-f]{2})")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_BIG_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
# Java's Double.parseDouble (without hexadecimal floats): blanks around, an optional f/d suffix.
_DOUBLE = re.compile(
    r"[\x00-\x20]*[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)[fFdD]?"
    r"[\x00-\x20]*"
)
# ``yyyy-MM-dd HH:mm:ss[.S]``: one digit of a fraction at most (Spark reads ``.12`` as a string).
_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9])?"
)
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_EPOCH = datetime.date(1970, 1, 1)
_INT_RANGE = (-(2**31), 2**31 - 1)
_LONG_RANGE = (-(2**63), 2**63 - 1)
_ORDER = {"null": 0, "int": 1, "bigint": 2}
_INTEGERS = ("int", "bigint", "smallint", "tinyint")


def unescape(name: str) -> str:
    """Spark's ``unescapePathName``: each ``%XX`` (two hex digits) is the character XX."""
    return _HEX.sub(lambda m: chr(int(m.group(1), 16)), name)


def folders(relative_path: str) -> list[tuple[str, str]]:
    """The ``name=value`` folders directly above the file ``relative_path``, outermost first."""
    found = []
    for part in reversed(relative_path.split("/")[:-1]):
        if "=" not in part:
            break
        name, value = part.split("=", 1)
        found.append((unescape(name), value))
    return found[::-1]


def _decimal_type(raw: str) -> str | None:
    """``decimal(p,0)`` when Java's ``BigDecimal(raw)`` is an integer of at most 38 digits."""
    if not _BIG_DECIMAL.fullmatch(raw):
        return None
    value = decimal.Decimal(raw)
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    if exponent < 0:
        return None  # Java's scale above 0 (1.5, 1.50e1): a double
    if exponent > 0:  # a scale below 0 (1e3): the integer's digits (decimal(4,0))
        value = value.quantize(decimal.Decimal(1), context=decimal.Context(prec=1000))
    digits = len(value.as_tuple().digits)
    return f"decimal({digits},0)" if digits <= 38 else None


def _timestamp(raw: str) -> datetime.datetime | None:
    m = _TIMESTAMP.fullmatch(unescape(raw))
    if not m:
        return None
    fraction = (m.group(7) or ".")[1:7].ljust(6, "0")
    try:
        year, month, day, hour, minute, second = (int(m.group(k)) for k in range(1, 7))
        return datetime.datetime(year, month, day, hour, minute, second, int(fraction))
    except ValueError:
        return None


def _date(raw: str) -> datetime.date | None:
    m = _DATE.fullmatch(raw)
    if not m:
        return None
    try:
        return datetime.date(*(int(m.group(k)) for k in range(1, 4)))
    except ValueError:
        return None


def infer(raw: str) -> str:
    """The type Spark gives the raw folder value ``raw`` alone (``null`` for a null)."""
    if _INTEGER.fullmatch(raw):
        v = int(raw)
        if _INT_RANGE[0] <= v <= _INT_RANGE[1]:
            return "int"
        if _LONG_RANGE[0] <= v <= _LONG_RANGE[1]:
            return "bigint"
    if (found := _decimal_type(raw)) is not None:
        return found
    if _DOUBLE.fullmatch(raw):
        return "double"
    if _timestamp(raw) is not None:
        return "timestamp"
    if _date(raw) is not None:
        return "date"
    return "null" if raw == NULL_NAME else "string"


def _precision(t: str) -> int:
    return {"int": 10, "bigint": 20}.get(t) or int(t[len("decimal(") :].split(",")[0])


def wider(a: str, b: str) -> str:
    """The type of a column of types ``a`` and ``b`` (``findWiderTypeForPartitionColumn``)."""
    if a == b:
        return a
    if a == "null" or b == "null":
        return b if a == "null" else a
    if a in _ORDER and b in _ORDER:
        return a if _ORDER[a] > _ORDER[b] else b
    numbers = ("int", "bigint")
    if a.startswith("decimal") or b.startswith("decimal"):
        if all(t in numbers or t.startswith("decimal") for t in (a, b)):
            return f"decimal({min(38, max(_precision(a), _precision(b)))},0)"
        return "string"
    if {a, b} == {"int", "double"}:
        return "double"
    if {a, b} == {"date", "timestamp"}:
        return "timestamp"
    return "string"


def column_type(raws: Sequence[str]) -> str:
    """The type of a partition column whose folders hold ``raws`` (``void`` if all null)."""
    t = "null"
    for raw in raws:
        t = wider(t, infer(raw))
    return "void" if t == "null" else t


def value(raw: str, t: str) -> int | float | str | None:
    """The folder value ``raw`` of a column of type ``t``, in the loaders' dtypes."""
    if raw == NULL_NAME:
        return None
    if t in _INTEGERS:
        return int(raw)
    if t in ("double", "float"):
        text = raw.strip("".join(chr(c) for c in range(33))).rstrip("fFdD")
        return float(text.replace("Infinity", "inf"))
    if t.startswith("decimal"):
        return float(decimal.Decimal(raw))
    if t == "date":
        day = _date(raw)
        return None if day is None else (day - _EPOCH).days
    if t in ("timestamp", "timestamp_ntz"):
        moment = _timestamp(raw)
        if moment is None:  # a date in a column of timestamps: its midnight
            day = _date(raw)
            if day is None:
                return None  # a DDL string's type the value is not (Spark: null)
            moment = datetime.datetime(day.year, day.month, day.day)
        if t == "timestamp_ntz":  # the wall clock's microseconds, in no time zone
            moment = moment.replace(tzinfo=datetime.timezone.utc)
        seconds = int(moment.replace(microsecond=0).timestamp())
        return seconds * 1_000_000 + moment.microsecond
    if t == "boolean":
        return {"true": 1, "false": 0}.get(raw.lower())
    return unescape(raw)


def kind(t: str) -> str:
    """The loaders' kind of a partition column of type ``t``: ``int``, ``float`` or ``str``."""
    if t in _INTEGERS or t in ("boolean", "date", "timestamp", "timestamp_ntz"):
        return "int"
    if t in ("double", "float") or t.startswith("decimal"):
        return "float"
    return "str"


def discover(root: str, paths: Sequence[str]) -> list[dict[str, str]]:
    """Each file's raw ``name=value`` folders below ``root``; ValueError if columns differ."""
    url = is_url(root)
    top = (root if url else os.path.abspath(local_path(root))).rstrip("/") + "/"
    full = list(paths) if url else [os.path.abspath(local_path(p)) for p in paths]
    found = [dict(folders(p[len(top) :] if p.startswith(top) else "")) for p in full]
    if not any(found):
        return []
    if any(list(d) != list(found[0]) for d in found):
        kinds = sorted({", ".join(d) for d in found})
        raise ValueError(
            f"Conflicting partition column names in {root}: {kinds}; data files should be only "
            "in leaf folders, which name the same columns."
        )
    return found
