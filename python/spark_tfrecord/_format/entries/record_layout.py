"""One layout for a whole batch of Examples: read from its first record, checked for every record
at once, so that the batch decoder finds each feature without walking the records.

A writer (ours, TensorFlow's, TFDS's) emits every record with the same keys in the same order,
the same kinds, and mostly the same lengths. So the first record's map entries are walked once,
in Python; each entry's header (its tags, key and lengths, up to the values) becomes a row of
bytes that every record must hold at its predicted place. Where only the values' length differs
(a varint, a variable list, a string), every length in the header differs from the first
record's by the same amount: the header of each record is predicted from its entry's length and
compared in one NumPy comparison for the whole batch.

A record whose bytes match is laid out exactly as the first one: its features are where the
prediction puts them, and the checks of the step-by-step walk (``batch.locate``) would pass on
it. The records that do not match (:attr:`Predicted.odd`) are left to that walk, record by
record as before; so values and errors never change. When most records do not match, the
check stops at the first entry that shows it and the whole batch is walked, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from spark_tfrecord._format.entries.wire import BYTES, UNSET, MalformedRecord, varint

#: Each length in an entry's header: (its offset, its bytes, its value).
_Lengths = tuple[tuple[int, int, int], ...]
#: The longest length varint the step-by-step walk reads (``wire.varints_at``).
_LONGEST = 5


class _Entry:
    """One map entry of the first record: its header's bytes, where its lengths lie in them,
    and what its value is. ``slot`` is the wanted key's index (-1: a key nobody asked for)."""

    def __init__(
        self,
        slot: int,
        kind: int,
        header: bytes,
        fields: _Lengths,
        shifts: bool,
        key: slice,
    ) -> None:
        self.slot = slot
        self.kind = kind
        self.header = np.frombuffer(header, np.uint8)
        self.size = len(header)
        self.span = np.arange(len(header), dtype=np.int64)
        self.length_at, self.length_bytes, self.length = fields[0]
        self.shifts = shifts
        self.key = key
        if shifts:
            # Every length byte of the header, as (column, the template's length, its 7-bit
            # group's shift, continuation bit): a record's header is this with each length
            # plus the record's difference d, re-encoded in the same number of bytes.
            cols, base, shift, cont, last = [], [], [], [], []
            for at, n, value in fields:
                for i in range(n):
                    cols.append(at + i)
                    base.append(value)
                    shift.append(7 * i)
                    cont.append(0x80 if i < n - 1 else 0)
                    last.append(i == n - 1)
            self.cols = np.array(cols, np.int64)
            self.base = np.array(base, np.int64)
            self.shift = np.array(shift, np.int64)
            self.cont = np.array(cont, np.int64)
            self.last = np.array(last, bool)
            self.last_shift = self.shift[self.last] + 7
            self.length_cols = slice(self.length_at, self.length_at + self.length_bytes)
            self.length_shift = 7 * np.arange(self.length_bytes, dtype=np.int64)


class Template:
    """The layout of a batch's first record, as :func:`template` reads it."""

    def __init__(self, features_bytes: int, entries: list[_Entry]) -> None:
        self.features_bytes = features_bytes
        self.entries = entries
        n = features_bytes
        self.shift = 7 * np.arange(n, dtype=np.int64)
        self.cont = np.array([0x80 if i < n - 1 else 0 for i in range(n)], np.int64)


class Predicted:
    """Where the template puts each wanted feature, per record: ``kind``, ``start`` and
    ``stop`` as :class:`batch.Located` has them, valid where ``odd`` is False."""

    def __init__(self, kind: Any, start: Any, stop: Any, odd: Any) -> None:
        self.kind = kind
        self.start = start
        self.stop = stop
        self.odd = odd


def _length(buf: bytes, pos: int, end: int) -> tuple[int, int, int]:
    """A length varint at ``pos``: its value, the position after it and its bytes; raises
    ``MalformedRecord`` where the step-by-step walk would not read it."""
    value, after = varint(buf, pos, end)
    if after - pos > _LONGEST:
        raise MalformedRecord("a length longer than the batch walk reads")
    return value, after, after - pos


#: The templates read so far, by the headers of their first records and the wanted keys: a
#: reader's batches share a few (a varint's length in the first record may differ).
_KNOWN: dict[Any, Template] = {}


def template(buf: bytes, start: int, stop: int, keys: Sequence[bytes]) -> Template | None:
    """The layout of the record ``buf[start:stop]``, or None when it is not the plain layout
    writers produce (the step-by-step walk then reads the batch): one ``features`` field of
    map entries, each a key then a value, one kind per Feature, numbers in one packed run, no
    key twice."""
    try:
        found = _entries(buf, start, stop)
    except (MalformedRecord, IndexError):
        return None
    if found is None or not found[1]:
        return None  # (no entries: nothing to lay out; the walk reads such a record)
    known = (tuple(keys), found)
    t = _KNOWN.get(known)
    if t is None:
        if len(_KNOWN) >= 256:
            _KNOWN.clear()
        slots = {k: w for w, k in enumerate(keys)}
        features_bytes, entries = found
        t = Template(
            features_bytes,
            [
                _Entry(slots.get(key, -1), kind, header, fields, shifts, slice(at, at + len(key)))
                for key, kind, header, fields, shifts, at in entries
            ],
        )
        _KNOWN[known] = t
    return t


_Found = tuple[int, tuple[tuple[bytes, int, bytes, _Lengths, bool, int], ...]]


def _entries(buf: bytes, start: int, stop: int) -> _Found | None:
    """The record's Features length's bytes and, per map entry, its key, kind, header, the
    (offset, bytes, value) of each length in the header, whether they may shift, and where
    the key is in the header."""
    if start >= stop or buf[start] != 0x0A:
        return None
    size, pos, features_bytes = _length(buf, start + 1, stop)
    if pos + size != stop:
        return None
    entries = []
    seen: set[bytes] = set()
    while pos < stop:
        first = pos
        if buf[pos] != 0x0A:
            return None
        entry_len, p, n_entry = _length(buf, pos + 1, stop)
        end = p + entry_len
        if end > stop or p >= end or buf[p] != 0x0A:
            return None
        key_len, p, _ = _length(buf, p + 1, end)
        key = bytes(buf[p : p + key_len])  # hashable whatever holds the batch
        key_at = p - first
        p += key_len
        if p >= end or buf[p] != 0x12 or key in seen:
            return None
        seen.add(key)
        value_at = p + 1
        value_len, p, n_value = _length(buf, value_at, end)
        if p + value_len != end:
            return None
        fields = [(1, n_entry, entry_len), (value_at - first, n_value, value_len)]
        kind, shifts = UNSET, False
        if value_len > 0:
            tag = buf[p]
            if tag & 7 != 2 or not 0x0A <= tag <= 0x1A:
                return None
            kind = tag >> 3
            list_at = p + 1
            list_len, p, n_list = _length(buf, list_at, end)
            if p + list_len != end:
                return None
            fields.append((list_at - first, n_list, list_len))
            # an empty number list has no run: its length cannot shift (a record whose list
            # holds values is laid out otherwise)
            shifts = kind == BYTES or list_len > 0
            if kind != BYTES and list_len > 0:
                if buf[p] != 0x0A:
                    return None
                run_at = p + 1
                run_len, p, n_run = _length(buf, run_at, end)
                if p + run_len != end:
                    return None
                fields.append((run_at - first, n_run, run_len))
        header = bytes(buf[first:p])
        entries.append((key, kind, header, tuple(fields), shifts, key_at))
        pos = end
    return features_bytes, tuple(entries)


def windows(buf: Any, width: int) -> Any:
    """Every run of ``width`` bytes of ``buf`` as a row of a read-only view (no copy): indexing
    it with positions gathers the bytes from each at once, row by row."""
    return np.ndarray((len(buf) - width + 1, width), np.uint8, buf, 0, (1, 1))


def _equal_rows(rows: Any, row: Any) -> Any:
    """Which rows of the uint8 array ``rows`` (B, n) equal ``row`` (n bytes, or B rows): each
    row compared as one n-byte value (a reduction over short rows costs some 20 times more)."""
    n = rows.shape[1]
    if n == 0:
        return np.ones(len(rows), bool)
    value = f"V{n}"
    return (
        np.ascontiguousarray(rows).view(value)[:, 0]
        == np.ascontiguousarray(row).view(value)[..., 0]
    )


def predict(buf: Any, starts: Any, stops: Any, width: int, t: Template) -> Predicted:
    """Checks the template against every record ``buf[starts[r]:stops[r]]`` and gives each
    wanted feature's place in the records that match."""
    size = len(starts)
    kind = np.full((width, size), -1, np.int64)
    start = np.zeros((width, size), np.int64)
    stop = np.zeros((width, size), np.int64)
    # the Example's one field: 0x0A, then the record's length less its header, in the
    # template's number of bytes
    n = t.features_bytes
    if len(buf) < n + 1 + max(e.size for e in t.entries):
        return Predicted(kind, start, stop, np.ones(size, bool))
    head = windows(buf, n + 1)[np.minimum(starts, len(buf) - n - 1)]
    body = (stops - starts - 1 - n)[:, None]
    want = ((body >> t.shift) & 0x7F) | t.cont
    good = (head[:, 0] == 0x0A) & (head[:, 1:] == want).all(axis=1) & ((body >> (7 * n)) == 0)[:, 0]
    pos = starts + 1 + n
    # A row clamped to the buffer's end reads other bytes; its record fails the last check
    # anyway, as its entries would end past the buffer.
    for e in t.entries:
        got = windows(buf, e.size)[np.minimum(pos, len(buf) - e.size)]
        same = _equal_rows(got, e.header)
        if not e.shifts or same.all():
            good &= same
            after = pos + (1 + e.length_bytes + e.length)
        else:
            keyed = _equal_rows(got[:, e.key], e.header[e.key])
            if 2 * np.count_nonzero(keyed & good) < size:
                return Predicted(kind, start, stop, np.ones(size, bool))  # see below
            cols = got[:, e.length_cols].astype(np.int64)
            length = ((cols & 0x7F) << e.length_shift).sum(axis=1)
            lengths = e.base + (length - e.length)[:, None]
            fits = ((lengths[:, e.last] >> e.last_shift) == 0).all(axis=1)
            expected = np.broadcast_to(e.header, got.shape).copy()
            expected[:, e.cols] = ((lengths >> e.shift) & 0x7F) | e.cont
            good &= _equal_rows(got, expected) & fits
            after = pos + 1 + e.length_bytes + length
        if e.slot >= 0:
            kind[e.slot] = e.kind
            start[e.slot] = pos + e.size
            stop[e.slot] = after
        pos = after
        if 2 * np.count_nonzero(good) < size:
            # most records differ: walking them costs as much as walking all (a NumPy step
            # per entry either way), so the check stops here and leaves the batch to the walk
            return Predicted(kind, start, stop, np.ones(size, bool))
    good &= pos == stops
    return Predicted(kind, start, stop, ~good)
