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

An array of structs comes from one list per leaf of its element (parallel lists; in a
``SequenceExample`` one feature list per leaf, a step per element), as the jar's
``NestedRowAssembler`` builds it; an encoded tensor column (a TFDS ``Tensor`` with an encoding)
from its ``x/value`` and ``x/shape`` features, as its ``EncodedTensorReader`` does. Their errors
are the jar's, word for word. A map column (which no writer, manifest or TFDS folder gives) is
refused as the data source refuses it.
"""

from __future__ import annotations

import datetime
import decimal
import math
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from spark_tfrecord import errors
from spark_tfrecord._format.conversions import java_float
from spark_tfrecord._format.encode_errors import EncodeError
from spark_tfrecord._format.feature_messages import feature_lists, map_entries
from spark_tfrecord._format.feature_paths import (
    LIST_LENGTH_KEY,
    TENSOR_DTYPE_KEY,
    TENSOR_ELEMENTS,
    TENSOR_ENCODING_KEY,
    reject_maps,
    supports,
    unsupported,
    validate,
)
from spark_tfrecord._format.file_records import records
from spark_tfrecord._format.files import Files, LocalFiles
from spark_tfrecord._format.read_options import InferenceOptions
from spark_tfrecord._format.schema import depth, is_array, is_struct
from spark_tfrecord._format.type_table import array_of, simple_string
from spark_tfrecord._format.wire import (
    BYTES,
    FLOAT,
    INT64,
    UNSET,
    MalformedRecord,
    cursor_delimited,
    cursor_skip,
    cursor_varint,
)

#: A decoded record: per feature name, its kind and values; per feature list name, its steps.
Features = Mapping[str, tuple[int, list[Any]]]
Lists = Mapping[str, list[tuple[int, list[Any]]]]
#: Reads one column's JSON value from a record's features; raises _Mismatch.
Reader = Callable[[Features, Lists], Any]

_INT_RANGES = {"long": 64, "integer": 32, "short": 16, "byte": 8}
_EPOCH = datetime.datetime(1970, 1, 1)


class Unsupported(Exception):
    """A column of a type no reader here reads (the message names it); :func:`row_decoder`
    raises it as the jar's ``TFRECORD_UNSUPPORTED_TYPE``. The checks the jar makes of a schema
    come first, so that only types the jar refuses too get here."""


def _nested_column(t: Any) -> bool:
    """A struct or an array of structs (the jar's ``FeaturePaths.isNested``)."""
    return is_struct(t) or (is_array(t) and is_struct(t["elementType"]))


class _Mismatch(Exception):
    """A record's feature does not fit its column: the reason, and the column; ``whole``: the
    reason is the whole message (the jar's own words), not to be put after the column's name."""

    def __init__(self, column: str, reason: str, whole: bool = False) -> None:
        super().__init__(reason)
        self.column = column
        self.reason = reason
        self.whole = whole

    @property
    def message(self) -> str:
        return self.reason if self.whole else f"Column '{self.column}': {self.reason}"


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
        kinds = {BYTES: "bytes_list", FLOAT: "float_list", INT64: "int64_list"}
        return _Mismatch(column, f"a {kinds.get(k, 'feature')} cannot be read as {type_name}")

    if type_name in _INT_RANGES:
        bits = _INT_RANGES[type_name]

        def integer(k: int, v: Any) -> Any:
            if k != INT64:
                raise mismatch(k)
            v = int(v)
            if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
                raise _Mismatch(column, f"cannot hold the value {v}")
            return v

        return integer
    if type_name == "boolean":

        def boolean(k: int, v: Any) -> Any:
            if k != INT64:
                raise mismatch(k)
            if int(v) not in (0, 1):
                raise _Mismatch(
                    column, f"cannot hold the value {int(v)} (a boolean is stored as 0 or 1)"
                )
            return int(v) == 1

        return boolean
    if type_name == "date":

        def date(k: int, v: Any) -> Any:
            if k != INT64:
                raise mismatch(k)
            return (datetime.date(1970, 1, 1) + datetime.timedelta(days=int(v))).isoformat()

        return date
    if type_name in ("timestamp", "timestamp_ntz"):

        def timestamp(k: int, v: Any) -> Any:
            if k != INT64:
                raise mismatch(k)
            return _instant(int(v))

        return timestamp
    if type_name == "float":

        def float32(k: int, v: Any) -> Any:
            if k not in (FLOAT, INT64):
                raise mismatch(k)
            return _json_number(java_float(float(np.float32(v))))

        return float32
    if type_name == "double":

        def float64(k: int, v: Any) -> Any:
            if k not in (FLOAT, INT64):
                raise mismatch(k)
            return _json_number(java_double(float(v)))

        return float64
    if type_name.startswith("decimal("):
        precision, scale = (int(x) for x in type_name[len("decimal(") : -1].split(","))

        def dec(k: int, v: Any) -> Any:
            if k == FLOAT:
                if math.isnan(v) or math.isinf(v):
                    raise _Mismatch(column, f"cannot hold the value {java_float(v)}")
                d = decimal.Decimal(java_float(v))
            elif k == INT64:
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
            if k == BYTES:
                return json_bytes(v)
            if k == INT64:
                return str(int(v))
            if k == FLOAT:
                return java_float(v)
            raise mismatch(k)

        return string
    if type_name == "binary":

        def binary(k: int, v: Any) -> Any:
            if k != BYTES:
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
    if kind == FLOAT:
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
    if TENSOR_ENCODING_KEY in meta and not sequence:
        return _tensor(t, column, name, separator, meta)
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
    if is_array(t) and is_struct(t["elementType"]):
        return _struct_array(t["elementType"], column, name, separator, sequence)
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


#: The element types a list split per element (a concatenated leaf) can hold: fixed-size ones.
_FIXED_SIZE = {"boolean", "byte", "short", "integer", "date", "long", "timestamp", "float"}
_FIXED_SIZE |= {"timestamp_ntz", "double"}


def _struct_array(
    element: Mapping[str, Any], column: str, name: str, separator: str, sequence: bool
) -> tuple[Reader, list[str]]:
    """An array of structs, as the jar's ``NestedRowAssembler`` builds it: element i holds value
    i of each leaf's list (step i of its feature list in a SequenceExample); null when none of
    its features is there; lists of unequal length fail, naming them all."""
    # Per leaf of the element, depth first: its feature, the values of one element (1, or the
    # fixed length of a concatenated list), and the reader of its whole list.
    names: list[str] = []
    per_element: list[int] = []
    lists: list[Reader] = []
    features: list[str] = []  # every feature read, for an enclosing struct's null rule

    def leaf(t: Any, leaf_column: str, leaf_name: str, length: int) -> int:
        per = 1
        if sequence:
            flat = array_of(t) if is_array(t) else array_of(array_of(t))
            reader, found = _nested(flat, leaf_column, leaf_name, separator, True)
        elif length > 0 and depth(t) == 1:  # concatenated: `length` values per element
            if not isinstance(t["elementType"], str) or t["elementType"] not in _FIXED_SIZE:
                raise errors.ArgumentError(
                    errors.UNSUPPORTED_TYPE,
                    f"Column '{leaf_column}' has elements of type "
                    f"{simple_string(t['elementType'])}, which a list split per element cannot "
                    "hold: only numbers and booleans can.",
                    column=leaf_column,
                )
            reader, found = _reader(t, leaf_column, leaf_name, separator, False, {})
            per = length
        else:
            reader, found = _reader(array_of(t), leaf_column, leaf_name, separator, False, {})
        names.append(leaf_name)
        per_element.append(per)
        lists.append(reader)
        features.extend(found)
        return len(names) - 1

    #: Writes one field of element i from the leaves' lists (None: absent) into a dict.
    Part = Callable[[list[Any], int], Any]

    def part(f: Mapping[str, Any], prefix: str, col: str) -> tuple[Part, list[int]]:
        t, leaf_name, leaf_column = f["type"], prefix + separator + f["name"], col + "." + f["name"]
        if is_struct(t):
            children = [(g["name"], part(g, leaf_name, leaf_column)) for g in t["fields"]]
            mine = [k for _, (_, ks) in children for k in ks]

            def struct(found: list[Any], i: int) -> Any:
                if all(found[k] is None for k in mine):
                    return None
                return {n: p(found, i) for n, (p, _) in children}

            return struct, mine
        length = int((f.get("metadata") or {}).get(LIST_LENGTH_KEY, 0))
        k = leaf(t, leaf_column, leaf_name, length)
        per = per_element[k]
        if per > 1:

            def share(found: list[Any], i: int) -> Any:
                return None if found[k] is None else found[k][i * per : (i + 1) * per]

            return share, [k]
        if not sequence or is_array(t):

            def value(found: list[Any], i: int) -> Any:
                return None if found[k] is None else found[k][i]

            return value, [k]
        field, type_text = f["name"], simple_string(t)

        def step_value(found: list[Any], i: int) -> Any:
            if found[k] is None:
                return None
            step = found[k][i]
            if len(step) > 1:
                raise _Mismatch(
                    column,
                    f"Column '{column}' field '{field}' ({type_text}) holds one value per step, "
                    f"but step {i} of feature list '{names[k]}' holds {len(step)}",
                    whole=True,
                )
            return step[0] if step else None

        return step_value, [k]

    fields = [(f["name"], part(f, name, column)[0]) for f in element["fields"]]
    what = "feature lists of unequal length (steps)" if sequence else "lists of unequal length"

    def unequal(found: list[Any]) -> _Mismatch:
        lengths = []
        for k, n in enumerate(names):
            if found[k] is None:
                lengths.append(f"'{n}' absent")
            else:
                per = f" values, {per_element[k]} per element" if per_element[k] > 1 else ""
                lengths.append(f"'{n}' {len(found[k])}{per}")
        return _Mismatch(
            column,
            f"Column '{column}' (array<struct>) is read from {what}: {', '.join(lengths)}",
            whole=True,
        )

    def struct_array(feats: Features, steps: Lists) -> Any:
        found = [r(feats, steps) for r in lists]
        n = -1
        for k, values in enumerate(found):
            if values is not None:
                if len(values) % per_element[k]:
                    raise unequal(found)
                count = len(values) // per_element[k]
                if n < 0:
                    n = count
                elif count != n:
                    raise unequal(found)
        if n < 0:
            return None
        return [{f: p(found, i) for f, p in fields} for i in range(n)]

    return struct_array, features


#: Per dtype of an encoded tensor: the JSON value of one of its stored values.
_TENSOR_VALUES: dict[str, Callable[[Any], Any]] = {
    "float32": lambda v: _json_number(java_float(v)),
    "float64": lambda v: _json_number(java_double(v)),
    "bool": lambda v: v != 0,
}
#: The most bytes a Spark row can hold (the jar's ``MaxRowBytes``).
_MAX_ROW_BYTES = 2**31 - 1 - 15


def _tensor(
    t: Any, column: str, name: str, separator: str, meta: Mapping[str, Any]
) -> tuple[Reader, list[str]]:
    """An encoded tensor column (``array<…<T>>`` of rank r) from ``c/value`` (one bytes value:
    the values' little-endian bytes in C order, zlib-compressed for ``zlib``) and ``c/shape`` (r
    int64 sizes), with the jar's ``EncodedTensorReader``'s checks and messages."""
    dtype = str(meta.get(TENSOR_DTYPE_KEY))
    if dtype not in TENSOR_ELEMENTS:
        raise errors.ArgumentError(
            errors.INVALID_SCHEMA,
            f"Column '{column}' holds an encoded tensor of dtype '{dtype}' ({TENSOR_DTYPE_KEY}), "
            f"which is not one of {', '.join(sorted(TENSOR_ELEMENTS))}.",
            column=column,
        )
    stored = np.dtype(TENSOR_ELEMENTS[dtype])
    value_of = _TENSOR_VALUES.get(dtype, int)
    deflate = meta.get(TENSOR_ENCODING_KEY) == "zlib"
    rank = depth(t)
    value_name, shape_name = name + separator + "value", name + separator + "shape"
    kinds = {UNSET: "unset", BYTES: "bytes_list", FLOAT: "float_list", INT64: "int64_list"}
    prefix = f"Column '{column}' ({simple_string(t)}) "

    def fail(what: str) -> _Mismatch:
        return _Mismatch(column, prefix + what, whole=True)

    def tensor(feats: Features, lists: Lists) -> Any:
        value, shape_feature = feats.get(value_name), feats.get(shape_name)
        if value is None and shape_feature is None:
            return None
        values = _values(value[1]) if value is not None else []
        if values and value is not None and value[0] != BYTES:
            raise fail(
                f"cannot be read from its {kinds[value[0]]} feature '{value_name}': it holds one "
                "bytes value"
            )
        shape = _values(shape_feature[1]) if shape_feature is not None else []
        if shape_feature is not None:
            if shape and shape_feature[0] != INT64:
                raise fail(
                    f"cannot be read from its {kinds[shape_feature[0]]} feature '{shape_name}': "
                    "a shape is int64"
                )
            if len(shape) != rank:
                raise fail(
                    f"has a shape of {len(shape)} sizes in '{shape_name}', but its rank is {rank}"
                )
        for n, feature in ((value_name, value), (shape_name, shape_feature)):
            if feature is None:
                raise fail(
                    f"is read from the features '{value_name}' and '{shape_name}', but the "
                    f"record has no '{n}'"
                )
        if len(values) != 1:
            raise fail(f"has {len(values)} values in '{value_name}', which holds one bytes value")
        sizes = [int(s) for s in shape]
        for s in sizes:
            if s < 0 or s > 2**31 - 1:
                raise fail(f"has the size {s} in '{shape_name}'")
        count = 0 if 0 in sizes else math.prod(sizes)
        shape_text = "(" + ", ".join(map(str, sizes)) + ")"
        lists_bytes, above = 0, 1
        for s in sizes[:-1]:
            above = min(above * s, _MAX_ROW_BYTES)
            lists_bytes += above
        if lists_bytes > _MAX_ROW_BYTES // 8:
            raise fail(
                f"has the shape {shape_text} in '{shape_name}', whose lists do not fit in a "
                f"Spark row (at most {_MAX_ROW_BYTES} bytes)"
            )
        expected = count * stored.itemsize

        def size_mismatch(found: str) -> _Mismatch:
            return fail(
                f"has {found} bytes of values in '{value_name}', but its shape {shape_text} of "
                f"{stored.itemsize}-byte values takes {expected}"
            )

        data: bytes = values[0]
        if deflate:
            if expected > 2**31 - 2:
                raise size_mismatch("more")
            inflater = zlib.decompressobj()
            try:
                data = inflater.decompress(data, expected + 1)
            except zlib.error as e:
                reason = str(e).split(": ", 1)[-1]
                raise fail(f"has a bad zlib stream in '{value_name}': {reason}") from None
            if len(data) > expected:
                raise size_mismatch("more")
            if not inflater.eof:
                raise fail(
                    f"has a truncated zlib stream in '{value_name}' ({len(data)} bytes inflated)"
                )
        if len(data) != expected:
            raise size_mismatch(str(len(data)))
        flat = [value_of(v) for v in np.frombuffer(data, stored).tolist()]
        return _shaped(flat, sizes)

    return tensor, [value_name, shape_name]


def _shaped(flat: list[Any], sizes: list[int]) -> list[Any]:
    """``flat`` (C order) as nested lists of the sizes ``sizes``."""
    if len(sizes) == 1:
        return flat
    step = math.prod(sizes[1:])
    return [_shaped(flat[i * step : (i + 1) * step], sizes[1:]) for i in range(sizes[0])]


def _vector(column: str, name: str, separator: str) -> Reader:
    indices_name, values_name, size_name = (
        name + separator + p for p in ("indices", "values", "size")
    )

    def vector(feats: Features, lists: Lists) -> Any:
        dense = feats.get(name)
        if dense is not None:
            kind, values = dense
            if kind not in (FLOAT, INT64, UNSET):
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
        indices = _values(feats.get(indices_name, (UNSET, []))[1])
        values = [float(v) for v in _float_values(FLOAT, feats.get(values_name, (UNSET, []))[1])]
        sizes = _values(size[1])
        if len(sizes) != 1 or len(indices) != len(values):
            raise _Mismatch(column, "a sparse vector whose features do not agree")
        return {"type": 0, "size": int(sizes[0]), "indices": indices, "values": values}

    return vector


def row_decoder(
    schema: Mapping[str, Any], record_type: str = "Example", separator: str = "/"
) -> Callable[[bytes], dict[str, Any]]:
    """The function that turns one record into its row, decided once for ``schema`` (Spark's
    JSON form of a ``StructType``); :class:`~spark_tfrecord.errors.ArgumentError`, with the
    jar's condition, for a schema the data source does not read (a map, a vector in an array
    of structs, lists deeper than a SequenceExample holds...)."""
    if record_type == "ByteArray":
        names = [f["name"] for f in schema["fields"]]
        return lambda data: {n: json_bytes(data) for n in names}
    sequence = record_type == "SequenceExample"
    try:
        if any(_nested_column(f["type"]) for f in schema["fields"]):
            # A nested schema: the jar checks its features first (FeaturePaths.leaves).
            validate(schema, record_type, separator, sparse_vectors=False)
        else:
            reject_maps(schema, record_type)
            for f in schema["fields"]:
                if not supports(f["type"]) or (sequence and depth(f["type"]) > 2):
                    raise unsupported(f["name"], f["type"], record_type)
    except EncodeError as e:
        rest = {k: v for k, v in e.parameters.items() if k != "reason"}
        raise errors.ArgumentError(e.condition, e.reason, **rest) from None
    try:
        readers = [
            (
                f["name"],
                _reader(
                    f["type"], f["name"], f["name"], separator, sequence, f.get("metadata", {})
                )[0],
            )
            for f in schema["fields"]
        ]
    except Unsupported as e:
        raise errors.ArgumentError(errors.UNSUPPORTED_TYPE, str(e)) from None

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
        tag, pos = cursor_varint(buf, pos, end)
        if tag == 0x0A or (sequence and tag == 0x12):
            mstart, pos = cursor_delimited(buf, pos, end)
            for key, vstart, vend in map_entries(buf, mstart, pos):
                name = key.decode("utf-8", "replace")
                if tag == 0x0A:
                    feats[name] = feature_lists(buf, vstart, vend)
                    continue
                steps = []
                spos = vstart
                while spos < vend:
                    stag, spos = cursor_varint(buf, spos, vend)
                    if stag == 0x0A:
                        fstart, spos = cursor_delimited(buf, spos, vend)
                        steps.append(feature_lists(buf, fstart, spos))
                    else:
                        spos = cursor_skip(buf, spos, vend, stag & 7)
                lists[name] = steps
        else:
            pos = cursor_skip(buf, pos, end, tag & 7)


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
    :class:`~spark_tfrecord.errors.ArgumentError` (before any file is read) for a schema the jar
    refuses; a damaged or malformed record, or a value that does not fit its column, raises
    :class:`~spark_tfrecord.errors.CorruptFileError` naming the file, the offset (and column)."""
    for _, row in head_of_files(
        paths, schema, n, record_type=record_type, options=options, files=files
    ):
        yield row


def head_of_files(
    paths: Sequence[str],
    schema: Mapping[str, Any],
    n: int,
    *,
    record_type: str = "Example",
    options: Mapping[str, str] | None = None,
    files: Files | None = None,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """:func:`head`'s rows, each with the file it comes from."""
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
                    errors.DATA_MISMATCH, e.message, path, offset, e.column
                ) from None
            yield path, row
            shown += 1
            if shown >= n:
                return
