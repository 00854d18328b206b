"""``Feature`` and ``FeatureList`` messages for whole columns, and plans of plain columns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Union

import numpy as np

from spark_tfrecord import errors
from spark_tfrecord._format.columns import arrow
from spark_tfrecord._format.columns.feature_paths import Leaf
from spark_tfrecord._format.columns.schema import innermost
from spark_tfrecord._format.columns.type_table import Values, entry
from spark_tfrecord._format.entries.wire import BYTES, FLOAT
from spark_tfrecord._format.frames.encode_errors import EncodeError, data_error
from spark_tfrecord._format.frames.packing import (
    Ints,
    Mask,
    Parts,
    Ragged,
    field,
    group,
    materialize,
    offsets,
    single,
    varints,
)


class Issues:
    """A batch's errors: raises the jar's first: by row, then feature, then check order."""

    def __init__(self) -> None:
        self.first: tuple[tuple[int, int, tuple[int, ...]], Callable[[], EncodeError]] | None = None

    def add(
        self, row: int, leaf: int, order: tuple[int, ...], make: Callable[[], EncodeError]
    ) -> None:
        key = (row, leaf, order)
        if self.first is None or key < self.first[0]:
            self.first = (key, make)

    def raise_first(self) -> None:
        if self.first is not None:
            raise self.first[1]()


class Feature(NamedTuple):
    """One feature for a batch's rows: which have it, the messages, values per row (or per step)."""

    present: Mask
    value: Parts
    counts: Ints


def counted(unit_offsets: Ints, present: Mask) -> Ints:
    """The number of values of each row: those from ``unit_offsets[r]`` to ``[r+1]``."""
    return np.where(present, np.diff(unit_offsets), 0)


#: A plan encodes its features (a few consecutive leaves) for a batch: (batch, n, issues).
Plan = Callable[[Any, int, Issues], list[Union[Feature, None]]]


def column_of(batch: Any, leaf: Leaf, n: int) -> tuple[Any, Mask]:
    """The leaf's array (or its array of structs'), and which rows reach a non-null one."""
    present = np.ones(n, np.bool_)
    parent: Any = None
    for ordinal in leaf.structs:
        parent = batch.column(ordinal) if parent is None else arrow.child(parent, ordinal)
        present &= arrow.present(parent, n)
    a = batch.column(leaf.ordinal) if parent is None else arrow.child(parent, leaf.ordinal)
    present &= arrow.present(a, n)
    return a, present


def read_values(t: Any, a: Any) -> Values:
    e = entry(t)
    assert e is not None
    return e.read(a)


def kind_of(t: Any) -> int:
    e = entry(t)
    assert e is not None
    return e.kind


def ranges(starts: Ints, counts: Ints) -> Ints:
    """The indices ``starts[i] .. starts[i] + counts[i]``, for every i, laid end to end."""
    total = int(counts.sum())
    before = offsets(counts)[:-1]
    spans: Ints = np.repeat(starts - before, counts)
    return spans + np.arange(total, dtype=np.int64)


def unit_rows(unit_offsets: Ints, units: Ints) -> Ints:
    """The row (or parent unit) each of ``units`` is in."""
    return np.searchsorted(unit_offsets, units, side="right") - 1


def bad_units(a: Any, used: Ints) -> Ints:
    """Which of the units ``used`` of array ``a`` are null."""
    ok = arrow.valid(a)
    if ok is None or len(used) == 0:
        return np.zeros(0, np.int64)
    return used[~ok[used]]


# --- features ---------------------------------------------------------------------------------


def feature(kind: int, values: Values, unit_offsets: Ints, present: Mask) -> Parts:
    """``Feature`` messages: unit u (a row or a step) holds ``unit_offsets[u]`` to ``[u+1]``."""
    lo, hi = unit_offsets[:-1], unit_offsets[1:]
    count = np.where(present, hi - lo, 0)
    if kind == BYTES:
        buf, off = values
        lengths = np.diff(off)
        everyone = np.ones(len(lengths), np.bool_)
        each = field(b"\x0a", single(Ragged(buf, off[:-1], lengths)), everyone)
        if len(lo) == len(lengths) and np.array_equal(lo, np.arange(len(lo))):
            # One value per unit (a scalar column): its parts are the unit's, uncopied.
            masked = Parts(
                [
                    Ragged(p.buf, p.start, np.where(present, p.size, 0), p.stride)
                    for p in each.parts
                ],
                np.where(present, each.size, 0),
            )
            return field(b"\x0a", masked, present)
        content = group(materialize(each, len(lengths)), unit_offsets, present)
        return field(b"\x0a", single(content), present)
    if kind == FLOAT:
        floats = np.ascontiguousarray(values, "<f4").view(np.uint8)
        payload = Ragged(floats, 4 * lo, 4 * count)
        packed = field(b"\x0a", single(payload), present & (count > 0))
        return field(b"\x12", packed, present)
    numbers = varints(values, None)  # type: ignore[arg-type]
    payload = group(numbers, unit_offsets, present)
    packed = field(b"\x0a", single(payload), present & (payload.size > 0))
    return field(b"\x1a", packed, present)


def feature_list(steps: Parts, step_offsets: Ints, present: Mask) -> Parts:
    """``FeatureList`` messages of the ``steps``: row r's are ``step_offsets[r]`` to ``[r+1]``."""
    everyone = np.ones(len(steps.size), np.bool_)
    each = materialize(field(b"\x0a", steps, everyone), len(steps.size))
    return single(group(each, step_offsets, present))


def null_element(column: str, index: int, row: int) -> Callable[[], EncodeError]:
    return lambda: data_error(
        errors.DATA_MISMATCH,
        column,
        f"Column '{column}' holds an array with a null element at index {index}: TFRecord "
        "feature lists cannot hold nulls. Drop or fill them first (for example with "
        "filter(x -> x IS NOT NULL) or coalesce).",
        row,
    )


def scalar_plan(leaf: Leaf) -> Plan:
    t, kind = leaf.data_type, kind_of(leaf.data_type)

    def plan(batch: Any, n: int, issues: Issues) -> list[Feature | None]:
        a, present = column_of(batch, leaf, n)
        units = np.arange(n + 1, dtype=np.int64)
        values = feature(kind, read_values(t, a), units, present)
        return [Feature(present, values, present.astype(np.int64))]

    return plan


def _check_values(
    leaf: Leaf, i: int, values: Any, unit_offsets: Ints, present: Mask, issues: Issues, order: int
) -> bool:
    """Adds the first null value of each present unit's list; whether there was none."""
    used = ranges(unit_offsets[:-1][present], np.diff(unit_offsets)[present])
    bad = bad_units(values, used)
    if len(bad) == 0:
        return True
    rows = unit_rows(unit_offsets, bad)
    for unit, row in zip(bad.tolist(), rows.tolist()):
        index = unit - int(unit_offsets[row])
        issues.add(row, i, (order, index), null_element(leaf.column, index, row))
    return False


def list_plan(leaf: Leaf, i: int, fixed_length: int) -> Plan:
    t = leaf.data_type["elementType"]
    kind = kind_of(t)

    def plan(batch: Any, n: int, issues: Issues) -> list[Feature | None]:
        a, present = column_of(batch, leaf, n)
        off = arrow.list_offsets(a)
        ok = True
        if fixed_length:
            counts = np.diff(off)
            wrong = np.flatnonzero(present & (counts != fixed_length))
            for row in wrong[:1].tolist():
                issues.add(row, i, (0,), _wrong_length(leaf, int(counts[row]), fixed_length, row))
                ok = False
        values = arrow.list_values(a)
        ok = _check_values(leaf, i, values, off, present, issues, 1) and ok
        if not ok:
            return [None]
        encoded = feature(kind, read_values(t, values), off, present)
        return [Feature(present, encoded, counted(off, present))]

    return plan


def _wrong_length(leaf: Leaf, count: int, k: int, row: int) -> Callable[[], EncodeError]:
    return lambda: data_error(
        errors.DATA_MISMATCH,
        leaf.column,
        f"Column '{leaf.column}' holds an array of {count} values in a row, but its values have "
        f"a fixed shape of {k} (tfrecord.listLength).",
        row,
    )


def feature_list_plan(leaf: Leaf, i: int) -> Plan:
    """``array<array<T>>`` in a SequenceExample: a feature list, one step per inner array."""
    t = innermost(leaf.data_type)
    kind = kind_of(t)

    def plan(batch: Any, n: int, issues: Issues) -> list[Feature | None]:
        a, present = column_of(batch, leaf, n)
        step_offsets = arrow.list_offsets(a)
        steps = arrow.list_values(a)
        used = ranges(step_offsets[:-1][present], np.diff(step_offsets)[present])
        ok = True
        for step in bad_units(steps, used).tolist():
            row = int(unit_rows(step_offsets, np.array([step]))[0])
            index = step - int(step_offsets[row])
            issues.add(row, i, (index,), null_element(leaf.column, index, row))
            ok = False
        value_offsets = arrow.list_offsets(steps)
        values = arrow.list_values(steps)
        step_present = np.zeros(len(value_offsets) - 1, np.bool_)
        step_present[used] = True
        step_ok = arrow.valid(steps)
        if step_ok is not None:
            step_present &= step_ok
        used_values = ranges(value_offsets[:-1][step_present], np.diff(value_offsets)[step_present])
        for value in bad_units(values, used_values).tolist():
            step = int(unit_rows(value_offsets, np.array([value]))[0])
            row = int(unit_rows(step_offsets, np.array([step]))[0])
            at, index = step - int(step_offsets[row]), value - int(value_offsets[step])
            issues.add(row, i, (at, index), null_element(leaf.column, index, row))
            ok = False
        if not ok:
            return [None]
        step_features = feature(kind, read_values(t, values), value_offsets, step_present)
        lists = feature_list(step_features, step_offsets, present)
        return [Feature(present, lists, np.diff(value_offsets)[used])]

    return plan
