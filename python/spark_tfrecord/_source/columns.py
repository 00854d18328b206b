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
from spark_tfrecord._format.columns.type_table import INT_MAX
from spark_tfrecord._format.columns.values import Ragged
from spark_tfrecord._format.entries.wire import BYTES, FLOAT, INT64, UNSET
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
    made.step_nulls = True  # a field's step of no value: a null, as Spark reads it
    for c in made.columns:
        if c.key in exact:
            c.conversion = exact[c.key]()
    for c in made.columns:
        if c.shape == "vector":
            made.use_reader(c.key, _vector_reader(c))
    return made


#: The kind each sparse part of a vector must have (``c/indices``, ``c/values``, ``c/size``).
SPARSE_KINDS = (INT64, FLOAT, INT64)


def float_values() -> Conversion:
    """A sparse vector's ``c/values``: floats only, exact as doubles."""
    return Conversion("double", "double", {FLOAT: lambda v: np.asarray(v, np.float64)})


def _vector_reader(c: Column) -> Callable[[list[Any]], Any]:
    """An ML vector column's reader giving Spark's vector (its ``VectorUDT`` row: type, size,
    indices, values; doubles exact) as the jar's ``SparseVectorReader`` reads it: sparse from
    ``c/indices``, ``c/values`` and ``c/size`` when the record has any of them (all three, of
    their kinds, and no dense ``c``), else dense from ``c``; the jar's checks and messages."""
    c.conversion = _double()
    dense_slot, *slots = c.slots
    names = c.features
    ints = Column(c.key, "int", "list", path=c.path, type_name=c.type_name)
    ints.conversion = conversion("bigint")
    floats = Column(c.key, "double", "list", path=c.path, type_name=c.type_name)
    floats.conversion = float_values()
    values = Layout._values
    kind_names = {INT64: "int64", FLOAT: "float", BYTES: "bytes"}

    def fail(what: str) -> ColumnError:
        return ColumnError.of(c, what)

    def vector(features: list[Any]) -> Any:
        dense = features[dense_slot]
        parts = [features[s] for s in slots]
        if all(p is None for p in parts):
            if dense is None:
                return None
            return {"type": 1, "size": None, "indices": None, "values": values(c, dense, names[0])}
        for p, kind, name in zip(parts, SPARSE_KINDS, names[1:]):
            if p is not None and p[0] not in (UNSET, kind) and len(p[1]):
                raise fail(
                    f"cannot be read from its {kind_names[p[0]]} feature '{name}': it must be "
                    f"{kind_names[kind]}"
                )
        if dense is not None:
            raise fail(
                f"has both the dense feature '{names[0]}' and the sparse features '{names[1]}', "
                f"'{names[2]}'"
            )
        for p, name in zip(parts, names[1:]):
            if p is None:
                what = "its size, " if name == names[3] else ""
                raise fail(
                    f"is read from the sparse features '{names[1]}', '{names[2]}' and "
                    f"'{names[3]}', but the record has no '{name}' ({what}written with "
                    "vectorLayout sparse)"
                )
        indices = values(ints, parts[0], names[1])
        entries = values(floats, parts[1], names[2])
        size = values(ints, parts[2], names[3])
        if len(size) != 1:
            raise fail(
                f"needs one value in '{names[3]}', the vector's size, but it holds {len(size)}"
            )
        n = int(size[0])
        if n < 0 or n > INT_MAX:
            raise fail(f"has the size {n} in '{names[3]}': a vector's size is from 0 to {INT_MAX}")
        if len(indices) != len(entries):
            raise fail(
                f"has {len(indices)} indices in '{names[1]}' but {len(entries)} values in "
                f"'{names[2]}': they must be as many"
            )
        unsorted = np.concatenate([[False], np.diff(indices) <= 0])
        wrong = np.flatnonzero(unsorted | (indices < 0) | (indices >= n))
        if len(wrong):  # the first index that fails, as the jar checks them in order
            at = int(wrong[0])
            if unsorted[at]:
                raise fail(
                    f"has the index {int(indices[at])} after {int(indices[at - 1])} in "
                    f"'{names[1]}': indices must be increasing"
                )
            raise fail(
                f"has the index {int(indices[at])} in '{names[1]}', outside the vector's size {n}"
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
