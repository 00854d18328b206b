"""Decoded records as Arrow columns of exactly the read schema's Arrow types.

:class:`ArrowColumns` is made once per schema (decide once, never per record): for each column
of the schema, a builder from the records' values (what
:meth:`spark_tfrecord._format.columns.layout.Layout.record` gives, keyed by feature path) to an
Arrow array, built in the values' own kinds (int64, float32, string, binary) then cast to the
column's Arrow type (``pyspark.sql.pandas.types.to_arrow_schema``'s, which Spark 4.2+ checks
exactly). A struct is null when none of its leaves has a value, as the jar reads it; an array of
structs is zipped from its leaves' lists; an ML vector is ``VectorUDT``'s struct; doubles and
decimals are exact (:func:`exact_layout`).
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pyarrow as pa

from spark_tfrecord import errors
from spark_tfrecord._format.columns.column_errors import ColumnError
from spark_tfrecord._format.columns.conversions import Conversion, conversion, java_float
from spark_tfrecord._format.columns.layout import Layout
from spark_tfrecord._format.columns.schema import Column, columns, is_vector
from spark_tfrecord._format.columns.values import Ragged
from spark_tfrecord._format.entries.wire import FLOAT, INT64, UNSET

#: Each Spark leaf type (JSON name) the route reads, and the Arrow type of its decoded values.
VALUES = {
    "long": pa.int64(),
    "integer": pa.int64(),
    "short": pa.int64(),
    "byte": pa.int64(),
    "boolean": pa.int64(),
    "timestamp": pa.int64(),
    "timestamp_ntz": pa.int64(),
    "date": pa.int32(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "binary": pa.binary(),
}

Build = Callable[[Sequence[Any]], pa.Array]


def unsupported(column: str, type_text: str) -> errors.ArgumentError:
    """The error for a column type the jar reads and this route does not yet."""
    return errors.ArgumentError(
        errors.UNSUPPORTED_TYPE,
        f"Column '{column}' has type {type_text}, which the Python data source (no jar) does not "
        "read yet (maps, encoded tensors, vectors in arrays): read it with the jar, or as "
        "another type",
        column=column,
    )


def _type_text(t: Any) -> str:
    return t if isinstance(t, str) else str(t.get("type"))


_DECIMAL = re.compile(r"decimal\((\d+),\s*(-?\d+)\)")
#: Spark 4.1's ``TIME(p)``: int64 nanoseconds since midnight, cast to Arrow's time64[ns].
_TIME = re.compile(r"time\(\d\)")


def _leaf_values(t: Any, column: str) -> pa.DataType:
    """The Arrow type of the decoded values of a leaf of Spark type ``t`` (JSON), or of an
    array of structs' elements."""
    if isinstance(t, str) and t in VALUES:
        return VALUES[t]
    if isinstance(t, str) and (_TIME.fullmatch(t) or t.startswith("string collate ")):
        return pa.int64() if t.startswith("time") else pa.string()  # then the column's type
    if isinstance(t, dict) and t.get("type") == "struct":
        return pa.struct(
            [pa.field(f["name"], _leaf_values(f["type"], column)) for f in t["fields"]]
        )
    found = _DECIMAL.fullmatch(t) if isinstance(t, str) else None
    if found:
        return pa.decimal128(int(found.group(1)), int(found.group(2)))
    if isinstance(t, dict) and t.get("type") == "array":
        return pa.list_(_leaf_values(t["elementType"], column))
    raise unsupported(column, _type_text(t))


def _double() -> Conversion:
    """A double column's exact values (the loaders give float32): float64 of both kinds."""

    def wide(values: Any) -> Any:
        return np.asarray(values, np.float64)

    return Conversion("double", "double", {FLOAT: wide, INT64: wide})


def _decimal(name: str) -> Conversion:
    """A decimal column's exact values (the loaders give float32): Python Decimals, refused
    and rounded by the loaders' conversion (the jar's checks, the jar's messages)."""
    checked = conversion(name)
    found = _DECIMAL.fullmatch(name)
    assert found is not None
    quantum = decimal.Decimal(1).scaleb(-int(found.group(2)))
    context = decimal.Context(prec=1000, rounding=decimal.ROUND_HALF_UP)

    def from_int64(values: Any) -> Any:
        checked.by_kind[INT64](values)  # type: ignore[misc]
        return [decimal.Decimal(v).quantize(quantum, context=context) for v in values.tolist()]

    def from_float(values: Any) -> Any:
        checked.by_kind[FLOAT](values)  # type: ignore[misc]
        return [decimal.Decimal(java_float(v)).quantize(quantum, context=context) for v in values]

    return Conversion(name, "decimal", {INT64: from_int64, FLOAT: from_float})


def exact_layout(
    schema: Mapping[str, Any],
    separator: str,
    record_type: Literal["Example", "SequenceExample"],
) -> Layout:
    """The loaders' layout of the schema's columns, but that doubles and decimals give Spark's
    exact values (float64, Decimal), which the loaders round to float32."""
    found = list(columns(schema, {}, separator=separator, record_type=record_type))
    exact: dict[str, Callable[[], Conversion]] = {}
    for c in found:
        if c.spark == "double" and c.shape != "vector":
            c.value, exact[c.key] = "double", _double
        elif _DECIMAL.fullmatch(c.spark):
            name = c.spark
            c.value, exact[c.key] = "decimal", lambda name=name: _decimal(name)  # type: ignore[misc]
    made = Layout(found, record_type == "SequenceExample")
    for c in made.columns:
        if c.key in exact:
            c.conversion = exact[c.key]()
    for c in made.columns:
        if c.shape == "vector":
            made.use_reader(c.key, _vector_reader(c))
    return made


def _vector_reader(c: Column) -> Callable[[list[Any]], Any]:
    """An ML vector column's reader giving Spark's vector (its ``VectorUDT`` row: type, size,
    indices, values; doubles exact): sparse from ``c/indices``, ``c/values``, ``c/size`` when
    the record has them, else dense from ``c``; the loaders' checks and messages."""
    c.conversion = _double()
    dense_slot, index_slot, value_slot, size_slot = c.slots
    names = c.features
    ints = Column(c.key, "int", "list", path=c.path, type_name=c.type_name)
    ints.conversion = conversion("bigint")
    values = Layout._values

    def vector(features: list[Any]) -> Any:
        dense = features[dense_slot]
        if features[index_slot] is None and features[value_slot] is None:
            if dense is None:
                return None
            return {"type": 1, "size": None, "indices": None, "values": values(c, dense, names[0])}
        indices = values(ints, features[index_slot] or (UNSET, None), names[1])
        entries = values(c, features[value_slot] or (UNSET, None), names[2])
        size = values(ints, features[size_slot] or (UNSET, None), names[3])
        if len(size) != 1:
            raise ColumnError(c.path, f"feature {names[3]!r} must hold the vector's size")
        n = int(size[0])
        if len(indices) != len(entries):
            raise ColumnError(
                c.path, f"{len(indices)} indices but {len(entries)} values in {names[1]!r}"
            )
        if len(indices) and (
            int(indices.min()) < 0 or int(indices.max()) >= n or bool(np.any(np.diff(indices) <= 0))
        ):
            raise ColumnError(
                c.path, f"indices in {names[1]!r} must increase and be below the size {n}"
            )
        return {"type": 0, "size": n, "indices": indices, "values": entries}

    return vector


def _plain(value: Any) -> Any:
    """A record's value as pyarrow takes it: a Ragged as its nested lists."""
    if isinstance(value, Ragged):
        return value.to_list()
    return value


def _leaf(key: str, t: Any, target: pa.DataType, column: str) -> Build:
    values_type = _leaf_values(t, column)
    ragged = isinstance(t, dict) and isinstance(t["elementType"], dict)

    def build(records: Sequence[Any]) -> pa.Array:
        got = [None if r is None else r[key] for r in records]
        if ragged:
            got = [_plain(v) for v in got]
        return pa.array(got, type=values_type).cast(target)

    return build


def _vector(key: str, target: pa.DataType) -> Build:
    """An ML vector column: its ``VectorUDT`` rows as the struct Arrow gives its SQL type."""

    def build(records: Sequence[Any]) -> pa.Array:
        return pa.array([None if r is None else r[key] for r in records], type=target)

    return build


def _struct(
    fields: Sequence[Mapping[str, Any]], prefix: str, target: pa.DataType, separator: str, path: str
) -> Build:
    children = [
        _builder(f, prefix + separator + f["name"], target.field(i).type, separator, path)
        for i, f in enumerate(fields)
    ]
    arrow_fields = [target.field(i) for i in range(target.num_fields)]

    def build(records: Sequence[Any]) -> pa.Array:
        arrays = [b(records) for b in children]
        null = None
        for a in arrays:
            missing = a.is_null()
            null = missing if null is None else pa.compute.and_(null, missing)
        return pa.StructArray.from_arrays(arrays, fields=arrow_fields, mask=null)

    return build


def _builder(
    field: Mapping[str, Any], key: str, target: pa.DataType, separator: str, parent: str
) -> Build:
    t = field["type"]
    path = f"{parent}.{field['name']}" if parent else field["name"]
    if isinstance(t, dict) and t.get("type") == "struct":
        return _struct(t["fields"], key, target, separator, path)
    if is_vector(t):
        return _vector(key, target)
    if isinstance(t, dict) and t.get("type") == "array":
        inner = t["elementType"]
        if isinstance(inner, dict) and inner.get("type") == "struct":
            return _struct_array(inner, key, target, separator, path)
        while isinstance(inner, dict) and inner.get("type") == "array":
            inner = inner["elementType"]
        if isinstance(inner, dict):
            raise unsupported(path, f"array<{_type_text(inner)}>")
    return _leaf(key, t, target, path)


def _elements(t: Any, key: str, separator: str) -> Callable[[Any], list[Any] | None]:
    """Of a record, the items of an array of structs' field of type ``t`` (keyed ``key``), one
    per element: a leaf's list (a list leaf's lists), a struct's fields zipped; None when the
    record has none of its features."""
    if isinstance(t, dict) and t.get("type") == "struct":
        parts = [
            (f["name"], _elements(f["type"], key + separator + f["name"], separator))
            for f in t["fields"]
        ]
        return lambda record: _zip([(name, part(record)) for name, part in parts], t)

    def leaf(record: Any) -> list[Any] | None:
        value = record[key]
        if value is None:
            return None
        return list(_plain(value)) if not isinstance(value, Ragged) else value.to_list()

    return leaf


def _zip(parts: list[tuple[str, list[Any] | None]], t: Any) -> list[Any] | None:
    """The elements from their fields' items (the jar's assembly, ``NestedRowAssembler``: an
    absent field is null in each element, a list field too)."""
    present = [items for _, items in parts if items is not None]
    if not present:
        return None
    size = len(present[0])
    return [
        {name: None if items is None else items[e] for name, items in parts} for e in range(size)
    ]


def _struct_array(element: Any, key: str, target: pa.DataType, separator: str, path: str) -> Build:
    """An array of structs, from its leaves' lists (one item per element)."""
    values_type = pa.list_(_leaf_values(element, path))
    items = _elements(element, key, separator)

    def build(records: Sequence[Any]) -> pa.Array:
        got = [None if r is None else items(r) for r in records]
        return pa.array(got, type=values_type).cast(target)

    return build


class ArrowColumns:
    """The builders of a schema's data columns (JSON ``fields``) into ``targets``, their Arrow
    fields; struct leaves are keyed by their path joined with ``separator``."""

    def __init__(
        self, fields: Sequence[Mapping[str, Any]], targets: Sequence[pa.Field], separator: str
    ) -> None:
        import pyarrow.compute  # noqa: F401  (pa.compute, for the structs' null masks)

        self.builders = [
            _builder(f, f["name"], target.type, separator, "") for f, target in zip(fields, targets)
        ]

    def arrays(self, records: Sequence[Any]) -> list[pa.Array]:
        """The columns of ``records`` (a None record: a row of nulls)."""
        return [b(records) for b in self.builders]
