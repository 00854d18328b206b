"""What a batch of Examples says of its features, at once: the records laid out as the batch's
first one (:mod:`~spark_tfrecord._format.entries.record_layout`: the same keys in the same
order, one kind each) give each feature's kind, most values and UTF-8 check for all of them in
a few NumPy calls, as :func:`~spark_tfrecord._format.entries.feature_stats.add_record` would
one record at a time. The others are left to it, in their order, so that names are numbered as
they are first met and a malformed record fails there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spark_tfrecord._format.entries import batch, record_layout
from spark_tfrecord._format.entries.entries import bytes_entries, gather
from spark_tfrecord._format.entries.feature_stats import SampledFeatures, merge_kinds
from spark_tfrecord._format.entries.walk import entries
from spark_tfrecord._format.entries.wire import BYTES, FLOAT, UNSET, MalformedRecord


def add_batch(buf: bytes, starts: Any, stops: Any, features: SampledFeatures) -> Any:
    """Adds to ``features`` what the Examples ``buf[starts[r]:stops[r]]`` laid out as the first
    one say; the indices of the others (an int64 array, in order), for ``add_record``."""
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
    found = []
    for w in range(len(keys)):
        kind = int(predicted.kind[w, rows[0]])
        seen = _seen(buf, kind, predicted.start[w, rows], predicted.stop[w, rows])
        if seen is None:
            return everyone  # a list that strays: the records' own walk, for its error
        found.append((kind, *seen))
    for key, (kind, most, binary) in zip(keys, found):
        s = features.context(key)
        s.kind = merge_kinds(s.kind, kind)
        s.max_values = max(s.max_values, most)
        s.binary = s.binary or binary
    return np.flatnonzero(predicted.odd)


def _seen(buf: bytes, kind: int, start: Any, stop: Any) -> tuple[int, bool] | None:
    """The most values a record holds in the lists ``buf[start[r]:stop[r]]`` of ``kind``, and
    whether a bytes value is not UTF-8; None when a list strays from the layout writers
    produce."""
    if kind == UNSET:
        return 0, False
    if kind == FLOAT:
        lengths = stop - start
        return None if (lengths & 3).any() else (int(lengths.max()) >> 2, False)
    if kind != BYTES:
        try:
            ints = batch.int_values(buf, start, stop)
        except MalformedRecord:
            return None
        return None if ints is None else (int(ints[1].max()), False)
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
