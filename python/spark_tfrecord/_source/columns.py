"""The record path's Arrow columns: decoded records (what
:meth:`spark_tfrecord._format.columns.layout.Layout.record` gives, keyed by feature path) as
Arrow arrays of exactly the read schema's Arrow types, from the schema's nodes
(:func:`spark_tfrecord._source.nodes.walk`, decided once per schema): each built in its
values' own kinds (int64, float32, string, binary), then cast to the column's Arrow type
(``pyspark.sql.pandas.types.to_arrow_schema``'s, which Spark 4.2+ checks exactly). A struct is
null when none of its leaves has a value, as the jar reads it; an array of structs is zipped
from its leaves' lists; an ML vector is ``VectorUDT``'s struct; doubles and decimals are exact
(:func:`spark_tfrecord._format.columns.record_values.exact_layout`'s values).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from spark_tfrecord._format.columns.record_values import zip_elements
from spark_tfrecord._format.columns.values import Ragged
from spark_tfrecord._source import nodes


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
        return zip_elements(
            [(f.name, _items(child, record)) for f, child in zip(node.fields, node.children)]
        )
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
