"""A batch's columns in NumPy, for the loaders: from the records' values (:func:`collate_column`)
or straight from the batch's bytes (:func:`collate_raw`, the batch decoder's located features
gathered a column at a time, falling back to the record path where a record needs a decision of
its own). A batch of SequenceExamples is located by
:func:`spark_tfrecord._format.entries.sequence.locate` (the context's features as an Example's)
and a feature list's values gathered from its steps (:func:`sequence.steps`), as the jar-less
source's batch path reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from spark_tfrecord._format.columns.column_errors import NoValue
from spark_tfrecord._format.columns.conversions import Conversion, conversion
from spark_tfrecord._format.columns.gathered import DTYPES, column_values, ragged_fits
from spark_tfrecord._format.columns.schema import Column
from spark_tfrecord._format.entries import batch as batch_decoder
from spark_tfrecord._format.entries import sequence
from spark_tfrecord._format.entries.wire import BYTES, MalformedRecord
from spark_tfrecord._format.frames.packing import offsets as _offsets

#: Lengths, indices and sizes: bigints.
LENGTHS = conversion("bigint")


def conversion_of(c: Column) -> Conversion:
    """The column's conversion (a ragged column's lengths and a vector's parts: bigints)."""
    return c.conversion if c.conversion is not None else LENGTHS


def collate_column(c: Column, items: list[Any]) -> Any:
    """Column ``c``'s values of a batch of records, ``items`` (one a record), in NumPy
    arrays, as :meth:`collate` gives each column."""
    numeric = c.value in DTYPES
    if c.shape == "vector" and c.sparse:
        sizes = {s.size for s in items if s is not None} | ({c.size} if c.size else set())
        if len(sizes) > 1:
            raise ValueError(
                f"Column {c.key!r}: vectors of sizes {sorted(sizes)} in a batch (its "
                "metadata's size included)"
            )
        rows = [np.full(len(s.indices), j, np.int64) for j, s in enumerate(items) if s]
        cols = [s.indices for s in items if s is not None]
        vals = [s.values for s in items if s is not None]
        indices = (
            np.stack([np.concatenate(rows), np.concatenate(cols)], axis=1)
            if rows
            else np.empty((0, 2), np.int64)
        )
        values = np.concatenate(vals) if vals else np.empty(0, np.float32)
        return indices, values, (len(items), sizes.pop() if sizes else 0)
    if c.fixed is not None and c.shape in ("scalar", "list", "vector"):
        if any(v is None for v in items):
            raise NoValue(c, [v is None for v in items].index(True))
        if not numeric:
            return items if c.shape == "scalar" else [list(v) for v in items]
        return np.array(items, DTYPES[c.value]) if c.shape == "scalar" else np.stack(items)
    if c.shape == "ragged":
        present = [v for v in items if v is not None]
        offsets = [_offsets([len(v.row_lengths[0]) if v is not None else 0 for v in items])]
        for k in range(c.depth - 1):
            lengths = [np.asarray(v.row_lengths[k], np.int64) for v in present]
            offsets.append(_offsets(np.concatenate(lengths) if lengths else []))
        flat = [v.values for v in items if v is not None]
        return (_join(flat, c.value), *offsets)
    if c.shape == "scalar":
        present = [v for v in items if v is not None]
        counts = [0 if v is None else 1 for v in items]
        scalars: Any = np.array(present, DTYPES[c.value]) if numeric else present
        return scalars, _offsets(counts)
    # variable lists, uniform-length lists of elements, dense vectors of varying size
    present = [v for v in items if v is not None]
    counts = [0 if v is None else len(v) for v in items]
    return _join(present, c.value), _offsets(counts)


def collate_raw(
    columns: Sequence[Column],
    arrays: list[tuple[str, list[Column]]],
    keys: Sequence[bytes],
    buf: bytes,
    starts: Any,
    stops: Any,
    listed: Sequence[bool] | None = None,
) -> dict[str, Any] | None:
    """The ``columns`` of the serialized Examples ``buf[starts[r]:stops[r]]`` (their features
    ``keys``), decoded together; None when a record strays from the layout writers produce
    (then decode the batch record by record: the same values, or the error naming the
    record). With ``listed`` (per key: a feature list's?), SequenceExamples."""
    try:
        batch = BatchColumns(keys, buf, starts, stops, listed)
        found = {c.key: batch.column(c) for c in columns}
        if arrays:
            batch.check_arrays(arrays, found)
        return found
    except (_Fallback, MalformedRecord):  # the record path raises the record's error
        return None


class _Fallback(Exception):
    """The batch strays from the common layout: decode it record by record."""


class BatchColumns:
    """:func:`collate_raw`'s work on one batch: each column's values gathered from the
    located features of all its records at once."""

    def __init__(
        self,
        keys: Sequence[bytes],
        buf: bytes,
        starts: Any,
        stops: Any,
        listed: Sequence[bool] | None = None,
    ) -> None:
        self.buf = buf
        self.size = len(starts)
        self.listed = listed
        if listed is None:
            self.located: Any = batch_decoder.locate(buf, starts, stops, keys)
        else:
            self.located = sequence.locate(buf, starts, stops, keys, listed)
        if self.located.fallback.any():
            raise _Fallback

    def _present(self, slot: int) -> Any:
        """Which records have feature ``slot`` (a feature list's: which have the list)."""
        if self.listed is not None and self.listed[slot]:
            return self.located.lists.kind[slot] >= 0
        return self.located.kind[slot] >= 0

    def values(self, slot: int, conv: Conversion, located: Any = None) -> tuple[Any, Any, Any]:
        """Feature ``slot``'s values as the column's (concatenated: an array, or a list of str /
        bytes), their counts per record, and which records have the feature (of the batch's
        features, or of those ``located``: a feature list's steps)."""
        numeric = conv.value in DTYPES
        where = self.located if located is None else located
        got = column_values(self.buf, where, slot, conv, numeric)
        if got is None:
            raise _Fallback
        if numeric:
            return got.values, got.counts, got.present
        buf = self.buf
        values = [buf[a:b] for a, b in zip(got.first.tolist(), got.last.tolist())]
        convert = conv.by_kind[BYTES]
        if not conv.exact[BYTES] and convert is not None:
            values = convert(values)
        return values, got.counts, got.present

    def steps(self, c: Column) -> tuple[Any, Any, Any, Any]:
        """A feature list's values (of all its steps), how many each step holds, how many
        steps each record's list has (0 where it has none) and which records have it."""
        (slot,) = c.slots
        found = sequence.steps(self.buf, self.located.lists, slot)
        if found is None:
            raise _Fallback
        steps, per_record = found
        values, counts, _ = self.values(0, conversion_of(c), steps)
        return values, counts, per_record, self.located.lists.kind[slot] >= 0

    def column(self, c: Column) -> Any:
        if c.shape == "vector":
            return self.vector(c)
        if c.sequence:
            values, step_counts, counts, present = self.steps(c)
            if c.shape == "ragged":  # a list per step
                return values, _offsets(counts), _offsets(step_counts)
            if (step_counts != 1).any():
                raise _Fallback  # a step of no value or of many: the record path's error
        elif c.shape == "ragged":
            return self.ragged(c)
        else:
            (slot,) = c.slots
            values, counts, present = self.values(slot, conversion_of(c))
        numeric = c.value in DTYPES
        if c.shape == "uniform":
            if (counts % c.length).any():
                raise _Fallback
            shaped = (
                values.reshape(-1, c.length)
                if numeric
                else [values[i : i + c.length] for i in range(0, len(values), c.length)]
            )
            return shaped, _offsets(counts // c.length)
        if c.fixed is not None:
            if not present.all() or (counts != c.fixed).any():
                raise _Fallback  # a record lacks it: the record path says which
            if c.shape == "scalar":
                return values
            if not numeric:
                return [values[i : i + c.fixed] for i in range(0, len(values), c.fixed)]
            return values.reshape(self.size, c.fixed)  # a view: gathered as rows
        if c.shape == "scalar" and (counts > 1).any():
            raise _Fallback
        return values, _offsets(counts)

    def ragged(self, c: Column) -> Any:
        present = [self._present(slot) for slot in c.slots]
        if (np.logical_or.reduce(present) & ~np.logical_and.reduce(present)).any():
            raise _Fallback  # a record lacks a part: the record path names it
        parts = []
        for k, slot in enumerate(c.slots):
            parts.append(self.values(slot, conversion_of(c) if k == 0 else LENGTHS))
        flat, flat_counts, _ = parts[0]
        levels = [(p[0], p[1]) for p in parts[1:]]
        if not ragged_fits(levels, flat_counts):
            raise _Fallback
        return (flat, _offsets(levels[0][1]), *(_offsets(lengths) for lengths, _ in levels))

    def check_arrays(self, arrays: list[tuple[str, list[Column]]], found: dict[str, Any]) -> None:
        """The record path's check that an array of structs' leaves agree on its length, for
        the batch: falls back where it fails."""
        for _, members in arrays:
            n = np.full(self.size, -1, np.int64)
            unequal = np.zeros(self.size, bool)
            for c in members:
                present = np.zeros(self.size, bool)
                for slot in c.slots:
                    present |= self._present(slot)
                got = found[c.key]
                counts: Any = np.diff(got[1]) if isinstance(got, tuple) else c.fixed
                unequal |= present & (n >= 0) & (counts != n)
                n = np.where(present & (n < 0), counts, n)
            if unequal.any():
                raise _Fallback

    def vector(self, c: Column) -> Any:
        dense_slot, index_slot, value_slot, size_slot = c.slots
        has_parts = self._present(index_slot) | self._present(value_slot)
        has_dense = self._present(dense_slot)
        if not c.sparse:
            if has_parts.any():
                raise _Fallback
            dense = Column(
                c.key,
                "float",
                "list",
                fixed=c.fixed,
                slots=[dense_slot],
                conversion=c.conversion,
            )
            return self.column(dense)
        if has_dense.any():
            raise _Fallback
        indices, index_counts, _ = self.values(index_slot, LENGTHS)
        entries, entry_counts, _ = self.values(value_slot, conversion_of(c))
        sizes, size_counts, _ = self.values(size_slot, LENGTHS)
        if (index_counts != entry_counts).any() or (size_counts != has_parts).any():
            raise _Fallback
        distinct = set(sizes.tolist()) | ({c.size} if c.size else set())
        if len(distinct) > 1:
            raise _Fallback
        size = distinct.pop() if distinct else 0
        rows = np.repeat(np.arange(self.size, dtype=np.int64), index_counts)
        if len(indices):
            if int(indices.min()) < 0 or int(indices.max()) >= size:
                raise _Fallback
            step = np.diff(indices)
            if (step[rows[1:] == rows[:-1]] <= 0).any():
                raise _Fallback
        return np.stack([rows, indices], axis=1), entries, (self.size, size)


def _join(parts: list[Any], value: str) -> Any:
    if value not in DTYPES:
        return [v for part in parts for v in part]
    if not parts:
        return np.empty(0, DTYPES[value])
    return np.concatenate([np.asarray(p, DTYPES[value]) for p in parts])
