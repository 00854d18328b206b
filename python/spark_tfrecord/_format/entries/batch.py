"""A batch of Examples located at once with NumPy; strays fall back to the record decoder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from spark_tfrecord._format.entries import record_layout
from spark_tfrecord._format.entries.entries import gather
from spark_tfrecord._format.entries.wire import BYTES, UNSET, packed_varints, varints_at


class Located:
    """Where each wanted feature is in each record of a batch.
    ``kind[w, r]`` (-1: absent), the list payload ``[start, stop)`` (packed numbers or a bytes
    list's entries); ``fallback[r]``: record r strays; ``numbers``: by slot, the values of features
    every record holds as one number (only when a reader asks).
    """

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
#: Layouts tried per batch: a writer's records differ where a list is empty or a feature unset.
LAYOUTS = 4
#: Fewer records than this left over are walked rather than tried with another layout.
FEW_LEFT = 16


def locate(buf: bytes, starts: Any, stops: Any, keys: Sequence[bytes]) -> Located:
    """Locates ``keys``: up to :data:`LAYOUTS` predicted layouts, then the records left walked."""
    size = len(starts)
    begin = np.asarray(starts, np.int64)
    end = np.asarray(stops, np.int64)
    out = Located(len(keys), size)
    left = np.arange(size)
    for _ in range(LAYOUTS):
        if len(left) < (FEW_LEFT if len(left) < size else 1):
            break
        # a median-length record's layout: the first record may be the odd one
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
    """Locates ``keys`` an entry of every record at a time; ``lists``: in feature lists."""
    u8 = np.frombuffer(buf, np.uint8)
    size = len(starts)
    out = Located(len(keys), size)
    slots = {k: w for w, k in enumerate(keys)}
    if size == 0:
        return out
    end = np.asarray(stops, np.int64)
    pos = np.asarray(starts, np.int64)
    nonempty = pos < end
    ok = ~nonempty | (_byte(u8, pos) == (0x12 if lists else 0x0A))
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
    """Each ``Feature``'s kind and payload start; ``good`` False where one strays."""
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
    """``(B, k)`` float32: each record's k packed floats at ``start``, in a new array."""
    size = len(start)
    if k == 0 or size == 0:
        return np.empty((size, k), np.float32)
    if size * k <= 2048:  # few: one gather of bytes costs less than the view
        rows = np.frombuffer(buf, np.uint8)[start[:, None] + np.arange(4 * k)]
    else:
        rows = record_layout.windows(buf, 4 * k)[start]
    return rows.view("<f4").astype(np.float32, copy=False)


def one_varint(buf: bytes, start: Any, stop: Any) -> Any:
    """Each list's int64 when every list holds exactly one varint filling it; else None."""
    if len(start) == 0:
        return np.empty(0, np.int64)
    if int((stop - start).min()) < 1:
        return None
    ok = np.ones(len(start), np.bool_)
    values, after, ok = varints_at(np.frombuffer(buf, np.uint8), start, ok, 10)
    return values if ok.all() and (after == stop).all() else None


def varint_counts(buf: bytes, start: Any, stop: Any) -> tuple[Any, Any] | None:
    """The packed lists' bytes concatenated and their varint counts; None if one ends mid-varint."""
    data = gather(buf, start, stop)
    if not len(data):
        return data, np.zeros(len(start), np.int64)
    filled = stop > start
    if (np.frombuffer(buf, np.uint8)[stop[filled] - 1] >= 0x80).any():
        return None
    done = np.concatenate([[0], np.cumsum(data < 0x80)])[np.cumsum(stop - start)]
    return data, np.diff(done, prepend=0)


def int_values(buf: bytes, start: Any, stop: Any) -> tuple[Any, Any] | None:
    """The packed int64 lists concatenated, and their counts; None if one ends inside a varint."""
    found = varint_counts(buf, start, stop)
    if found is None:
        return None
    joined = found[0].tobytes()
    return packed_varints(joined, 0, len(joined)), found[1]
