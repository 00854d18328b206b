"""A batch's bytes-list entries, found for all records at once with NumPy, and gathered."""

from __future__ import annotations

from typing import Any

import numpy as np

from spark_tfrecord._format.entries.record_layout import windows
from spark_tfrecord._format.entries.wire import varints_at


def bytes_entries(buf: bytes, start: Any, stop: Any) -> tuple[Any, Any, Any] | None:
    """The lists' entries: starts, stops (record-major), per-record counts; None if one strays."""
    u8 = np.frombuffer(buf, np.uint8)
    end = np.asarray(stop, np.int64)
    pos = np.asarray(start, np.int64).copy()
    counts = np.zeros(len(pos), np.int64)
    rows: list[Any] = []
    firsts: list[Any] = []
    lasts: list[Any] = []
    active = np.flatnonzero(pos < end)
    while len(active):
        p, e = pos[active], end[active]
        good = u8[np.minimum(p, len(u8) - 1)] == 0x0A
        length, body, good = varints_at(u8, p + 1, good)
        after = body + length
        if not (good & (after <= e)).all():
            return None
        rows.append(active)
        firsts.append(body)
        lasts.append(after)
        counts[active] += 1
        pos[active] = after
        active = active[after < e]
    if not rows:
        return np.empty(0, np.int64), np.empty(0, np.int64), counts
    if len(rows) == 1:
        return firsts[0], lasts[0], counts
    order = np.argsort(np.concatenate(rows), kind="stable")  # record-major, steps in order
    return np.concatenate(firsts)[order], np.concatenate(lasts)[order], counts


def gather(buf: bytes, start: Any, stop: Any) -> Any:
    """The bytes ``buf[start[i]:stop[i]]`` of every i, concatenated, as a uint8 array."""
    u8 = np.frombuffer(buf, np.uint8)
    lengths = np.asarray(stop, np.int64) - np.asarray(start, np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.empty(0, np.uint8)
    if total > 256 * len(lengths):  # long entries (images): a copy each beats an index a byte
        return np.concatenate([u8[a:b] for a, b in zip(start.tolist(), stop.tolist())])
    widest = int(lengths.max())
    if widest * len(lengths) <= 2 * total and int(start.max()) + widest <= len(u8):
        # entries of about one length: each one's widest bytes as a row, cut to length
        rows = windows(buf, widest)[start]
        if widest * len(lengths) == total:
            return rows.reshape(-1)
        # (compared as int16: 2.5 times as fast as int64 for rows of some 60 bytes)
        small: Any = np.int16 if widest < 2**15 else np.int64
        return rows[np.arange(widest, dtype=small) < lengths.astype(small)[:, None]]
    shift = np.repeat(start - (np.cumsum(lengths) - lengths), lengths)
    return u8[shift + np.arange(total)]
