"""A batch of serialized Examples decoded at once, with NumPy: what a DataLoader's batch costs.

Decoding record by record in Python costs a few microseconds per feature, most of it the
interpreter walking tags and lengths. Here the records of a batch are walked together: each
step reads the next map entry of every record at once (vectorized varints, key bytes compared in
one gather), and each wanted feature's values are then gathered for the whole batch in one
NumPy call (a ``(B, k)`` float32 array straight from the bytes, int64 varints decoded in one
pass). The number of Python steps is the number of features per record, not records times
features.

It reads the layout every writer produces (one ``features`` field; map entries key then value;
one kind per Feature; float and int64 lists packed in one run). A record that strays from it
(unpacked lists, merged messages, unknown fields, a key twice) is decoded whole by the record
decoder instead (:class:`spark_tfrecord._format.entries.decoder.ExampleDecoder`), which reads any
valid Example; so is a record that the checks here find damaged, so that its error names it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from spark_tfrecord._format.entries import record_layout
from spark_tfrecord._format.entries.entries import gather
from spark_tfrecord._format.entries.wire import BYTES, UNSET, packed_varints, varints_at


class Located:
    """Where each wanted feature is in each record of a batch: per feature w and record r,
    ``kind[w, r]`` (-1 when the record has no such feature), and the list's payload
    ``[start, stop)``: the packed values of a float or int64 list, the entries of a bytes
    list. ``fallback[r]``: record r strays from the common layout. ``numbers``: the values of
    the features that every record holds as one number of one kind, by slot, as
    :func:`spark_tfrecord._format.columns.gathered.scalars` reads them for the whole batch
    (none unless a reader asks for them)."""

    numbers: Mapping[int, tuple[int, Any]] = MappingProxyType({})

    def __init__(self, width: int, size: int) -> None:
        self.kind = np.full((width, size), -1, np.int64)
        self.start = np.zeros((width, size), np.int64)
        self.stop = np.zeros((width, size), np.int64)
        self.fallback = np.zeros(size, bool)

    @classmethod
    def of(cls, kind: Any, start: Any, stop: Any) -> Located:
        """The located features ``kind``, ``start`` and ``stop`` (arrays of shape ``(W, B)``)."""
        out = cls.__new__(cls)
        out.kind, out.start, out.stop = kind, start, stop
        out.fallback = np.zeros(kind.shape[1], bool)
        return out


def _byte(u8: Any, p: Any) -> Any:
    return u8[np.minimum(p, len(u8) - 1)]


#: The kind :func:`walk` gives a SequenceExample's feature list (not a ``Feature``'s kind).
FEATURE_LIST = 4
#: The layouts tried per batch: a record's of the median length, then one left over's, and so
#: on. A writer's records differ in layout where a list is empty (its header has no run) or a
#: feature unset, so a batch holds a few layouts, each checked at once for the records left.
LAYOUTS = 4
#: Fewer records than this left over are walked rather than tried with another layout.
FEW_LEFT = 16


def locate(buf: bytes, starts: Any, stops: Any, keys: Sequence[bytes]) -> Located:
    """Finds the features ``keys`` in the records ``buf[starts[r]:stops[r]]``: where the layout
    of a record of the median length (:mod:`record_layout`) holds, at once; then for the records
    left, the layout of one of theirs, up to :data:`LAYOUTS` layouts; the records that still
    differ, step by step (:func:`walk`)."""
    size = len(starts)
    if size == 0:
        return Located(len(keys), 0)
    begin = np.asarray(starts, np.int64)
    end = np.asarray(stops, np.int64)
    out = Located(len(keys), size)
    left = np.arange(size)
    for _ in range(LAYOUTS):
        if len(left) < (FEW_LEFT if len(left) < size else 1):
            break
        # the layout of a record of the median length: the first record may be the odd one
        # (an array of structs' first row with no objects holds its lists with no run)
        lengths = end[left] - begin[left]
        first = int(left[np.argpartition(lengths, len(left) // 2)[len(left) // 2]])
        t = record_layout.template(buf, int(begin[first]), int(end[first]), keys)
        if t is None:
            break
        predicted = record_layout.predict(buf, begin[left], end[left], len(keys), t)
        if len(left) == size:
            out = Located.of(predicted.kind, predicted.start, predicted.stop)
        else:
            fits = ~predicted.odd
            out.kind[:, left[fits]] = predicted.kind[:, fits]
            out.start[:, left[fits]] = predicted.start[:, fits]
            out.stop[:, left[fits]] = predicted.stop[:, fits]
        if predicted.odd.all():
            break  # no record has it: most differ from it (record_layout.predict)
        left = left[predicted.odd]
    if len(left):
        walked = walk(buf, begin[left], end[left], keys)
        out.kind[:, left] = walked.kind
        out.start[:, left] = walked.start
        out.stop[:, left] = walked.stop
        out.fallback[left] = walked.fallback
    return out


def walk(
    buf: bytes, starts: Any, stops: Any, keys: Sequence[bytes], lists: bool = False
) -> Located:
    """Finds the features ``keys`` in the records ``buf[starts[r]:stops[r]]`` entry by entry:
    each step reads the next map entry of every record at once. With ``lists``, the records
    are SequenceExamples' ``feature_lists`` fields (``0x12``, a length, the map's entries):
    each wanted ``FeatureList`` is located whole, of kind :data:`FEATURE_LIST` (its steps:
    :func:`spark_tfrecord._format.entries.sequence.steps`)."""
    u8 = np.frombuffer(buf, np.uint8)
    size = len(starts)
    out = Located(len(keys), size)
    slots = {k: w for w, k in enumerate(keys)}
    ok = np.ones(size, bool)
    if size == 0:
        return out
    end = np.asarray(stops, np.int64)
    pos = np.asarray(starts, np.int64)
    nonempty = pos < end
    ok &= ~nonempty | (_byte(u8, pos) == (0x12 if lists else 0x0A))
    length, body, ok = varints_at(u8, pos + 1, ok)
    ok &= ~nonempty | (body + length == end)
    pos = np.where(nonempty, body, end)
    active = ok & (pos < end)
    while active.any():
        rows = np.flatnonzero(active)
        p, e = pos[rows], end[rows]
        good = _byte(u8, p) == 0x0A
        entry_len, entry, good = varints_at(u8, p + 1, good)
        entry_end = entry + entry_len
        good &= (entry_end <= e) & (_byte(u8, entry) == 0x0A)
        key_len, key, good = varints_at(u8, entry + 1, good)
        key_end = key + key_len
        good &= _byte(u8, key_end) == 0x12
        value_len, value, good = varints_at(u8, key_end + 1, good)
        value_end = value + value_len
        good &= value_end == entry_end
        if lists:
            kind, payload_start = np.full(len(rows), FEATURE_LIST), value
        else:
            kind, payload_start, good = feature_at(u8, value, value_end, good)
        # which wanted key each entry has: compared against the distinct keys of this step
        pending = good.copy()
        while pending.any():
            first = int(np.flatnonzero(pending)[0])
            k0, k1 = int(key[first]), int(key_end[first])
            name = buf[k0:k1]
            same = pending & (key_len == k1 - k0)
            if k1 > k0:
                idx = np.minimum(key[same][:, None] + np.arange(k1 - k0), len(u8) - 1)
                match = (u8[idx] == np.frombuffer(name, np.uint8)).all(axis=1)
                same[np.flatnonzero(same)[~match]] = False
            pending &= ~same
            w = slots.get(name)
            if w is None:
                continue
            hit = rows[same]
            seen = out.kind[w, hit] >= 0
            if seen.any():  # a key twice in a record: the record decoder applies map semantics
                out.fallback[hit[seen]] = True
            out.kind[w, hit] = kind[same]
            out.start[w, hit] = payload_start[same]
            out.stop[w, hit] = value_end[same]
        out.fallback[rows[~good]] = True
        ok[rows[~good]] = False
        pos[rows] = np.where(good, entry_end, e)
        active = ok & (pos < end)
    out.fallback |= ~ok
    return out


def feature_at(u8: Any, value: Any, value_end: Any, good: Any) -> tuple[Any, Any, Any]:
    """The ``Feature`` messages ``u8[value[i]:value_end[i]]`` as writers lay them out (one list,
    numbers in one packed run): each one's kind (:data:`UNSET` when empty), where its payload
    starts (the packed values, or the bytes list's entries; it ends at ``value_end``), and
    ``good`` with False where one strays from that layout."""
    tag = _byte(u8, value).astype(np.int64)
    unset = value == value_end
    list_len, lst, good_list = varints_at(u8, value + 1, good)
    good = np.where(unset, good, good_list & ((tag & 7) == 2) & (tag >= 0x0A) & (tag <= 0x1A))
    good &= unset | (lst + list_len == value_end)
    kind = np.where(unset, UNSET, tag >> 3)
    # a non-empty float or int64 list: one packed run filling it
    run_len, run, good_run = varints_at(u8, lst + 1, good)
    numeric = ~unset & (kind != BYTES) & (list_len > 0)
    packed = good_run & (_byte(u8, lst) == 0x0A) & (run + run_len == value_end)
    good = np.where(numeric, packed, good)
    return kind, np.where(numeric, run, np.where(unset, value_end, lst)), good


def float_values(buf: bytes, start: Any, stop: Any) -> tuple[Any, Any]:
    """The packed float lists ``buf[start[r]:stop[r]]``, concatenated, and their counts."""
    counts = (stop - start) >> 2
    return gather(buf, start, stop).view("<f4").astype(np.float32), counts


def fixed_floats(buf: bytes, start: Any, k: int) -> Any:
    """``(B, k)`` float32: each record's k packed floats at ``start``, in one new array (a
    tensor takes it as it is): the bytes of each record in one gather of rows."""
    size = len(start)
    if k == 0 or size == 0:
        return np.empty((size, k), np.float32)
    if size * k <= 2048:  # few: one gather of bytes costs less than the view
        idx = start[:, None] + np.arange(4 * k)
        rows = np.frombuffer(buf, np.uint8)[idx]
    else:
        rows = record_layout.windows(buf, 4 * k)[start]
    return rows.view("<f4").astype(np.float32, copy=False)


def one_varint(buf: bytes, start: Any, stop: Any) -> Any:
    """The int64 of each record's list ``buf[start[r]:stop[r]]`` when each holds exactly one
    varint (as ``packed_varints`` reads it): :func:`~wire.varints_at`'s, when each ends at its
    list's end; None otherwise."""
    if len(start) == 0:
        return np.empty(0, np.int64)
    if int((stop - start).min()) < 1:
        return None
    ok = np.ones(len(start), np.bool_)
    values, after, ok = varints_at(np.frombuffer(buf, np.uint8), start, ok, 10)
    return values if ok.all() and (after == stop).all() else None


def varint_counts(buf: bytes, start: Any, stop: Any) -> tuple[Any, Any] | None:
    """The packed int64 lists ``buf[start[r]:stop[r]]``, concatenated (a uint8 array), and how
    many varints each holds, counted, not decoded; None when a list ends inside a varint."""
    data = gather(buf, start, stop)
    if not len(data):
        return data, np.zeros(len(start), np.int64)
    filled = stop > start
    if (np.frombuffer(buf, np.uint8)[stop[filled] - 1] >= 0x80).any():
        return None
    done = np.concatenate([[0], np.cumsum(data < 0x80)])[np.cumsum(stop - start)]
    return data, np.diff(done, prepend=0)


def int_values(buf: bytes, start: Any, stop: Any) -> tuple[Any, Any] | None:
    """The packed int64 lists ``buf[start[r]:stop[r]]``, concatenated, and their counts; None
    when a list ends inside a varint."""
    found = varint_counts(buf, start, stop)
    if found is None:
        return None
    joined = found[0].tobytes()
    return packed_varints(joined, 0, len(joined)), found[1]
