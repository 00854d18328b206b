"""A batch's ML vectors as one Arrow struct array of ``VectorUDT``'s SQL type, as the jar reads
them: sparse where a record has any of ``c/indices``, ``c/values``, ``c/size``, else dense
(``c``), else null; None for a batch with a sparse vector the jar refuses or cannot gather.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from spark_tfrecord._format.columns.gathered import in_record_order
from spark_tfrecord._format.columns.type_table import INT_MAX
from spark_tfrecord._format.frames.packing import offsets

#: A batch's feature: its values (NumPy or Arrow), how many each record has, which records have it.
Part = tuple[Any, Any, Any]


def list_offsets(counts: Any) -> pa.Array:
    """The int32 offsets of Arrow lists of ``counts`` items."""
    return pa.array(offsets(counts, np.int32), pa.int32())


def null_mask(null: Any) -> pa.Array | None:
    """The Arrow mask of the boolean ndarray ``null``; None where no item is null."""
    return pa.array(null, pa.bool_()) if null.any() else None


def vector_array(
    dense: Part, sparse: Sequence[Part] | None, rows: int, target: pa.StructType
) -> pa.Array | None:
    """The vectors of ``rows`` records from ``dense`` and ``sparse`` (or None); None: refused."""
    values, counts, present = dense
    fields = [target.field(i) for i in range(target.num_fields)]
    if sparse is None:
        kinds = pa.array(np.ones(rows, np.int8), fields[0].type)
        lists = pa.ListArray.from_arrays(list_offsets(counts), values).cast(fields[3].type)
        made = [kinds, pa.nulls(rows, fields[1].type), pa.nulls(rows, fields[2].type), lists]
        return pa.StructArray.from_arrays(made, fields=fields, mask=null_mask(~present))
    held = _sparse(present, *sparse)
    if held is None:
        return None
    where, n = held
    index_values, index_counts, _ = sparse[0]
    entry_values, entry_counts, _ = sparse[1]
    # (a record has a dense vector or a sparse one: _sparse refuses both)
    merged = in_record_order(values, counts, entry_values, entry_counts)
    lists = pa.ListArray.from_arrays(
        list_offsets(counts + entry_counts), pa.array(merged, pa.float64())
    )
    dense_only = pa.array(~where, pa.bool_())
    made = [
        pa.array(np.where(where, 0, 1).astype(np.int8), fields[0].type),
        pa.array(n.astype(np.int32), fields[1].type, mask=~where),
        pa.ListArray.from_arrays(
            list_offsets(index_counts),
            pa.array(index_values.astype(np.int32), pa.int32()),
            mask=dense_only,
        ).cast(fields[2].type),
        lists.cast(fields[3].type),
    ]
    return pa.StructArray.from_arrays(made, fields=fields, mask=null_mask(~(present | where)))


def _sparse(present: Any, indices: Part, entries: Part, sizes: Part) -> tuple[Any, Any] | None:
    """Which records hold a sparse vector and its size (0 elsewhere); None: one fails the checks."""
    index_values, index_counts, index_present = indices
    _, entry_counts, entry_present = entries
    size_values, size_counts, size_present = sizes
    where = index_present | entry_present | size_present
    if (present & where).any():
        return None
    if not (index_present[where].all() and entry_present[where].all()):
        return None
    if (size_counts[where] != 1).any() or not np.array_equal(index_counts, entry_counts):
        return None
    first = offsets(size_counts)[:-1]
    n = np.zeros(len(where), np.int64)
    n[where] = np.asarray(size_values, np.int64)[first[where]]
    if len(n) and (int(n.min()) < 0 or int(n.max()) > INT_MAX):
        return None
    if len(index_values):
        owner = np.repeat(n, index_counts)
        if (index_values < 0).any() or (index_values >= owner).any():
            return None
        starts = np.zeros(len(index_values), np.bool_)
        starts[offsets(index_counts)[:-1][index_counts > 0]] = True
        if ((np.diff(index_values) <= 0) & ~starts[1:]).any():
            return None
    return where, n
