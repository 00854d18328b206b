"""The jar-less source's read schema as nodes: what both read paths build each column from."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

import pyarrow as pa

from spark_tfrecord import errors
from spark_tfrecord._format.columns.conversions import DECIMAL, TIME
from spark_tfrecord._format.columns.schema import Column, depth, innermost, is_struct, is_vector

#: Each Spark leaf type (JSON name) the route reads, and the Arrow type of its decoded values.
VALUES = {
    **dict.fromkeys(
        ["long", "integer", "short", "byte", "boolean", "timestamp", "timestamp_ntz"], pa.int64()
    ),
    "date": pa.int32(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "binary": pa.binary(),
}


@dataclass
class Leaf:
    """A column (or struct field) of values: a scalar, a list, a list of lists."""

    #: Its feature's key (its path joined with the separator) in the decoded records.
    key: str
    #: The Spark type (JSON) inside its arrays, and their number (+1 in an array of structs).
    leaf: Any
    depth: int
    in_array: bool
    #: The Arrow types of its decoded values and of the column.
    values: pa.DataType
    target: pa.DataType
    #: The layout's column of its features; None where the layout has none of its key.
    column: Column | None

    @property
    def ragged(self) -> bool:
        """Whether its records' values are lists of lists (:class:`Ragged`)."""
        return self.depth - self.in_array > 1


@dataclass
class Vector:
    """An ML vector column: ``VectorUDT``'s struct."""

    key: str
    target: pa.DataType
    column: Column | None


@dataclass
class Struct:
    """A struct: its fields' nodes and Arrow fields."""

    children: list[Node]
    fields: list[pa.Field]


@dataclass
class Elements:
    """An array of structs: its element's node (leaves: an item per element) and Arrow types."""

    element: Node
    values: pa.DataType
    target: pa.DataType


Node = Union[Leaf, Vector, Struct, Elements]


def unsupported(column: str, type_text: str) -> errors.ArgumentError:
    """The error for a column type the jar reads and this route does not yet."""
    return errors.ArgumentError(
        errors.UNSUPPORTED_TYPE,
        f"Column '{column}' has type {type_text}, which the Python data source (no jar) does not "
        "read yet (maps, vectors in arrays): read it with the jar, or as another type",
        column=column,
    )


def _type_text(t: Any) -> str:
    return t if isinstance(t, str) else str(t.get("type"))


def leaf_values(t: Any, column: str) -> pa.DataType:
    """The Arrow type of the decoded values of Spark type ``t`` (JSON): a leaf's, or elements'."""
    if isinstance(t, str) and t in VALUES:
        return VALUES[t]
    if isinstance(t, str) and (TIME.fullmatch(t) or t.startswith("string collate ")):
        return pa.int64() if t.startswith("time") else pa.string()  # then the column's type
    if isinstance(t, dict) and t.get("type") == "struct":
        return pa.struct([pa.field(f["name"], leaf_values(f["type"], column)) for f in t["fields"]])
    found = DECIMAL.fullmatch(t) if isinstance(t, str) else None
    if found:
        return pa.decimal128(int(found.group(1)), int(found.group(2)))
    if isinstance(t, dict) and t.get("type") == "array":
        return pa.list_(leaf_values(t["elementType"], column))
    raise unsupported(column, _type_text(t))


def walk(
    fields: Sequence[Mapping[str, Any]],
    targets: Sequence[pa.Field],
    columns: Sequence[Column],
    separator: str,
) -> list[Node]:
    """The nodes of columns ``fields`` (JSON) into ``targets``, leaves matched to ``columns``."""
    leaves = iter(columns)
    return [
        _node(f, (f["name"],), t.type, leaves, separator, False) for f, t in zip(fields, targets)
    ]


def _node(
    f: Mapping[str, Any],
    names: tuple[str, ...],
    target: pa.DataType,
    leaves: Iterator[Column],
    separator: str,
    in_array: bool,
) -> Node:
    t = f["type"]
    key, path = separator.join(names), ".".join(names)
    if is_struct(t):
        children = [
            _node(child, (*names, child["name"]), target.field(i).type, leaves, separator, in_array)
            for i, child in enumerate(t["fields"])
        ]
        return Struct(children, [target.field(i) for i in range(target.num_fields)])
    if is_vector(t):
        return Vector(key, target, next(leaves, None))
    element = t.get("elementType") if isinstance(t, dict) else None
    if element is not None and is_struct(element):
        made = _node({"type": element}, names, target.value_type, leaves, separator, True)
        return Elements(made, pa.list_(leaf_values(element, path)), target)
    inner = innermost(t)
    if isinstance(inner, dict) and depth(t):
        raise unsupported(path, f"array<{_type_text(inner)}>")
    values = leaf_values(t, path)
    column = next(leaves, None)
    return Leaf(key, inner, depth(t) + in_array, in_array, values, target, column)
