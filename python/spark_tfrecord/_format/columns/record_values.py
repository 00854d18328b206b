"""A record's values as Spark reads them (exact doubles, decimals, vectors), pyarrow-free."""

from __future__ import annotations

import decimal
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Literal

import numpy as np

from spark_tfrecord import errors
from spark_tfrecord._format.columns.column_errors import ColumnError
from spark_tfrecord._format.columns.conversions import DECIMAL, Conversion, conversion, java_float
from spark_tfrecord._format.columns.layout import Layout
from spark_tfrecord._format.columns.schema import Column, columns, type_string
from spark_tfrecord._format.columns.type_table import FIXED_SIZE, INT_MAX
from spark_tfrecord._format.entries.wire import BYTES, FLOAT, INT64, UNSET

_FIXED_SIZE = frozenset(type_string(t) for t in FIXED_SIZE)


def _wide(values: Any) -> Any:
    return np.asarray(values, np.float64)


def _double() -> Conversion:
    """A double column's exact values (the loaders give float32): float64 of both kinds."""
    return Conversion("double", "double", {FLOAT: _wide, INT64: _wide})


def _decimal(name: str) -> Conversion:
    """A decimal column's exact values as Python Decimals, checked by the loaders' conversion."""
    checked = conversion(name)
    found = DECIMAL.fullmatch(name)
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


def _text_bytes(name: str) -> Conversion:
    """A string column's values, those of a bytes feature kept as their bytes."""
    return Conversion(name, "str", {**conversion(name).by_kind, BYTES: list})


def exact_layout(
    schema: Mapping[str, Any],
    separator: str,
    record_type: Literal["Example", "SequenceExample"],
    *,
    text_bytes: bool = False,
) -> Layout:
    """The loaders' layout with Spark's exact values; ``text_bytes``: strings of bytes as bytes."""
    found = list(
        columns(
            schema,
            {},
            separator=separator,
            record_type=record_type,
            encoded_tensors=record_type == "Example",
        )
    )
    exact: dict[str, Callable[[], Conversion]] = {}
    for c in found:
        if c.shape == "uniform" and c.spark not in _FIXED_SIZE:
            # the jar's refusal (NestedRowAssembler.SliceCell), before any record is read
            raise errors.ArgumentError(
                errors.UNSUPPORTED_TYPE,
                f"Column '{c.path}' has elements of type {c.spark}, which a list split per "
                "element cannot hold: only numbers and booleans can.",
                column=c.path,
            )
        if text_bytes and c.spark.startswith("string"):
            exact[c.key] = partial(_text_bytes, c.spark)
        elif c.spark == "double" and c.shape != "vector":
            c.value, exact[c.key] = "double", _double
        elif DECIMAL.fullmatch(c.spark):
            c.value, exact[c.key] = "decimal", partial(_decimal, c.spark)
    made = Layout(found, record_type == "SequenceExample")
    made.step_nulls = True  # a field's step of no value: a null, as Spark reads it
    for c in made.columns:
        if c.key in exact:
            c.conversion = exact[c.key]()
        if c.shape == "vector":
            made.use_reader(c.key, _vector_reader(c))
    return made


#: The kind each sparse part of a vector must have (``c/indices``, ``c/values``, ``c/size``).
SPARSE_KINDS = (INT64, FLOAT, INT64)


def float_values() -> Conversion:
    """A sparse vector's ``c/values``: floats only, exact as doubles."""
    return Conversion("double", "double", {FLOAT: _wide})


def _vector_reader(c: Column) -> Callable[[list[Any]], Any]:
    """An ML vector column's reader of ``VectorUDT`` rows, as the jar's ``SparseVectorReader``."""
    c.conversion = _double()
    dense_slot, *slots = c.slots
    names = c.features
    ints = Column(c.key, "int", "list", path=c.path, type_name=c.type_name)
    ints.conversion = conversion("bigint")
    floats = Column(c.key, "double", "list", path=c.path, type_name=c.type_name)
    floats.conversion = float_values()
    values = Layout.feature_values
    kind_names = {INT64: "int64", FLOAT: "float", BYTES: "bytes"}
    fail = partial(ColumnError.of, c)

    def vector(features: list[Any]) -> Any:
        dense = features[dense_slot]
        parts = [features[s] for s in slots]
        if all(p is None for p in parts):
            if dense is None:
                return None
            return {"type": 1, "size": None, "indices": None, "values": values(c, dense)}
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
        indices = values(ints, parts[0])
        entries = values(floats, parts[1])
        size = values(ints, parts[2])
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


def zip_elements(fields: Sequence[tuple[str, Sequence[Any] | None]]) -> list[Any] | None:
    """An array of structs' elements from its fields' lists (None: nulls); None if none has one."""
    present = [items for _, items in fields if items is not None]
    if not present:
        return None
    return [
        {name: None if items is None else items[i] for name, items in fields}
        for i in range(len(present[0]))
    ]
