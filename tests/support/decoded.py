"""What `spark_tfrecord.torch_dataset` and `grain_source` must give for one record, computed from
a Spark schema and a row's Python values by the documented rules (docs/pytorch.md), and the
comparison of a record with it by type and by bits.

`expected(schema, row)` maps a row (the tuple a DataFrame was made from, or a collected `Row`)
to the record dict: keys are `feature_spec`'s (a struct leaf's path joined with ``/``); integer
types, boolean, date and timestamps an ``np.int64`` (days, microseconds since 1970 UTC); float,
double and decimal an ``np.float32``; string ``str``; binary ``bytes``; arrays a 1-D ndarray or a
list; lists of lists `RaggedValue`; sparse vectors `SparseValue`; null None. `assert_same`
compares a decoded record (or value) with it: the same Python and numpy types, floats by their
float32 bits (NaN payloads, -0.0). Nothing here imports pyspark or torch at import time.
"""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any, NamedTuple

import numpy as np

EPOCH_DAY = datetime.date(1970, 1, 1)
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
MICROSECOND = datetime.timedelta(microseconds=1)
#: The field metadata key of a list leaf of fixed length, stored concatenated.
LIST_LENGTH = "tfrecord.listLength"
#: The Spark types (`typeName`) that an int64 holds.
INT64_TYPES = ("byte", "short", "integer", "long", "boolean", "date", "timestamp", "timestamp_ntz")


class RaggedValue(NamedTuple):
    """What `spark_tfrecord.Ragged` must hold: the flat innermost values and, outermost first,
    the lengths of each level."""

    values: Any
    row_lengths: tuple[np.ndarray, ...]


class SparseValue(NamedTuple):
    """What `spark_tfrecord.Sparse` must hold."""

    indices: np.ndarray
    values: np.ndarray
    size: int


def _kind(data_type: Any) -> str:
    """``"int64"``, ``"float32"``, ``"str"`` or ``"bytes"``: what a value of the (non-list)
    Spark type decodes to."""
    name = data_type.typeName()
    if name in ("float", "double", "decimal"):
        return "float32"
    if name == "string":
        return "str"
    if name == "binary":
        return "bytes"
    assert name in INT64_TYPES, name
    return "int64"


def _plain(data_type: Any, value: Any) -> Any:
    """A scalar as Python's int / float / str / bytes, the way the column writes it."""
    name = data_type.typeName()
    if name == "boolean":
        return int(value)
    if name == "date":
        return (value - EPOCH_DAY).days
    if name == "timestamp":  # TimestampType ("timestamp"): an aware datetime, never local time
        assert value.tzinfo is not None, "give timestamps as aware datetimes"
        return (value - EPOCH) // MICROSECOND
    if name == "timestamp_ntz":  # a naive datetime
        return (value - EPOCH.replace(tzinfo=None)) // MICROSECOND
    if name == "decimal":
        assert isinstance(value, Decimal)
        return float(value)
    if name == "binary":
        return bytes(value)
    return value


def _array(kind: str, values: list[Any]) -> Any:
    if kind == "int64":
        return np.array(values, dtype=np.int64)
    if kind == "float32":
        return _float32(np.array(values, dtype=np.float64))
    return list(values)


def _float32(doubles: Any) -> Any:
    """Doubles rounded to float32 as the writer rounds them (beyond float32's range: ±inf)."""
    with np.errstate(over="ignore"):
        return doubles.astype(np.float32)


def _scalar(data_type: Any, value: Any) -> Any:
    kind, plain = _kind(data_type), _plain(data_type, value)
    if kind == "int64":
        return np.int64(plain)
    if kind == "float32":
        return _float32(np.float64(plain))
    return plain


def _innermost(data_type: Any) -> tuple[Any, int]:
    """The element type of nested arrays and their depth (``array<array<T>>``: T, 2)."""
    depth = 0
    while data_type.typeName() == "array":
        data_type, depth = data_type.elementType, depth + 1
    return data_type, depth


def ragged(data_type: Any, nested: list[Any], depth: int) -> RaggedValue:
    """The values and row lengths of `nested`, lists `depth` deep of `data_type` values."""
    lengths: list[np.ndarray] = []
    level = nested
    for _ in range(depth - 1):
        lengths.append(np.array([len(x) for x in level], dtype=np.int64))
        level = [y for x in level for y in x]
    kind = _kind(data_type)
    return RaggedValue(_array(kind, [_plain(data_type, v) for v in level]), tuple(lengths))


def _value(data_type: Any, value: Any) -> Any:
    """A non-struct column's value."""
    if value is None:
        return None
    if _is_vector(data_type):
        return _vector(value)
    if data_type.typeName() != "array":
        return _scalar(data_type, value)
    element, depth = _innermost(data_type)
    if depth == 1:
        return _array(_kind(element), [_plain(element, v) for v in value])
    return ragged(element, value, depth)


def _is_vector(data_type: Any) -> bool:
    return type(data_type).__name__ == "VectorUDT"


def _vector(value: Any) -> Any:
    """A dense ML vector's values (a sparse one written sparse is `sparse_vector`'s)."""
    return _float32(np.array(value.toArray(), dtype=np.float64))


def sparse_vector(value: Any) -> SparseValue | None:
    """What a vector column written with ``vector_layout="sparse"`` reads as: a SparseVector's
    stored entries, a DenseVector's entries whose bits are not zero (-0.0 and NaN kept)."""
    if value is None:
        return None
    if hasattr(value, "indices"):
        indices, values = list(value.indices), list(value.values)
    else:
        pairs = [
            (i, v)
            for i, v in enumerate(value.toArray().tolist())
            if _float32(np.float64(v)).view(np.uint32) != 0
        ]
        indices, values = [i for i, _ in pairs], [v for _, v in pairs]
    return SparseValue(
        np.array(indices, dtype=np.int64),
        _float32(np.array(values, dtype=np.float64)),
        len(value),
    )


def _leaves_of_array_of_structs(
    key: str, struct: Any, elements: list[Any] | None, out: dict[str, Any]
) -> None:
    """Each leaf of an array of structs: one value per element (a nested struct's leaves too),
    a list leaf as `RaggedValue`, or a 2-D array when its length is fixed (`LIST_LENGTH`)."""
    for i, field in enumerate(struct.fields):
        name, data_type = f"{key}/{field.name}", field.dataType
        column = None if elements is None else [e[i] for e in elements]
        if data_type.typeName() == "struct":
            _leaves_of_array_of_structs(name, data_type, column, out)
        elif column is None:
            out[name] = None
        elif data_type.typeName() != "array":
            out[name] = _array(_kind(data_type), [_plain(data_type, v) for v in column])
        else:
            element, depth = _innermost(data_type)
            length = field.metadata.get(LIST_LENGTH)
            if length is not None and depth == 1:
                flat = _array(_kind(element), [_plain(element, v) for e in column for v in e])
                out[name] = flat.reshape(len(column), length)
            else:
                out[name] = ragged(element, column, depth + 1)


def _column(key: str, field: Any, value: Any, out: dict[str, Any], sparse: bool) -> None:
    data_type = field.dataType
    if data_type.typeName() == "struct":
        for i, sub in enumerate(data_type.fields):
            _column(f"{key}/{sub.name}", sub, None if value is None else value[i], out, sparse)
    elif data_type.typeName() == "array" and data_type.elementType.typeName() == "struct":
        _leaves_of_array_of_structs(key, data_type.elementType, value, out)
    elif sparse and _is_vector(data_type):
        out[key] = sparse_vector(value)
    else:
        out[key] = _value(data_type, value)


def expected(schema: Any, row: Any, *, sparse_vectors: bool = False) -> dict[str, Any]:
    """The record a loader must give for `row` (a tuple in `schema`'s order, or a `Row`);
    `sparse_vectors`: the vector columns were written with ``vector_layout="sparse"``."""
    out: dict[str, Any] = {}
    for field, value in zip(schema.fields, row):
        _column(field.name, field, value, out, sparse_vectors)
    return out


# --- comparison -------------------------------------------------------------------------------


def bits(array: np.ndarray) -> bytes:
    """An array's bytes: float32 values compare by their bits (NaN payloads, -0.0)."""
    return np.ascontiguousarray(array).tobytes()


def assert_same(got: Any, want: Any, where: str = "") -> None:
    """`got` (what a loader gave) is `want`: the same types, shapes, dtypes, and bits."""
    import spark_tfrecord

    # `want` may itself be what a loader gave (two loaders compared).
    if isinstance(want, spark_tfrecord.Ragged) and not isinstance(want, RaggedValue):
        want = RaggedValue(want.values, tuple(want.row_lengths))
    elif isinstance(want, spark_tfrecord.Sparse) and not isinstance(want, SparseValue):
        want = SparseValue(want.indices, want.values, want.size)
    if want is None:
        assert got is None, f"{where}: {got!r} instead of None"
    elif isinstance(want, RaggedValue):
        assert isinstance(got, spark_tfrecord.Ragged), f"{where}: {type(got)} is not a Ragged"
        assert_same(got.values, want.values, f"{where}.values")
        assert isinstance(got.row_lengths, tuple), f"{where}: row_lengths {got.row_lengths!r}"
        assert len(got.row_lengths) == len(want.row_lengths), f"{where}: {got.row_lengths!r}"
        for level, (g, w) in enumerate(zip(got.row_lengths, want.row_lengths)):
            assert_same(g, w, f"{where}.row_lengths[{level}]")
    elif isinstance(want, SparseValue):
        assert isinstance(got, spark_tfrecord.Sparse), f"{where}: {type(got)} is not a Sparse"
        assert_same(got.indices, want.indices, f"{where}.indices")
        assert_same(got.values, want.values, f"{where}.values")
        assert type(got.size) is int and got.size == want.size, f"{where}: size {got.size!r}"
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: {type(got)} is not an ndarray"
        assert (got.dtype, got.shape) == (want.dtype, want.shape), (
            f"{where}: {got.dtype}{got.shape} instead of {want.dtype}{want.shape}"
        )
        assert bits(got) == bits(want), f"{where}: {got!r} instead of {want!r}"
    elif isinstance(want, np.generic):
        assert type(got) is type(want), f"{where}: {type(got)} instead of {type(want)}"
        assert bits(np.array(got)) == bits(np.array(want)), f"{where}: {got!r} != {want!r}"
    elif isinstance(want, list):
        assert type(got) is list, f"{where}: {type(got)} is not a list"
        assert len(got) == len(want), f"{where}: {got!r} instead of {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, (str, bytes)):
        assert type(got) is type(want) and got == want, f"{where}: {got!r} instead of {want!r}"
    elif isinstance(want, dict):
        assert isinstance(got, dict), f"{where}: {type(got)} is not a dict"
        assert sorted(got) == sorted(want), f"{where}: keys {sorted(got)} != {sorted(want)}"
        for key in want:
            assert_same(got[key], want[key], f"{where}[{key!r}]")
    else:
        raise AssertionError(f"{where}: no rule to compare {want!r}")


def record_id(record: dict[str, Any], key: str = "id") -> int:
    """A record's id (an ``np.int64`` scalar) as an int."""
    value = record[key]
    assert isinstance(value, np.int64), f"{key}: {type(value)}"
    return int(value)


def file_order_ids(spark: Any, path: str, key: str = "id") -> list[int]:
    """The ids of a folder's records in the documented order: its files as
    ``dataset_info(path).files`` lists them, each read alone by Spark, records in file order."""
    import spark_tfrecord

    ids: list[int] = []
    for file in spark_tfrecord.dataset_info(path).files:
        rows = spark_tfrecord.read(spark, file.path, schema=f"{key} long").collect()
        ids += [r[0] for r in rows]
    return ids
