"""Spark ML vectors: one dense ``float_list``, or ``tf.io.SparseFeature``'s three features."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from spark_tfrecord._format.columns import arrow
from spark_tfrecord._format.columns.feature_paths import Leaf
from spark_tfrecord._format.columns.features import (
    Feature,
    Issues,
    Plan,
    column_of,
    feature,
    ranges,
)
from spark_tfrecord._format.entries.wire import FLOAT, INT64
from spark_tfrecord._format.frames.packing import Ints, Mask, offsets


class _Vectors(NamedTuple):
    dense: Mask
    size: Ints
    index_offsets: Ints
    indices: Ints
    value_offsets: Ints
    values: np.ndarray[Any, np.dtype[np.float64]]


def _vectors(a: Any) -> _Vectors:
    """VectorUDT's storage (type: 0 sparse, 1 dense; size; indices; values) as arrays."""
    kinds = arrow.fixed(arrow.child(a, 0), "<i1")
    size = arrow.fixed(arrow.child(a, 1), "<i4").astype(np.int64)
    indices_list, values_list = arrow.child(a, 2), arrow.child(a, 3)
    return _Vectors(
        kinds == 1,
        size,
        arrow.list_offsets(indices_list),
        arrow.fixed(arrow.list_values(indices_list), "<i4").astype(np.int64),
        arrow.list_offsets(values_list),
        arrow.fixed(arrow.list_values(values_list), "<f8"),
    )


def dense_vector_plan(leaf: Leaf) -> Plan:
    """A vector as one dense ``float_list`` of its size (a sparse one's zeros written)."""

    def plan(batch: Any, n: int, issues: Issues) -> list[Feature | None]:
        a, present = column_of(batch, leaf, n)
        v = _vectors(a)
        stored = np.diff(v.value_offsets)
        count = np.maximum(np.where(present, np.where(v.dense, stored, v.size), 0), 0)
        out_offsets = offsets(count)
        out = np.zeros(int(out_offsets[-1]), np.float64)
        dense = present & v.dense
        src = ranges(v.value_offsets[:-1][dense], stored[dense])
        out[ranges(out_offsets[:-1][dense], stored[dense])] = v.values[src]
        sparse = present & ~v.dense
        nnz = np.diff(v.index_offsets)
        rows = np.repeat(np.flatnonzero(sparse), nnz[sparse])
        at = ranges(v.index_offsets[:-1][sparse], nnz[sparse])
        taken = ranges(v.value_offsets[:-1][sparse], nnz[sparse])
        index = v.indices[at]
        inside = (index >= 0) & (index < v.size[rows])
        out[out_offsets[rows[inside]] + index[inside]] = v.values[taken[inside]]
        with np.errstate(over="ignore", invalid="ignore"):
            floats = out.astype(np.float32)
        return [Feature(present, feature(FLOAT, floats, out_offsets, present), count)]

    return plan


def sparse_vector_plan(leaf: Leaf, i: int) -> Plan:
    """A vector as ``tf.io.SparseFeature`` reads it (a dense one's non-zeros by bits: -0.0 kept)."""

    def plan(batch: Any, n: int, issues: Issues) -> list[Feature | None]:
        a, present = column_of(batch, leaf, n)
        v = _vectors(a)
        stored = np.diff(v.value_offsets)
        entries = np.where(present, stored, 0)
        rows = np.repeat(np.arange(n), entries)
        at = ranges(v.value_offsets[:-1], entries)
        position = at - np.repeat(v.value_offsets[:-1], entries)
        values = v.values[at]
        dense = v.dense[rows]
        keep = ~dense | (values.view(np.int64) != 0)
        index_at = np.repeat(v.index_offsets[:-1], entries) + position
        index = np.where(
            dense, position, v.indices[np.where(dense, 0, index_at)] if len(v.indices) else 0
        )
        counts = np.bincount(rows[keep], minlength=n).astype(np.int64)
        unit_offsets = offsets(counts)
        with np.errstate(over="ignore", invalid="ignore"):
            floats = values[keep].astype(np.float32)
        size = np.where(v.dense, stored, v.size)
        units = np.arange(n + 1, dtype=np.int64)
        indices = feature(INT64, index[keep].astype(np.int64), unit_offsets, present)
        return [
            Feature(present, indices, counts),
            Feature(present, feature(FLOAT, floats, unit_offsets, present), counts),
            Feature(present, feature(INT64, size, units, present), present.astype(np.int64)),
        ]

    return plan
