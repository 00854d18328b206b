"""The features of array-of-structs leaves: per element a value or a step, or fixed-length lists."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from spark_tfrecord import errors
from spark_tfrecord._format.columns import arrow
from spark_tfrecord._format.columns.feature_paths import Leaf
from spark_tfrecord._format.columns.features import (
    Feature,
    Issues,
    Plan,
    bad_units,
    column_of,
    counted,
    feature,
    feature_list,
    kind_of,
    null_element,
    ranges,
    read_values,
    unit_rows,
)
from spark_tfrecord._format.columns.schema import innermost, is_array
from spark_tfrecord._format.frames.encode_errors import EncodeError, data_error
from spark_tfrecord._format.frames.packing import Ints, Mask


def element_leaf(
    batch: Any, leaf: Leaf, n: int, i: int, issues: Issues
) -> tuple[Any, Ints, Mask, Ints, bool]:
    """An array of structs' leaf: values per element, element offsets, present rows, used, ok."""
    a, present = column_of(batch, leaf, n)
    element_offsets = arrow.list_offsets(a)
    used = ranges(element_offsets[:-1][present], np.diff(element_offsets)[present])
    elements = arrow.list_values(a)
    null_element = arrow.valid(elements)
    reached = np.ones(len(elements), np.bool_) if null_element is None else null_element.copy()
    s = elements
    for ordinal in leaf.in_element:
        s = arrow.child(s, ordinal)
        reached &= arrow.present(s, len(elements))
    values = arrow.child(s, leaf.element_ordinal)
    reached &= arrow.present(values, len(elements))
    bad = used[~reached[used]] if len(used) else used
    if len(bad):
        # The first bad element of each row (the jar stops at the first).
        rows = unit_rows(element_offsets, bad)
        first = np.unique(rows, return_index=True)[1]
        for element, row in zip(bad[first].tolist(), rows[first].tolist()):
            index = element - int(element_offsets[row])
            is_null = null_element is not None and not null_element[element]
            what = ("is null" if is_null else "holds a null for this field") + _NO_NULL
            issues.add(row, i, (index, 0), _element_error(leaf.column, index, what, row))
    return values, element_offsets, present, used, len(bad) == 0


_NO_NULL = (
    ". An array of structs is written as one feature per field holding every element's value, "
    "which has no place for a null. Drop or fill the nulls first."
)


def _element_error(column: str, index: int, what: str, row: int) -> Callable[[], EncodeError]:
    return lambda: data_error(
        errors.DATA_MISMATCH,
        column,
        f"Column '{column}': element {index} of its array of structs {what}",
        row,
    )


def element_plan(leaf: Leaf, i: int, sequence: bool) -> Plan:
    """A non-ragged array-of-structs leaf: a value per element, fixed-length lists, or steps."""
    t = leaf.leaf_type
    list_leaf = is_array(t)
    kind = kind_of(innermost(t))
    k = leaf.list_length if leaf.concatenated else 0

    def plan(batch: Any, n: int, issues: Issues) -> list[Feature | None]:
        values, element_offsets, present, used, ok = element_leaf(batch, leaf, n, i, issues)
        if not list_leaf:
            if not ok:
                return [None]
            flat = read_values(t, values)
            if sequence:
                units = np.arange(len(values) + 1, dtype=np.int64)
                step_present = np.zeros(len(values), np.bool_)
                step_present[used] = True
                steps = feature(kind, flat, units, step_present)
                lists = feature_list(steps, element_offsets, present)
                return [Feature(present, lists, np.ones(len(used), np.int64))]
            encoded = feature(kind, flat, element_offsets, present)
            return [Feature(present, encoded, counted(element_offsets, present))]
        value_offsets = arrow.list_offsets(values)
        inner = arrow.list_values(values)
        element_ok = np.zeros(len(values), np.bool_)
        element_ok[used] = True
        element_ok &= arrow.present(values, len(values))
        counts = np.diff(value_offsets)
        if k:
            for element in used[counts[used] != k].tolist() if len(used) else []:
                if not element_ok[element]:
                    continue
                row = int(unit_rows(element_offsets, np.array([element]))[0])
                index = element - int(element_offsets[row])
                what = (
                    f"holds {int(counts[element])} values, but this field holds exactly {k} per "
                    "element (tfrecord.listLength): the lists of every element are stored as one."
                )
                issues.add(row, i, (index, 1), _element_error(leaf.column, index, what, row))
                ok = False
        checked = element_ok & (counts == k) if k else element_ok
        values_used = ranges(value_offsets[:-1][checked], counts[checked])
        for value in bad_units(inner, values_used).tolist():
            element = int(unit_rows(value_offsets, np.array([value]))[0])
            row = int(unit_rows(element_offsets, np.array([element]))[0])
            index = element - int(element_offsets[row])
            j = value - int(value_offsets[element])
            if k:
                what = f"holds a null at index {j}, and a list has no place for a null."
                issues.add(row, i, (index, 2, j), _element_error(leaf.column, index, what, row))
            else:
                issues.add(row, i, (index, 2, j), null_element(leaf.column, j, row))
            ok = False
        if not ok:
            return [None]
        flat = read_values(innermost(t), inner)
        if sequence:
            steps = feature(kind, flat, value_offsets, element_ok)
            lists = feature_list(steps, element_offsets, present)
            return [Feature(present, lists, counts[used])]
        # Concatenated: each row's values are its elements' lists, one after the other.
        rows = value_offsets[element_offsets]
        return [Feature(present, feature(kind, flat, rows, present), counted(rows, present))]

    return plan
