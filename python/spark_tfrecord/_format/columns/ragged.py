"""A list of lists in an Example, as TFDS writes a ragged tensor (the jar's ``RaggedNest``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from spark_tfrecord import errors
from spark_tfrecord._format.columns import arrow
from spark_tfrecord._format.columns.elements import element_leaf
from spark_tfrecord._format.columns.feature_paths import Leaf
from spark_tfrecord._format.columns.features import (
    Feature,
    Issues,
    Plan,
    bad_units,
    column_of,
    counted,
    feature,
    kind_of,
    ranges,
    read_values,
    unit_rows,
)
from spark_tfrecord._format.columns.schema import innermost
from spark_tfrecord._format.entries.wire import INT64
from spark_tfrecord._format.frames.encode_errors import EncodeError, data_error


def ragged_plan(leaf: Leaf, i: int, d: int) -> Plan:
    """A depth-d list of lists: d-1 ``ragged_row_lengths_k`` then ``ragged_flat_values``."""
    t = innermost(leaf.data_type)
    kind = kind_of(t)

    def plan(batch: Any, n: int, issues: Issues) -> list[Feature | None]:
        if leaf.in_array_of_structs:
            level1, rows_offsets, present, _used, ok = element_leaf(batch, leaf, n, i, issues)
            if not ok:
                return [None] * d
            first = 1  # element_leaf checked the elements
        else:
            outer, present = column_of(batch, leaf, n)
            rows_offsets = arrow.list_offsets(outer)
            level1 = arrow.list_values(outer)
            first = 0
        # arrays[k]: the arrays at depth k+1; maps[k] maps the units of depth k to them, and
        # composed[k] the rows to them.
        arrays, maps, composed = [level1], [rows_offsets], [rows_offsets]
        for _ in range(d - 1):
            maps.append(arrow.list_offsets(arrays[-1]))
            arrays.append(arrow.list_values(arrays[-1]))
            composed.append(maps[-1][composed[-1]])
        ok = True  # the first null list or value of each row, in depth-first order
        for level in range(first, d):
            c = composed[level]
            used = ranges(c[:-1][present], np.diff(c)[present])
            for unit in bad_units(arrays[level], used).tolist():
                indices: list[int] = []
                row = unit  # up from the unit to its row, its index in each list on the way
                for m in reversed(maps[: level + 1]):
                    parent = int(unit_rows(m, np.array([row]))[0])
                    indices.insert(0, row - int(m[parent]))
                    row = parent
                what = "value" if level == d - 1 else "list"
                issues.add(row, i, tuple(indices), _ragged_null(leaf.column, what, indices, row))
                ok = False
        if not ok:
            return [None] * d
        # d-1 features of row lengths, then the values
        values: list[Any] = [*(np.diff(m) for m in maps[1:]), read_values(t, arrays[-1])]
        kinds = [INT64] * (d - 1) + [kind]
        return [
            Feature(present, feature(k, v, c, present), counted(c, present))
            for k, v, c in zip(kinds, values, composed)
        ]

    return plan


def _ragged_null(column: str, what: str, indices: list[int], row: int) -> Callable[[], EncodeError]:
    where = "".join(f"[{k}]" for k in indices)
    return lambda: data_error(
        errors.DATA_MISMATCH,
        column,
        f"Column '{column}' holds a null {what} at {where} of its lists of lists in a row: the "
        "ragged layout (ragged_flat_values and ragged_row_lengths) has no place for a null. "
        "Drop or fill the nulls first.",
        row,
    )
