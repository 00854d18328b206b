"""The entries of a batch's bytes lists, found at once with NumPy, and gathered.

:func:`spark_tfrecord._format.entries.batch.locate` gives, per record, where a wanted
``BytesList``'s payload lies (its entries: ``0x0A``, a length, the bytes, repeated).
:func:`bytes_entries` walks those payloads together, one step per entry (a scalar's list: one step
for the whole batch), and :func:`gather` concatenates the entries' bytes in one NumPy call, so that
a string or binary column's offsets and data come from the batch without a Python object per value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spark_tfrecord._format.entries.record_layout import windows
from spark_tfrecord._format.entries.wire import varints_at


def bytes_entries(buf: bytes, start: Any, stop: Any) -> tuple[Any, Any, Any] | None:
    """The entries of the bytes lists ``buf[start[r]:stop[r]]``: each entry's start and stop
    in ``buf``, record after record (in each record in its order), and the number of entries
    of each record; None where a list strays from the layout writers produce (a field other
    than ``value``, an entry running past its list), which the record decoder then reads."""
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
        # entries of about one length: each one's widest bytes copied as a row, then the rows
        # cut to their lengths (an index a row, not a byte)
        rows = windows(buf, widest)[start]
        if widest * len(lengths) == total:
            return rows.reshape(-1)
        return rows[np.arange(widest) < lengths[:, None]]
    shift = np.repeat(start - (np.cumsum(lengths) - lengths), lengths)
    return u8[shift + np.arange(total)]
