"""What a batch of Examples says of its features, at once, for records laid out as its first."""

from __future__ import annotations

from typing import Any

import numpy as np

from spark_tfrecord._format.entries import batch, record_layout
from spark_tfrecord._format.entries.entries import bytes_entries, gather
from spark_tfrecord._format.entries.feature_stats import SampledFeatures, merge_kinds
from spark_tfrecord._format.entries.walk import entries
from spark_tfrecord._format.entries.wire import BYTES, FLOAT, INT64, UNSET, MalformedRecord

#: How many int64 lists are counted at once.
_LISTS = 1 << 16


def add_batch(buf: bytes, starts: Any, stops: Any, features: SampledFeatures) -> Any:
    """Adds what records laid out as the first say; returns the others' indices, in order."""
    begin, end = np.asarray(starts, np.int64), np.asarray(stops, np.int64)
    everyone = np.arange(len(begin))
    if not len(begin):
        return everyone
    first = bytes(buf[int(begin[0]) : int(end[0])])
    try:
        keys = [key for _, key, _, _ in entries(first, False)]
    except (MalformedRecord, IndexError):
        return everyone
    t = record_layout.template(buf, int(begin[0]), int(end[0]), keys)
    if t is None:
        return everyone
    predicted = record_layout.predict(buf, begin, end, len(keys), t)
    rows = np.flatnonzero(~predicted.odd)
    if not len(rows):
        return everyone
    kinds = predicted.kind[:, rows[0]]
    whole = len(rows) == len(begin)
    found: list[tuple[int, int, bool]] = [(UNSET, 0, False)] * len(keys)
    for kind in (FLOAT, INT64, BYTES):
        at = np.flatnonzero(kinds == kind)
        if not len(at):
            continue
        start, stop = predicted.start[at], predicted.stop[at]
        if not whole:
            start, stop = start[:, rows], stop[:, rows]
        seen = _seen(buf, kind, start, stop)
        if seen is None:
            return everyone  # a list that strays: the records' own walk, for its error
        for w, most, binary in zip(at.tolist(), *seen):
            found[w] = (kind, most, binary)
    for key, (kind, most, binary) in zip(keys, found):
        s = features.context(key)
        s.kind = merge_kinds(s.kind, kind)
        s.max_values = max(s.max_values, most)
        s.binary = s.binary or binary
    return np.flatnonzero(predicted.odd)


def _seen(buf: bytes, kind: int, start: Any, stop: Any) -> tuple[list[int], list[bool]] | None:
    """Per feature (a row) of ``kind``: most values in a record, any non-UTF-8; None: strays."""
    lengths = stop - start
    if kind == FLOAT:
        if (lengths & 3).any():
            return None
        return (lengths.max(axis=1) >> 2).tolist(), [False] * len(lengths)
    if kind == INT64:
        most: list[int] = []
        step = max(1, _LISTS // lengths.shape[1])  # so that the gathered bytes stay small
        for f in range(0, len(start), step):
            counts = _varint_counts(buf, start[f : f + step].ravel(), stop[f : f + step].ravel())
            if counts is None:
                return None
            most += counts.reshape(-1, lengths.shape[1]).max(axis=1).tolist()
        return most, [False] * len(lengths)
    strings = []  # one feature at a time
    for a, b in zip(start, stop):
        one = _strings(buf, a, b)
        if one is None:
            return None
        strings.append(one)
    return [most for most, _ in strings], [binary for _, binary in strings]


def _varint_counts(buf: bytes, start: Any, stop: Any) -> Any:
    """Varints per packed list; None if one ends inside a varint or exceeds 10 bytes."""
    found = batch.varint_counts(buf, start, stop)
    if found is None:
        return None
    data, counts = found
    ends = np.flatnonzero(data < 0x80)
    if len(ends) < len(data) and int(np.diff(ends, prepend=-1).max()) > 10:
        return None
    return counts


def _strings(buf: bytes, start: Any, stop: Any) -> tuple[int, bool] | None:
    """Most values per record in the bytes lists, whether one is not UTF-8; None if one strays."""
    found = bytes_entries(buf, start, stop)
    if found is None:
        return None
    first, last, counts = found
    data = gather(buf, first, last)
    lengths = last - first
    # every value is UTF-8 when the whole is and none starts inside a character
    heads = data[(np.cumsum(lengths) - lengths)[lengths > 0]]
    binary = bool(((heads & 0xC0) == 0x80).any())
    if not binary:
        try:
            str(data, "utf-8")
        except UnicodeDecodeError:
            binary = True
    return int(counts.max()), binary
