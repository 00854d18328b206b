"""A batch of records decoded a column at a time; :class:`Fallback`: read it record by record."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from spark_tfrecord._format.columns.column_errors import NoValue
from spark_tfrecord._format.columns.conversions import Conversion, conversion
from spark_tfrecord._format.columns.gathered import DTYPES, Gathered, column_values, scalars
from spark_tfrecord._format.columns.schema import Column
from spark_tfrecord._format.entries import batch as batch_decoder
from spark_tfrecord._format.entries import sequence
from spark_tfrecord._format.entries.wire import BYTES
from spark_tfrecord._format.frames.packing import offsets as _offsets

#: Lengths, indices and sizes: bigints.
LENGTHS = conversion("bigint")


class Fallback(Exception):
    """The batch strays from the common layout: read it record by record."""


class Batch:
    """Records ``buf[starts[r]:stops[r]]`` located at once; ``listed``: per key, a feature list?"""

    def __init__(
        self,
        keys: Sequence[bytes],
        buf: bytes,
        starts: Any,
        stops: Any,
        listed: Sequence[bool] | None = None,
        numbers: Sequence[int] = (),
    ) -> None:
        self.buf = buf
        self.size = len(starts)
        self.listed = listed
        if listed is None:
            self.located: Any = batch_decoder.locate(buf, starts, stops, keys)
            if numbers and not self.located.fallback.any():
                self.located.numbers = scalars(buf, self.located, numbers)
        else:
            self.located = sequence.locate(buf, starts, stops, keys, listed)
        if self.located.fallback.any():
            raise Fallback

    def present(self, slot: int) -> Any:
        """Which records have feature ``slot`` (a feature list's: which have the list)."""
        if self.listed is not None and self.listed[slot]:
            return self.located.lists.kind[slot] >= 0
        return self.located.kind[slot] >= 0

    def gathered(self, slot: int, conv: Conversion, numeric: bool, located: Any = None) -> Gathered:
        """Feature ``slot``'s values by ``conv`` (numbers when numeric), or of ``located`` steps."""
        where = self.located if located is None else located
        got = column_values(self.buf, where, slot, conv, numeric)
        if got is None:
            raise Fallback
        return got

    def steps(self, slot: int) -> tuple[Any, Any, Any]:
        """Feature list ``slot``'s steps located (at slot 0), steps per record, which have it."""
        found = sequence.steps(self.buf, self.located.lists, slot)
        if found is None:
            raise Fallback
        return (*found, self.located.lists.kind[slot] >= 0)

    def ragged(
        self, slots: Sequence[int], conv: Conversion, numeric: bool, limit: int | None = None
    ) -> tuple[Gathered, list[tuple[Any, Any]]]:
        """A ragged column: flat values, per level (lengths, counts); Fallback unless they fit."""
        flat = self.gathered(slots[0], conv, numeric)
        levels = []
        for slot in slots[1:]:
            got = self.gathered(slot, LENGTHS, True)
            if not np.array_equal(got.present, flat.present):
                raise Fallback  # a record lacks a part: the record path names it
            levels.append((np.asarray(got.values, np.int64), got.counts))
        for k, (lengths, counts) in enumerate(levels):  # lengths >= 0, within limit, fitting
            if len(lengths) and (
                int(lengths.min()) < 0 or (limit is not None and int(lengths.sum()) > limit)
            ):
                raise Fallback
            ends, bounds = _offsets(lengths), _offsets(counts)
            under = levels[k + 1][1] if k + 1 < len(levels) else flat.counts
            if not np.array_equal(ends[bounds[1:]] - ends[bounds[:-1]], under):
                raise Fallback
        return flat, levels


def conversion_of(c: Column) -> Conversion:
    """The column's conversion (a ragged column's lengths and a vector's parts: bigints)."""
    return c.conversion if c.conversion is not None else LENGTHS


def collate_column(c: Column, items: list[Any]) -> Any:
    """Column ``c``'s batch of ``items`` (one a record), in NumPy, as ``Layout.collate`` gives."""
    numeric = c.value in DTYPES
    if c.shape == "vector" and c.sparse:
        present = [v for v in items if v is not None]
        sizes = {s.size for s in present} | ({c.size} if c.size else set())
        if len(sizes) > 1:
            raise ValueError(
                f"Column {c.key!r}: vectors of sizes {sorted(sizes)} in a batch (its "
                "metadata's size included)"
            )
        rows = [np.full(len(s.indices), j, np.int64) for j, s in enumerate(items) if s]
        indices = (
            np.stack([np.concatenate(rows), np.concatenate([s.indices for s in present])], axis=1)
            if rows
            else np.empty((0, 2), np.int64)
        )
        values = np.concatenate([s.values for s in present]) if present else np.empty(0, np.float32)
        return indices, values, (len(items), sizes.pop() if sizes else 0)
    if c.fixed is not None and c.shape in ("scalar", "list", "vector"):
        if any(v is None for v in items):
            raise NoValue(c, [v is None for v in items].index(True))
        if not numeric:
            return items if c.shape == "scalar" else [list(v) for v in items]
        return np.array(items, DTYPES[c.value]) if c.shape == "scalar" else np.stack(items)
    present = [v for v in items if v is not None]
    if c.shape == "ragged":
        offsets = [_offsets([len(v.row_lengths[0]) if v is not None else 0 for v in items])]
        for k in range(c.depth - 1):
            lengths = [np.asarray(v.row_lengths[k], np.int64) for v in present]
            offsets.append(_offsets(np.concatenate(lengths) if lengths else []))
        return (_join([v.values for v in present], c.value), *offsets)
    if c.shape == "scalar":
        found: Any = np.array(present, DTYPES[c.value]) if numeric else present
        return found, _offsets([0 if v is None else 1 for v in items])
    # variable lists, uniform-length lists of elements, dense vectors of varying size
    return _join(present, c.value), _offsets([0 if v is None else len(v) for v in items])


def _values(batch: Batch, slot: int, conv: Conversion, located: Any = None) -> Gathered:
    """Feature ``slot``'s values as the loaders give them (of the steps ``located`` if given)."""
    return _loaded(batch, batch.gathered(slot, conv, conv.value in DTYPES, located), conv)


def _loaded(batch: Batch, got: Gathered, conv: Conversion) -> Gathered:
    """``got`` as the loaders give it: numbers in an array, bytes as a list of str or bytes."""
    if conv.value in DTYPES:
        return got
    buf = batch.buf
    values = [buf[a:b] for a, b in zip(got.first.tolist(), got.last.tolist())]
    convert = conv.by_kind[BYTES]
    if not conv.exact[BYTES] and convert is not None:
        values = convert(values)
    return got._replace(values=values)


def batch_column(batch: Batch, c: Column) -> Any:
    """Column ``c`` of the located ``batch``, as :func:`collate_column` gives it; or Fallback."""
    conv = conversion_of(c)
    if c.shape == "vector":
        return _vector(batch, c)
    if c.shape == "ragged" and not c.sequence:
        flat, levels = batch.ragged(c.slots, conv, c.value in DTYPES)
        values = _loaded(batch, flat, conv).values
        return (values, _offsets(levels[0][1]), *(_offsets(lengths) for lengths, _ in levels))
    (slot,) = c.slots
    if c.sequence:
        steps, counts, present = batch.steps(slot)
        got = _values(batch, 0, conv, steps)
        values = got.values
        if c.shape == "ragged":  # a list per step
            return values, _offsets(counts), _offsets(got.counts)
        if (got.counts != 1).any():
            raise Fallback  # a step of no value or of many: the record path's error
    else:
        got = _values(batch, slot, conv)
        values, counts, present = got.values, got.counts, got.present
    numeric = c.value in DTYPES
    if c.shape == "uniform":
        if (counts % c.length).any():
            raise Fallback
        shaped = (
            values.reshape(-1, c.length)
            if numeric
            else [values[i : i + c.length] for i in range(0, len(values), c.length)]
        )
        return shaped, _offsets(counts // c.length)
    if c.fixed is not None:
        if not present.all() or (counts != c.fixed).any():
            raise Fallback  # a record lacks it: the record path says which
        if c.shape == "scalar":
            return values
        if not numeric:
            return [values[i : i + c.fixed] for i in range(0, len(values), c.fixed)]
        return values.reshape(batch.size, c.fixed)  # a view: gathered as rows
    if c.shape == "scalar" and (counts > 1).any():
        raise Fallback
    return values, _offsets(counts)


def check_arrays(
    batch: Batch, arrays: list[tuple[str, list[Column]]], found: dict[str, Any]
) -> None:
    """Falls back unless each array of structs' leaves agree on its length in every record."""
    for _, members in arrays:
        n = np.full(batch.size, -1, np.int64)
        unequal = np.zeros(batch.size, bool)
        for c in members:
            present = np.any([batch.present(slot) for slot in c.slots], axis=0)
            got = found[c.key]
            counts: Any = np.diff(got[1]) if isinstance(got, tuple) else c.fixed
            unequal |= present & (n >= 0) & (counts != n)
            n = np.where(present & (n < 0), counts, n)
        if unequal.any():
            raise Fallback


def _vector(batch: Batch, c: Column) -> Any:
    dense_slot, index_slot, value_slot, size_slot = c.slots
    has_parts = batch.present(index_slot) | batch.present(value_slot)
    if not c.sparse:
        if has_parts.any():
            raise Fallback
        dense = Column(
            c.key, "float", "list", fixed=c.fixed, slots=[dense_slot], conversion=c.conversion
        )
        return batch_column(batch, dense)
    if batch.present(dense_slot).any():
        raise Fallback
    index = _values(batch, index_slot, LENGTHS)
    entries = _values(batch, value_slot, conversion_of(c))
    sizes = _values(batch, size_slot, LENGTHS)
    if (index.counts != entries.counts).any() or (sizes.counts != has_parts).any():
        raise Fallback
    indices = index.values
    distinct = set(sizes.values.tolist()) | ({c.size} if c.size else set())
    if len(distinct) > 1:
        raise Fallback
    size = distinct.pop() if distinct else 0
    rows = np.repeat(np.arange(batch.size, dtype=np.int64), index.counts)
    if len(indices):
        if int(indices.min()) < 0 or int(indices.max()) >= size:
            raise Fallback
        step = np.diff(indices)
        if (step[rows[1:] == rows[:-1]] <= 0).any():
            raise Fallback
    return np.stack([rows, indices], axis=1), entries.values, (batch.size, size)


def _join(parts: list[Any], value: str) -> Any:
    if value not in DTYPES:
        return [v for part in parts for v in part]
    if not parts:
        return np.empty(0, DTYPES[value])
    return np.concatenate([np.asarray(p, DTYPES[value]) for p in parts])
