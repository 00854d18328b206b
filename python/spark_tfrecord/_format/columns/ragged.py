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
from spark_tfrecord._format.frames.packing import Ints, Mask


def ragged_plan(leaf: Leaf, i: int, d: int) -> Plan:
    """A depth-d list of lists: d-1 ``ragged_row_lengths_k`` then ``ragged_flat_values``."""
    kind = kind_of(innermost(leaf.data_type))
    t = innermost(leaf.data_type)

    def plan(batch: Any, n: int, issues: Issues) -> list[Feature | None]:
        if leaf.in_array_of_structs:
            level1, rows_offsets, present, _used, ok = element_leaf(batch, leaf, n, i, issues)
            if not ok:
                return [None] * d
            check_first = False
        else:
            outer, present = column_of(batch, leaf, n)
            rows_offsets = arrow.list_offsets(outer)
            level1 = arrow.list_values(outer)
            check_first = True
        # levels[k]: the arrays at depth k+1; offsets[k] maps the units of depth k to them.
        arrays = [level1]
        maps = [rows_offsets]
        for _ in range(d - 1):
            maps.append(arrow.list_offsets(arrays[-1]))
            arrays.append(arrow.list_values(arrays[-1]))
        composed = [rows_offsets]
        for m in maps[1:]:
            composed.append(m[composed[-1]])
        if not _check_nest(leaf, i, arrays, maps, composed, present, check_first, issues):
            return [None] * d
        out: list[Feature | None] = []
        for level in range(d - 1):
            lengths = np.diff(maps[level + 1])
            encoded = feature(INT64, lengths, composed[level], present)
            out.append(Feature(present, encoded, counted(composed[level], present)))
        flat = read_values(t, arrays[-1])
        encoded = feature(kind, flat, composed[-1], present)
        out.append(Feature(present, encoded, counted(composed[-1], present)))
        return out

    return plan


def _check_nest(
    leaf: Leaf,
    i: int,
    arrays: list[Any],
    maps: list[Ints],
    composed: list[Ints],
    present: Mask,
    check_first: bool,
    issues: Issues,
) -> bool:
    """Adds the first null list or value of each row in depth-first order; whether none."""
    ok = True
    d = len(arrays) - 1  # arrays[d] holds the values
    for level, a in enumerate(arrays):
        if level == 0 and not check_first:
            continue
        c = composed[level]
        used = ranges(c[:-1][present], np.diff(c)[present])
        for unit in bad_units(a, used).tolist():
            path = [unit]
            for m in reversed(maps[: level + 1]):
                path.append(int(unit_rows(m, np.array([path[-1]]))[0]))
            row = path[-1]
            indices = []
            for k in range(level + 1):
                parent, child = path[level + 1 - k], path[level - k]
                indices.append(child - int(maps[k][parent]))
            what = "value" if level == d else "list"
            issues.add(row, i, tuple(indices), _ragged_null(leaf.column, what, indices, row))
            ok = False
    return ok


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
