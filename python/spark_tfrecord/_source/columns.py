"""The record path's Arrow columns: decoded records as arrays of the read schema's Arrow types.
A struct is null when none of its leaves has a value, as the jar reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from spark_tfrecord._format.columns.record_values import zip_elements
from spark_tfrecord._format.columns.values import Ragged
from spark_tfrecord._source import nodes


def _array(node: nodes.Node, records: Sequence[Any]) -> pa.Array:
    """Column ``node`` of the decoded ``records`` (a None record: a row of nulls)."""
    if isinstance(node, nodes.Struct):
        arrays = [_array(child, records) for child in node.children]
        null = None
        for a in arrays:
            missing = a.is_null()
            null = missing if null is None else pa.compute.and_(null, missing)
        return pa.StructArray.from_arrays(arrays, fields=node.fields, mask=null)
    if isinstance(node, nodes.Elements):
        got = [None if r is None else _items(node.element, r) for r in records]
        return pa.array(got, type=node.values).cast(node.target)
    got = [None if r is None else r[node.key] for r in records]
    if isinstance(node, nodes.Vector):
        return pa.array(got, type=node.target)
    if node.ragged:
        got = [v.to_list() if isinstance(v, Ragged) else v for v in got]
    return pa.array(got, type=node.values).cast(node.target)


def _items(node: nodes.Node, record: Any) -> list[Any] | None:
    """A record's items of array-of-structs field ``node``, zipped as the jar does; None: absent."""
    if isinstance(node, nodes.Struct):
        return zip_elements(
            [(f.name, _items(child, record)) for f, child in zip(node.fields, node.children)]
        )
    assert isinstance(node, nodes.Leaf)  # (nodes.walk puts no vector nor array in an element)
    value = record[node.key]
    if value is None:
        return None
    return value.to_list() if isinstance(value, Ragged) else list(value)


class ArrowColumns:
    """The record path's builders of a schema's data columns: their :func:`nodes.walk` nodes."""

    def __init__(self, columns: Sequence[nodes.Node]) -> None:
        import pyarrow.compute  # noqa: F401  (pa.compute, for the structs' null masks)

        self.nodes = list(columns)

    def arrays(self, records: Sequence[Any]) -> list[pa.Array]:
        """The columns of ``records`` (a None record: a row of nulls)."""
        return [_array(node, records) for node in self.nodes]
