"""The one walk of a record's features: an ``Example``'s (or ``SequenceExample``'s) map entries,
a ``Feature``'s lists and a ``FeatureList``'s steps, read on the wire as the jar's
``ExampleWalker`` reads them, with its ``WireCursor``'s messages and positions (a byte of the
record), so that a malformed record is reported as the jar reports it.

Every reader of whole records walks them here: the record decoder
(:mod:`spark_tfrecord._format.entries.decoder`, what ``ds[i]``, the batch path's fallback, the
jar-less source's record path and ``inspect``'s rows run) and schema inference's statistics
(:mod:`spark_tfrecord._format.entries.feature_stats`). The batch decoder predicts
where the entries lie instead (:mod:`spark_tfrecord._format.entries.record_layout`) and walks a
batch's records together only where the prediction misses
(:mod:`spark_tfrecord._format.entries.batch`).

The protobuf rules it keeps: fields in any order, unknown fields skipped (groups too), a message
given twice merges (its map entries add up), a map entry's key and value in either order or
missing (then empty), and of a ``Feature``'s ``oneof`` the last kind set wins while the same
kind set twice concatenates.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from spark_tfrecord._format.entries.lists import LIST_READERS
from spark_tfrecord._format.entries.wire import (
    BYTES,
    FLOAT,
    UNSET,
    cursor_delimited,
    cursor_error,
    cursor_skip,
    cursor_varint,
)

#: The record's field an entry is in: ``Example.features`` / ``SequenceExample.context`` (a
#: ``Feature`` each) and ``SequenceExample.feature_lists`` (a ``FeatureList`` each); the tags.
CONTEXT, FEATURE_LIST = 0x0A, 0x12
#: The tags of a Feature's lists (bytes_list, float_list, int64_list), length-delimited.
_LIST_TAGS = frozenset((0x0A, 0x12, 0x1A))


def entries(buf: bytes, sequence: bool) -> Iterator[tuple[int, bytes, int, int]]:
    """Each map entry of the record ``buf``, in the record's order: its field
    (:data:`CONTEXT` or, with ``sequence``, :data:`FEATURE_LIST`), its key, and where its
    value lies (``start``, ``end``; empty when the entry has none)."""
    pos, end = 0, len(buf)
    lists = FEATURE_LIST if sequence else -1
    while pos < end:
        tag = buf[pos]
        if tag < 0x80:
            pos += 1
        else:
            tag, pos = cursor_varint(buf, pos, end)
        if tag != CONTEXT and tag != lists:
            pos = cursor_skip(buf, pos, end, tag & 7)
            continue
        mpos, mend = cursor_delimited(buf, pos, end)
        pos = mend
        while mpos < mend:
            mtag = buf[mpos]
            if mtag < 0x80:
                mpos += 1
            else:
                mtag, mpos = cursor_varint(buf, mpos, mend)
            if mtag != 0x0A:  # not the map's entry field
                mpos = cursor_skip(buf, mpos, mend, mtag & 7)
                continue
            epos, eend = cursor_delimited(buf, mpos, mend)
            mpos = eend
            key, vstart, vend = b"", eend, eend
            while epos < eend:  # the entry: key (1) and value (2), in any order
                etag = buf[epos]
                if etag < 0x80:
                    epos += 1
                else:
                    etag, epos = cursor_varint(buf, epos, eend)
                if etag == 0x0A:
                    kstart, epos = cursor_delimited(buf, epos, eend)
                    key = buf[kstart:epos]
                elif etag == 0x12:
                    vstart, epos = cursor_delimited(buf, epos, eend)
                    vend = epos
                else:
                    epos = cursor_skip(buf, epos, eend, etag & 7)
            yield tag, key, vstart, vend


def steps(buf: bytes, pos: int, end: int) -> Iterator[tuple[int, int]]:
    """Where each ``Feature`` (step) of the ``FeatureList`` ``buf[pos:end]`` lies."""
    while pos < end:
        tag, pos = cursor_varint(buf, pos, end)
        if tag == 0x0A:
            start, pos = cursor_delimited(buf, pos, end)
            yield start, pos
        else:
            pos = cursor_skip(buf, pos, end, tag & 7)


def feature(buf: bytes, start: int, end: int) -> tuple[int, list[Any]]:
    """A ``Feature``'s kind (the last of its oneof fields, :data:`UNSET` when none is) and the
    values of each list of that kind since the last switch, as the jar's
    ``ExampleWalker.readFeature`` reads them; a list field of another wire type than
    length-delimited is malformed."""
    if start < end and buf[start] in _LIST_TAGS:  # the usual Feature: one list filling it
        kind = buf[start] >> 3
        lstart, lend = cursor_delimited(buf, start + 1, end)
        if lend == end:
            return kind, [LIST_READERS[kind](buf, lstart, lend)]
    kind = UNSET
    found: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        tag_at = pos
        tag, pos = cursor_varint(buf, pos, end)
        field = tag >> 3
        if 1 <= field <= 3:
            if tag & 7 != 2:
                raise cursor_error(f"Feature field {field} has wire type {tag & 7}", tag_at)
            lstart, pos = cursor_delimited(buf, pos, end)
            if field != kind:
                kind, found = field, []
            found.append((lstart, pos))
        else:
            pos = cursor_skip(buf, pos, end, tag & 7)
    if kind == UNSET:
        return kind, []
    read = LIST_READERS[kind]  # only the winning kind's lists are read, as the jar reads them
    return kind, [read(buf, a, b) for a, b in found]


def feature_values(buf: bytes, start: int, end: int) -> tuple[int, Any]:
    """A ``Feature``'s kind and values, its lists of the winning kind concatenated (None for
    :data:`UNSET`): :func:`feature`, for the record decoder, without a list of one list for
    the usual Feature."""
    if start < end and buf[start] in _LIST_TAGS:
        kind = buf[start] >> 3
        lstart, lend = cursor_delimited(buf, start + 1, end)
        if lend == end:
            return kind, LIST_READERS[kind](buf, lstart, lend)
    kind, lists = feature(buf, start, end)
    if kind == UNSET:
        return kind, None
    if len(lists) == 1:
        return kind, lists[0]
    if kind == BYTES:
        return kind, [v for part in lists for v in part]
    dtype = np.float32 if kind == FLOAT else np.int64
    return kind, np.concatenate([np.asarray(part, dtype) for part in lists])
