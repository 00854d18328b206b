"""The first records of TFRecord files as the rows ``spark-tfrecord inspect`` prints, in plain
Python: what the jar's ``TFRecordInspector.readRecordsJson`` gives (``JsonText``), decided once
per schema.

Each row is a dict of JSON values, as ``json.loads`` reads the jar's text: numbers as numbers
(a float32 by its shortest decimal, as Java's ``Float.toString`` writes it; a decimal by its
plain text), NaN and infinities as strings, bytes (string and binary columns) as text when they
are valid UTF-8, else ``0x`` and their hex, dates as ``YYYY-MM-DD``, timestamps as Java's
``Instant.toString``. Columns are read as the data source reads them (docs/types.md): a feature
absent is null, a struct is null when none of its features is there, a list of lists in an
``Example`` comes from its ragged features, in a ``SequenceExample`` from its feature list, an
ML vector from a dense list or the ``x/indices``, ``x/values``, ``x/size`` features.

Arrays of structs, encoded tensors and maps are not read here: :func:`row_decoder` raises
:class:`Unsupported` for a schema that has one, and the caller reads with the jar instead.
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from spark_tfrecord import errors
from spark_tfrecord._format.files import Files, LocalFiles
from spark_tfrecord._format.inference import (
    _BYTES,
    _FLOAT,
    _INT64,
    _NONE,
    InferenceOptions,
    _entries,
    _feature,
    _length,
    _skip,
    _varint,
    records,
)
from spark_tfrecord._format.wire import MalformedRecord

#: A decoded record: per feature name, its kind and values; per feature list name, its steps.
Features = Mapping[str, tuple[int, list[Any]]]
Lists = Mapping[str, list[tuple[int, list[Any]]]]
#: Reads one column's JSON value from a record's features; raises _Mismatch.
Reader = Callable[[Features, Lists], Any]

_INT_RANGES = {"long": 64, "integer": 32, "short": 16, "byte": 8}
_EPOCH = datetime.datetime(1970, 1, 1)


class Unsupported(Exception):
    """A schema with a column this module does not read (the message names it)."""


class _Mismatch(Exception):
    """A record's feature does not fit its column: the reason, and the column."""

    def __init__(self, column: str, reason: str) -> None:
        super().__init__(reason)
        self.column = column
        self.reason = reason


def java_float(v: float) -> str:
    """A float32 as Java's ``Float.toString`` writes it (``1.0``, ``1.0E10``, ``NaN``)."""
    f = np.float32(v)
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return _java_decimal(
        repr(float(np.format_float_positional(f, unique=True, trim="-"))), abs(float(f))
    )


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


def _json_number(text: str) -> Any:
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


def _atom(type_name: str, column: str) -> Callable[[int, Any], Any]:
    """The JSON value of one value of kind ``k`` read into a column of type ``type_name``."""

    def mismatch(k: int) -> _Mismatch:
        kinds = {_BYTES: "bytes_list", _FLOAT: "float_list", _INT64: "int64_list"}
        return _Mismatch(column, f"a {kinds.get(k, 'feature')} cannot be read as {type_name}")

    if type_name in _INT_RANGES:
        bits = _INT_RANGES[type_name]

        def integer(k: int, v: Any) -> Any:
            if k != _INT64:
                raise mismatch(k)
            v = int(v)
            if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
                raise _Mismatch(column, f"cannot hold the value {v}")
            return v

        return integer
    if type_name == "boolean":

        def boolean(k: int, v: Any) -> Any:
            if k != _INT64:
                raise mismatch(k)
            if int(v) not in (0, 1):
                raise _Mismatch(
                    column, f"cannot hold the value {int(v)} (a boolean is stored as 0 or 1)"
                )
            return int(v) == 1

        return boolean
    if type_name == "date":

        def date(k: int, v: Any) -> Any:
            if k != _INT64:
                raise mismatch(k)
            return (datetime.date(1970, 1, 1) + datetime.timedelta(days=int(v))).isoformat()

        return date
    if type_name in ("timestamp", "timestamp_ntz"):

        def timestamp(k: int, v: Any) -> Any:
            if k != _INT64:
                raise mismatch(k)
            return _instant(int(v))

        return timestamp
    if type_name == "float":

        def float32(k: int, v: Any) -> Any:
            if k not in (_FLOAT, _INT64):
                raise mismatch(k)
            return _json_number(java_float(float(np.float32(v))))

        return float32
    if type_name == "double":

        def float64(k: int, v: Any) -> Any:
            if k not in (_FLOAT, _INT64):
                raise mismatch(k)
            return _json_number(java_double(float(v)))

        return float64
    if type_name.startswith("decimal("):
        precision, scale = (int(x) for x in type_name[len("decimal(") : -1].split(","))

        def dec(k: int, v: Any) -> Any:
            if k == _FLOAT:
                if math.isnan(v) or math.isinf(v):
                    raise _Mismatch(column, f"cannot hold the value {java_float(v)}")
                d = decimal.Decimal(java_float(v))
            elif k == _INT64:
                d = decimal.Decimal(int(v))
            else:
                raise mismatch(k)
            d = d.quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP)
            if len(d.as_tuple().digits) > precision and d != 0:
                raise _Mismatch(column, f"cannot hold the value {d}")
            return float(format(d, "f"))

        return dec
    if type_name == "string":

        def string(k: int, v: Any) -> Any:
            if k == _BYTES:
                return json_bytes(v)
            if k == _INT64:
                return str(int(v))
            if k == _FLOAT:
                return java_float(v)
            raise mismatch(k)

        return string
    if type_name == "binary":

        def binary(k: int, v: Any) -> Any:
            if k != _BYTES:
                raise mismatch(k)
            return json_bytes(v)

        return binary
    raise Unsupported(f"column {column!r} of type {type_name}")


def _values(lists: list[Any]) -> list[Any]:
    out: list[Any] = []
    for values in lists:
        out.extend(values.tolist() if isinstance(values, np.ndarray) else values)
    return out


def _float_values(kind: int, lists: list[Any]) -> list[Any]:
    """Float32 values (kept as float32 for the converters), or ints."""
    if kind == _FLOAT:
        out: list[Any] = []
        for values in lists:
            out.extend(np.asarray(values, np.float32))
        return out
    return _values(lists)


def _type_name(t: Any) -> str:
    return t if isinstance(t, str) else str(t.get("type"))


def _reader(
    t: Any, column: str, name: str, separator: str, sequence: bool, meta: Mapping[str, Any]
) -> tuple[Reader, list[str]]:
    """The reader of a column of type ``t`` from the feature ``name``, and the features it
    reads (for a struct's "none of its features" rule)."""
    if "tfrecord.tensorEncoding" in meta:
        raise Unsupported(f"column {column!r} holds an encoded tensor")
    if isinstance(t, dict) and t.get("type") == "udt":
        return _vector(column, name, separator), [
            name,
            *(name + separator + p for p in ("indices", "values", "size")),
        ]
    if isinstance(t, dict) and t.get("type") == "struct":
        fields = []
        leaves: list[str] = []
        for f in t["fields"]:
            r, names = _reader(
                f["type"],
                f"{column}.{f['name']}",
                name + separator + f["name"],
                separator,
                sequence,
                f.get("metadata", {}),
            )
            fields.append((f["name"], r))
            leaves.extend(names)

        def struct(feats: Features, lists: Lists) -> Any:
            if not any(n in feats or n in lists for n in leaves):
                return None
            return {n: r(feats, lists) for n, r in fields}

        return struct, leaves
    if isinstance(t, dict) and t.get("type") == "array":
        element = t["elementType"]
        if isinstance(element, dict) and element.get("type") == "array":
            return _nested(t, column, name, separator, sequence)
        if isinstance(element, dict):
            raise Unsupported(f"column {column!r} of type array<{_type_name(element)}>")
        atom = _atom(element, column)

        def array(feats: Features, lists: Lists) -> Any:
            found = feats.get(name)
            if found is None:
                return None
            kind, values = found
            return [atom(kind, v) for v in _float_values(kind, values)]

        return array, [name]
    if isinstance(t, dict):
        raise Unsupported(f"column {column!r} of type {_type_name(t)}")
    atom = _atom(t, column)

    def scalar(feats: Features, lists: Lists) -> Any:
        found = feats.get(name)
        if found is None:
            return None
        kind, values = found
        flat = _float_values(kind, values)
        if not flat:
            return None
        if len(flat) > 1:
            raise _Mismatch(column, f"{len(flat)} values for a column of type {t}")
        return atom(kind, flat[0])

    return scalar, [name]


def _nested(
    t: Any, column: str, name: str, separator: str, sequence: bool
) -> tuple[Reader, list[str]]:
    """An ``array<array<…>>`` column: a feature list in a SequenceExample, ragged in an Example."""
    depth, element = 0, t
    while isinstance(element, dict) and element.get("type") == "array":
        depth, element = depth + 1, element["elementType"]
    if isinstance(element, dict):
        raise Unsupported(f"column {column!r} of type {_type_name(t)}")
    atom = _atom(element, column)
    if sequence:
        if depth != 2:
            raise Unsupported(f"column {column!r}: {depth} nested arrays in a SequenceExample")

        def feature_list(feats: Features, lists: Lists) -> Any:
            steps = lists.get(name)
            if steps is None:
                return None
            return [[atom(k, v) for v in _float_values(k, values)] for k, values in steps]

        return feature_list, [name]
    flat_name = name + separator + "ragged_flat_values"
    length_names = [f"{name}{separator}ragged_row_lengths_{k}" for k in range(depth - 1)]

    def ragged(feats: Features, lists: Lists) -> Any:
        flat = feats.get(flat_name)
        found = [feats.get(n) for n in length_names]
        if flat is None and all(f is None for f in found):
            return None
        if flat is None or any(f is None for f in found):
            raise _Mismatch(column, "a list of lists with some of its ragged features missing")
        kind, values = flat
        level: list[Any] = [atom(kind, v) for v in _float_values(kind, values)]
        for f in reversed(found):
            assert f is not None
            lengths = _values(f[1])
            if any(n < 0 for n in lengths) or sum(lengths) != len(level):
                raise _Mismatch(column, "ragged row lengths that do not add up")
            out, at = [], 0
            for n in lengths:
                out.append(level[at : at + n])
                at += n
            level = out
        return level

    return ragged, [flat_name, *length_names]


def _vector(column: str, name: str, separator: str) -> Reader:
    indices_name, values_name, size_name = (
        name + separator + p for p in ("indices", "values", "size")
    )

    def vector(feats: Features, lists: Lists) -> Any:
        dense = feats.get(name)
        if dense is not None:
            kind, values = dense
            if kind not in (_FLOAT, _INT64, _NONE):
                raise _Mismatch(column, "a bytes_list cannot be read as a vector")
            return {
                "type": 1,
                "size": None,
                "indices": None,
                "values": [float(v) for v in _float_values(kind, values)],
            }
        size = feats.get(size_name)
        if size is None:
            return None
        indices = _values(feats.get(indices_name, (_NONE, []))[1])
        values = [float(v) for v in _float_values(_FLOAT, feats.get(values_name, (_NONE, []))[1])]
        sizes = _values(size[1])
        if len(sizes) != 1 or len(indices) != len(values):
            raise _Mismatch(column, "a sparse vector whose features do not agree")
        return {"type": 0, "size": int(sizes[0]), "indices": indices, "values": values}

    return vector


def row_decoder(
    schema: Mapping[str, Any], record_type: str = "Example", separator: str = "/"
) -> Callable[[bytes], dict[str, Any]]:
    """The function that turns one record into its row, decided once for ``schema`` (Spark's
    JSON form of a ``StructType``); :class:`Unsupported` for a column it does not read."""
    if record_type == "ByteArray":
        names = [f["name"] for f in schema["fields"]]
        return lambda data: {n: json_bytes(data) for n in names}
    sequence = record_type == "SequenceExample"
    readers = [
        (
            f["name"],
            _reader(f["type"], f["name"], f["name"], separator, sequence, f.get("metadata", {}))[0],
        )
        for f in schema["fields"]
    ]

    def decode(data: bytes) -> dict[str, Any]:
        feats: dict[str, tuple[int, list[Any]]] = {}
        lists: dict[str, list[tuple[int, list[Any]]]] = {}
        _walk(data, feats, lists, sequence)
        return {name: r(feats, lists) for name, r in readers}

    return decode


def _walk(
    buf: bytes,
    feats: dict[str, tuple[int, list[Any]]],
    lists: dict[str, list[tuple[int, list[Any]]]],
    sequence: bool,
) -> None:
    pos, end = 0, len(buf)
    while pos < end:
        tag, pos = _varint(buf, pos, end)
        if tag == 0x0A or (sequence and tag == 0x12):
            mstart, pos = _length(buf, pos, end)
            for key, vstart, vend in _entries(buf, mstart, pos):
                name = key.decode("utf-8", "replace")
                if tag == 0x0A:
                    feats[name] = _feature(buf, vstart, vend)
                    continue
                steps = []
                spos = vstart
                while spos < vend:
                    stag, spos = _varint(buf, spos, vend)
                    if stag == 0x0A:
                        fstart, spos = _length(buf, spos, vend)
                        steps.append(_feature(buf, fstart, spos))
                    else:
                        spos = _skip(buf, spos, vend, stag & 7)
                lists[name] = steps
        else:
            pos = _skip(buf, pos, end, tag & 7)


def head(
    paths: Sequence[str],
    schema: Mapping[str, Any],
    n: int,
    *,
    record_type: str = "Example",
    options: Mapping[str, str] | None = None,
    files: Files | None = None,
) -> Iterator[dict[str, Any]]:
    """The first ``n`` records of the files as rows (the jar's ``readRecordsJson``).
    :class:`Unsupported` (before any file is read) for a schema it does not read; a damaged or
    malformed record, or a value that does not fit its column, raises
    :class:`~spark_tfrecord.errors.CorruptFileError` naming the file, the offset (and column)."""
    parsed = InferenceOptions.parse(options)
    decode = row_decoder(schema, record_type, parsed.path_separator)
    fs = files if files is not None else LocalFiles()
    what = "tf.train.SequenceExample" if record_type == "SequenceExample" else "tf.train.Example"
    shown = 0
    for path in paths:
        if shown >= n:
            return
        for offset, data in records(
            path,
            fs,
            compression=parsed.compression,
            verify_checksums=parsed.verify_checksums,
            max_record_bytes=parsed.max_record_bytes,
        ):
            try:
                row = decode(data)
            except (MalformedRecord, IndexError) as e:
                reason = getattr(e, "reason", "a field runs past the end of the record")
                raise errors.CorruptFileError(
                    errors.MALFORMED_RECORD, f"Malformed {what} ({reason})", path, offset
                ) from None
            except _Mismatch as e:
                raise errors.CorruptFileError(
                    errors.DATA_MISMATCH, f"Column '{e.column}': {e.reason}", path, offset, e.column
                ) from None
            yield row
            shown += 1
            if shown >= n:
                return
