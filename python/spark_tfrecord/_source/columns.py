"""The record path's Arrow columns: decoded records (what
:meth:`spark_tfrecord._format.columns.layout.Layout.record` gives, keyed by feature path) as
Arrow arrays of exactly the read schema's Arrow types, from the schema's nodes
(:func:`spark_tfrecord._source.nodes.walk`, decided once per schema): each built in its
values' own kinds (int64, float32, string, binary), then cast to the column's Arrow type
(``pyspark.sql.pandas.types.to_arrow_schema``'s, which Spark 4.2+ checks exactly). A struct is
null when none of its leaves has a value, as the jar reads it; an array of structs is zipped
from its leaves' lists; an ML vector is ``VectorUDT``'s struct; doubles and decimals are exact
(:func:`exact_layout`).
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pyarrow as pa

from spark_tfrecord._format.columns.column_errors import ColumnError
from spark_tfrecord._format.columns.conversions import Conversion, conversion, java_float
from spark_tfrecord._format.columns.layout import Layout
from spark_tfrecord._format.columns.schema import Column, columns
from spark_tfrecord._format.columns.values import Ragged
from spark_tfrecord._format.entries.wire import FLOAT, INT64, UNSET
from spark_tfrecord._source import nodes

_DECIMAL = re.compile(r"decimal\((\d+),\s*(-?\d+)\)")


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


def _array(node: nodes.Node, records: Sequence[Any]) -> pa.Array:
    """Column ``node`` of the decoded ``records`` (a None record: a row of nulls)."""
    if isinstance(node, nodes.Struct):
        arrays = [_array(child, records) for child in node.children]
        null = None
        for a in arrays:
            missing = a.is_null()
            null = missing if null is None else pa.compute.and_(null, missing)
        return pa.StructArray.from_arrays(arrays, fields=node.fields, mask=null)
    if isinstance(node, nodes.Vector):
        return pa.array([None if r is None else r[node.key] for r in records], type=node.target)
    if isinstance(node, nodes.Elements):
        got = [None if r is None else _items(node.element, r) for r in records]
        return pa.array(got, type=node.values).cast(node.target)
    got = [None if r is None else r[node.key] for r in records]
    if node.ragged:
        got = [_plain(v) for v in got]
    return pa.array(got, type=node.values).cast(node.target)


def _items(node: nodes.Node, record: Any) -> list[Any] | None:
    """Of a record, the items of an array of structs' field ``node``, one per element: a
    leaf's list (a list leaf's lists), a struct's fields zipped (the jar's assembly,
    ``NestedRowAssembler``: an absent field is null in each element, a list field too); None
    when the record has none of its features."""
    if isinstance(node, nodes.Struct):
        parts = [(f.name, _items(child, record)) for f, child in zip(node.fields, node.children)]
        present = [items for _, items in parts if items is not None]
        if not present:
            return None
        return [
            {name: None if items is None else items[e] for name, items in parts}
            for e in range(len(present[0]))
        ]
    assert isinstance(node, nodes.Leaf)  # (nodes.walk puts no vector nor array in an element)
    value = record[node.key]
    if value is None:
        return None
    return list(_plain(value)) if not isinstance(value, Ragged) else value.to_list()


class ArrowColumns:
    """The record path's builders of a schema's data columns: their :func:`nodes.walk` nodes."""

    def __init__(self, columns: Sequence[nodes.Node]) -> None:
        import pyarrow.compute  # noqa: F401  (pa.compute, for the structs' null masks)

        self.nodes = list(columns)

    def arrays(self, records: Sequence[Any]) -> list[pa.Array]:
        """The columns of ``records`` (a None record: a row of nulls)."""
        return [_array(node, records) for node in self.nodes]
