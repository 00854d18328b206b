"""A column's values in a batch, gathered at once in Arrow's layout, or None: read per record."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from spark_tfrecord._format.columns.conversions import Conversion, OutOfRange
from spark_tfrecord._format.entries import batch
from spark_tfrecord._format.entries.entries import bytes_entries
from spark_tfrecord._format.entries.wire import BYTES, FLOAT, INT64, MalformedRecord

#: The NumPy type of each loaders' kind of number (:attr:`Conversion.value`).
DTYPES = {"int": np.int64, "float": np.float32}


class Gathered(NamedTuple):
    """A column's values in a batch (of B records)."""

    #: The kind they were read from; -1 when no record holds a value.
    source: int
    #: Numbers: the values, converted to the column's (a NumPy array); bytes: None.
    values: Any
    #: Bytes: each entry's start and stop in the batch's buffer, record after record.
    first: Any
    last: Any
    #: Per record: how many values it holds (int64), and whether it has the feature at all.
    counts: Any
    present: Any


def column_values(
    buf: bytes, located: Any, slot: int, conv: Conversion, numeric: bool
) -> Gathered | None:
    """Feature ``slot``'s values in the located batch ``buf``, read by ``conv``, or None."""
    known = located.numbers.get(slot) if numeric else None
    if known is not None:  # one value a record, as :func:`scalars` read it
        values = _converted(conv, *known)
        if values is None:
            return None
        ones = np.ones(len(values), np.int64)
        return Gathered(known[0], values, None, None, ones, ones.astype(bool))
    kind, start, stop = located.kind[slot], located.start[slot], located.stop[slot]
    present = kind >= 0
    filled = present & (stop > start)  # the lists that hold values (an empty one: any kind)
    kinds = kind[filled]
    source = int(kinds[0]) if len(kinds) else -1
    if source >= 0 and conv.by_kind[source] is None:
        return None  # a kind the column does not read: the record path's error
    if source >= 0 and (kinds != source).any():
        if not numeric or (kinds == BYTES).any():
            return None  # numbers and bytes: the record path's error, or its text
        return _mixed(buf, conv, kind, start, stop, filled, present)
    start, stop = np.where(filled, start, 0), np.where(filled, stop, 0)
    if not numeric:
        if source not in (-1, BYTES):
            return None  # numbers read as text: the record path
        found = bytes_entries(buf, start, stop)
        return None if found is None else Gathered(source, None, *found, present)
    if source == BYTES:
        return None
    if source < 0:  # (a kind of number the loaders do not give: the caller casts the values)
        values = np.empty(0, DTYPES.get(conv.value, np.float64))
        return Gathered(source, values, None, None, np.zeros(len(kind), np.int64), present)
    values, counts = _numbers(buf, source, start, stop, filled)
    if values is not None:
        values = _converted(conv, source, values)
    return None if values is None else Gathered(source, values, None, None, counts, present)


def _converted(conv: Conversion, kind: int, values: Any) -> Any:
    """``values`` of ``kind`` by ``conv``; None if it reads no ``kind`` or one is out of range."""
    convert = conv.by_kind[kind]
    if convert is None:
        return None
    if conv.exact[kind]:
        return values
    try:
        return convert(values)
    except OutOfRange:
        return None  # the record path names the record and the value


#: Of a varint's bytes read as one little-endian word: the continuation bits.
_HIGH = np.uint64(0x8080808080808080)
#: By the varint's number of bytes n: its continuation bits (on every byte but the last).
_MORE = np.array([sum(0x80 << 8 * k for k in range(n - 1)) for n in range(1, 9)], np.uint64)


#: How many values :func:`scalars` reads at once (a block of features whose arrays stay in cache).
_BLOCK = 1 << 17


def scalars(buf: bytes, located: Any, slots: Sequence[int]) -> dict[int, tuple[int, Any]]:
    """By slot, kind and values of the ``slots`` every record holds as one float or short int64."""
    out: dict[int, tuple[int, Any]] = {}
    size = located.kind.shape[1]
    step = max(1, _BLOCK // max(1, size))
    for first in range(0, len(slots) if size else 0, step):
        rows = np.asarray(slots[first : first + step], np.int64)
        kind, start, stop = located.kind[rows], located.start[rows], located.stop[rows]
        length = stop - start
        floats = ((kind == FLOAT) & (length == 4)).all(axis=1)
        if floats.any():
            read = np.ndarray((len(buf) - 3,), "<f4", buf, 0, (1,))[start[floats]]
            out.update(zip(rows[floats].tolist(), ((FLOAT, v) for v in read.astype(np.float32))))
        ints = ((kind == INT64) & (length >= 1) & (length <= 8)).all(axis=1)
        if ints.any() and int(stop[ints].min()) >= 8:
            values, ok = _short_varints(buf, stop[ints], length[ints])
            held = ok.all(axis=1)
            out.update(zip(rows[ints][held].tolist(), ((INT64, v) for v in values[held])))
    return out


def _short_varints(buf: bytes, stop: Any, length: Any) -> tuple[Any, Any]:
    """Int64 varints of ``length`` (1-8) bytes ending at ``stop`` (>= 8); whether each is one."""
    words = np.ndarray((len(buf) - 7,), "<u8", buf, 0, (1,))[stop - 8]
    words >>= (8 * (8 - length)).astype(np.uint64)  # the varint's first byte lowest
    ok = (words & _HIGH) == _MORE[length - 1]
    x = words & np.uint64(0x7F7F7F7F7F7F7F7F)
    # the 7-bit groups packed together: by pairs, by fours, by eights
    x = (x & np.uint64(0x007F007F007F007F)) | ((x & np.uint64(0x7F007F007F007F00)) >> np.uint64(1))
    x = (x & np.uint64(0x00003FFF00003FFF)) | ((x & np.uint64(0x3FFF00003FFF0000)) >> np.uint64(2))
    x = (x & np.uint64(0x000000000FFFFFFF)) | ((x & np.uint64(0x0FFFFFFF00000000)) >> np.uint64(4))
    return x.view(np.int64), ok


def _mixed(
    buf: bytes, conv: Conversion, kind: Any, start: Any, stop: Any, filled: Any, present: Any
) -> Gathered | None:
    """A column of floats and int64s, each kind converted apart; None if their types differ."""
    parts = []
    for k in (FLOAT, INT64):
        if conv.by_kind[k] is None:
            return None
        mine = filled & (kind == k)
        values, counts = _numbers(buf, k, np.where(mine, start, 0), np.where(mine, stop, 0), mine)
        if values is not None:
            values = _converted(conv, k, values)
        if values is None:
            return None
        parts.append((np.asarray(values), counts))
    (floats, float_counts), (ints, int_counts) = parts
    if floats.dtype != ints.dtype:
        return None
    values = in_record_order(floats, float_counts, ints, int_counts)
    return Gathered(FLOAT, values, None, None, float_counts + int_counts, present)


def in_record_order(first: Any, first_counts: Any, second: Any, second_counts: Any) -> Any:
    """Two parts of a batch's values as one array, per record ``first``'s, then ``second``'s."""
    counts = first_counts + second_counts
    starts = np.zeros(len(counts), np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    out = np.empty(len(first) + len(second), np.result_type(first, second))
    for part, part_counts, at in (
        (first, first_counts, starts),
        (second, second_counts, starts + first_counts),
    ):
        part_starts = np.cumsum(part_counts) - part_counts
        out[np.arange(len(part)) + np.repeat(at - part_starts, part_counts)] = part
    return out


def _numbers(buf: bytes, source: int, start: Any, stop: Any, filled: Any) -> tuple[Any, Any]:
    """Kind ``source``'s packed lists ``buf[start[r]:stop[r]]`` joined, and counts; or Nones."""
    lengths = stop - start
    held = lengths[filled]
    if source == FLOAT:
        if (lengths & 3).any():
            return None, None
        if len(held) and (held == held[0]).all():  # all of one length: rows
            rows = batch.fixed_floats(buf, start[filled], int(held[0]) >> 2)
            return rows.reshape(-1), lengths >> 2
        return batch.float_values(buf, start, stop)
    if len(held) and held.max() <= 10:  # one varint each, if each ends its list
        one = batch.one_varint(buf, start[filled], stop[filled])
        if one is not None:
            return one, filled.astype(np.int64)
    try:
        found = batch.int_values(buf, start, stop)
    except MalformedRecord:
        return None, None
    return (None, None) if found is None else found
