"""One layout for a batch of Examples, read from one record (the template), checked for all.
Records that match are laid out exactly as it; the others (``odd``) are left to the walk.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from spark_tfrecord._format.entries.wire import BYTES, UNSET, MalformedRecord, varint

#: Each length in an entry's header: (its offset, its bytes, its value).
_Lengths = tuple[tuple[int, int, int], ...]
#: The longest length varint the step-by-step walk reads (``wire.varints_at``).
_LONGEST = 5


class _Entry:
    """A template map entry: header bytes, its lengths' places, kind; ``slot`` -1: not wanted."""

    def __init__(self, slot: int, kind: int, header: bytes, fields: _Lengths, shifts: bool) -> None:
        self.slot = slot
        self.kind = kind
        self.header = np.frombuffer(header, np.uint8)
        self.size = len(header)
        self.fields = fields
        _, self.length_bytes, self.length = fields[0]
        self.shifts = shifts
        #: What entries checked together share: header size, and its lengths' places if shifting.
        self.shape = self.size, tuple((at, n) for at, n, _ in fields) if shifts else ()


class _Group:
    """Template entries of one :attr:`_Entry.shape`, checked together as (records, entries)."""

    def __init__(self, index: list[int], members: list[_Entry]) -> None:
        self.index = np.array(index, np.int64)
        self.size = members[0].size
        self.headers = np.array([e.header for e in members], np.uint8).reshape(-1, self.size)
        self.cols: list[tuple[int, Any, int, int, bool]] = []
        for f, (at, n, _) in enumerate(members[0].fields if members[0].shifts else ()):
            base = np.array([e.fields[f][2] for e in members], np.int64)
            for i in range(n):
                self.cols.append((at + i, base, 7 * i, 0x80 if i < n - 1 else 0, i == n - 1))
        # 8+-byte headers whose lengths each take a byte are compared as 8-byte words: with
        # every length + d in 0..127 there is no carry, so equal words mean equal bytes.
        self.by_words = self.size >= 8 and all(c[2] == 0 and c[4] for c in self.cols)
        self.words = [*range(0, self.size - 8, 8), self.size - 8] if self.by_words else []
        self.template_words = [
            self.headers[:, w : w + 8].copy().view("<i8")[:, 0] for w in self.words
        ]
        self.weights = [
            sum(1 << 8 * (c[0] - w) for c in self.cols if w <= c[0] < w + 8) for w in self.words
        ]
        bases = [c[1] for c in self.cols]
        self.low = -np.min(bases, axis=0) if bases else None
        self.high = 128 - np.max(bases, axis=0) if bases else None


class Template:
    """The layout of one record of a batch (the template), as :func:`template` reads it."""

    def __init__(self, features_bytes: int, entries: list[_Entry]) -> None:
        self.features_bytes = features_bytes
        self.entries = entries
        n = features_bytes
        self.shift = 7 * np.arange(n, dtype=np.int64)
        self.cont = np.array([0x80 if i < n - 1 else 0 for i in range(n)], np.int64)
        self.length_bytes = [e.length_bytes for e in entries]
        #: each entry's bytes in the template: its tag, its length's bytes, its length
        self.whole = np.array([1 + e.length_bytes + e.length for e in entries], np.int64)
        self.largest = max(e.size for e in entries)
        shapes: dict[Any, list[int]] = {}
        for i, e in enumerate(entries):
            shapes.setdefault(e.shape, []).append(i)
        self.groups = [_Group(index, [entries[i] for i in index]) for index in shapes.values()]
        wanted = [i for i, e in enumerate(entries) if e.slot >= 0]
        self.wanted = np.array(wanted, np.int64)
        self.slots = np.array([entries[i].slot for i in wanted], np.int64)
        self.kinds = np.array([entries[i].kind for i in wanted], np.int64)[:, None]
        self.sizes = np.array([entries[i].size for i in wanted], np.int64)[:, None]
        # The whole record: each entry's start (then the last's end), and every header byte's place.
        self.begins = 1 + n + np.concatenate([[0], np.cumsum(self.whole)])
        self.record_bytes = int(self.begins[-1])
        body = self.record_bytes - 1 - n
        head = [0x0A, *(((body >> 7 * i) & 0x7F) | (0x80 if i < n - 1 else 0) for i in range(n))]
        self.header_at = np.concatenate(
            [np.arange(n + 1)] + [self.begins[i] + np.arange(e.size) for i, e in enumerate(entries)]
        )
        self.header_bytes = np.concatenate([np.array(head, np.uint8)] + [e.header for e in entries])


class Predicted(NamedTuple):
    """Each wanted feature's ``kind``, ``start``, ``stop`` per record, valid where not ``odd``."""

    kind: Any
    start: Any
    stop: Any
    odd: Any


def _length(buf: bytes, pos: int, end: int) -> tuple[int, int, int]:
    """A length varint's value, the position after it and its size; MalformedRecord if too long."""
    value, after = varint(buf, pos, end)
    if after - pos > _LONGEST:
        raise MalformedRecord("a length longer than the batch walk reads")
    return value, after, after - pos


#: Templates seen, by record headers and wanted keys: a reader's batches share a few.
_KNOWN: dict[Any, Template] = {}


def template(buf: bytes, start: int, stop: int, keys: Sequence[bytes]) -> Template | None:
    """The layout of ``buf[start:stop]``, or None if not writers' plain layout (then walked)."""
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
        entries = [
            _Entry(slots.get(key, -1), kind, header, fields, shifts)
            for key, kind, header, fields, shifts in found[1]
        ]
        t = _KNOWN[known] = Template(found[0], entries)
    return t


_Found = tuple[int, tuple[tuple[bytes, int, bytes, _Lengths, bool], ...]]


def _entries(buf: bytes, start: int, stop: int) -> _Found | None:
    """The Features length's size and, per entry: key, kind, header, lengths, whether they shift."""
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
            # an empty number list has no run, so its length cannot shift
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
        entries.append((key, kind, header, tuple(fields), shifts))
        pos = end
    return features_bytes, tuple(entries)


def windows(buf: Any, width: int) -> Any:
    """Every run of ``width`` bytes of ``buf`` as a row of a read-only view (no copy)."""
    return np.ndarray((len(buf) - width + 1, width), np.uint8, buf, 0, (1, 1))


def _equal_rows(rows: Any, row: Any) -> Any:
    """Which rows of ``rows`` (..., n) equal ``row``: each as one n-byte value, not a reduction."""
    n = rows.shape[-1]
    if n == 0:
        return np.ones(rows.shape[:-1], bool)
    value = f"V{n}"
    return (
        np.ascontiguousarray(rows).view(value)[..., 0]
        == np.ascontiguousarray(row).view(value)[..., 0]
    )


#: Header bytes checked at once: a block's arrays stay in cache; a bad batch stops early.
_BLOCK_BYTES = 1 << 21


def predict(buf: Any, starts: Any, stops: Any, width: int, t: Template) -> Predicted:
    """Checks the template against each record and places the wanted features of those matching."""
    size = len(starts)
    u8 = np.frombuffer(buf, np.uint8)
    if size and bool((stops - starts == t.record_bytes).all()):
        # All records of the template's length: every header byte of each compared at once.
        block = max(1, _BLOCK_BYTES // len(t.header_at))
        if all(
            (u8.take(starts[r : r + block, None] + t.header_at) == t.header_bytes).all()
            for r in range(0, size, block)
        ):
            begin = t.begins[t.wanted][:, None] + starts
            ends = t.begins[t.wanted + 1][:, None] + starts
            return _placed(width, size, t, begin + t.sizes, ends, np.zeros(size, bool))
    # the Example's one field: 0x0A, then the body's length in the template's number of bytes
    n = t.features_bytes
    if len(buf) < n + 1 + t.largest:
        return _none_fit(width, size)
    head = windows(buf, n + 1)[np.minimum(starts, len(buf) - n - 1)]
    body = (stops - starts - 1 - n)[:, None]
    want = ((body >> t.shift) & 0x7F) | t.cont
    good = (head[:, 0] == 0x0A) & (head[:, 1:] == want).all(axis=1) & ((body >> (7 * n)) == 0)[:, 0]
    count = len(t.entries)
    at = np.empty((count + 1, size), np.int64)  # where each entry starts, then the last ends
    at[0] = starts + 1 + n
    step = max(1, _BLOCK_BYTES // max(1, size * t.largest))
    for first in range(0, count, step):
        last = min(count, first + step)
        _places(u8, at, first, last, t.length_bytes)
        # record by record (each record's entries lie together in the buffer)
        places = np.ascontiguousarray(at[first : last + 1].T)
        # each entry's length less the template's: d
        d = places[:, 1:] - places[:, :-1] - t.whole[first:last]
        for g in t.groups:
            a, b = np.searchsorted(g.index, (first, last)).tolist()
            if a < b:
                good &= _matches(buf, places, d, g, a, b, first).all(axis=1)
        if 2 * np.count_nonzero(good) < size:
            # most records differ: walking costs as much as walking all, so leave the batch to it
            return _none_fit(width, size)
    # A place past the buffer is read at its end; its record fails anyway (entries end past it).
    good &= at[count] == stops
    return _placed(width, size, t, at[t.wanted] + t.sizes, at[t.wanted + 1], ~good)


def _placed(width: int, size: int, t: Template, start: Any, stop: Any, odd: Any) -> Predicted:
    """The template's wanted features placed at ``start`` / ``stop`` per record (a row each)."""
    if len(t.slots) == width:  # every wanted key in the template: each row is filled
        kind, starts, stops = (np.empty((width, size), np.int64) for _ in range(3))
    else:
        kind, starts, stops, _ = _none_fit(width, size)
    kind[t.slots] = t.kinds
    starts[t.slots] = start
    stops[t.slots] = stop
    return Predicted(kind, starts, stops, odd)


def _none_fit(width: int, size: int) -> Predicted:
    """No feature placed, no record fitting."""
    kind = np.full((width, size), -1, np.int64)
    start = np.zeros((width, size), np.int64)
    stop = np.zeros((width, size), np.int64)
    return Predicted(kind, start, stop, np.ones(size, bool))


def _places(u8: Any, at: Any, first: int, last: int, length_bytes: list[int]) -> None:
    """Sets ``at[i + 1]`` for entries ``first`` to ``last``, lengths in the template's sizes."""
    after = u8[1:]  # the byte after each: an entry's length follows its tag
    for i in range(first, last):
        p, n = at[i], length_bytes[i]
        if n == 1:
            np.add(p, after.take(p, mode="clip"), out=at[i + 1])
        else:
            length = np.zeros(len(p), np.int64)
            for k in range(n):
                length |= (u8.take(p + (1 + k), mode="clip") & 0x7F).astype(np.int64) << (7 * k)
            np.add(p, length, out=at[i + 1])
        at[i + 1] += 1 + n


def _matches(buf: Any, places: Any, d: Any, g: _Group, a: int, b: int, first: int) -> Any:
    """``(records, entries)``: whether each holds its header, lengths the template's plus ``d``."""
    index: Any = g.index[a:b] - first
    if index[-1] - index[0] == b - a - 1:  # entries one after another: views, not copies
        index = slice(int(index[0]), int(index[-1]) + 1)
    pos, d = places[:, index], d[:, index]
    if g.by_words:
        words: Any = np.ndarray((len(buf) - 7,), "<i8", buf, 0, (1,))
        pos = np.minimum(pos, len(buf) - g.size)
        ok = np.ones(pos.shape, bool)
        if g.low is not None and g.high is not None:
            ok = (d >= g.low[a:b]) & (d < g.high[a:b])
        for w, template, weight in zip(g.words, g.template_words, g.weights):
            expected = template[a:b] + d * weight if weight else template[a:b]
            ok &= words[pos + w] == expected
        return ok
    rows = windows(buf, g.size)[np.minimum(pos, len(buf) - g.size)]
    headers = g.headers[a:b]
    ok = np.ones(pos.shape, bool)
    for col, base, shift, cont, last in g.cols:
        length = base[a:b] + d
        ok &= rows[..., col] == ((length >> shift) & 0x7F) | cont
        if last:
            ok &= (length >> (shift + 7)) == 0
        rows[..., col] = headers[:, col]
    return _equal_rows(rows, headers) & ok
