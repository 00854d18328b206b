"""The ``Features`` and ``FeatureLists`` messages of an ``Example`` / ``SequenceExample`` read on
the wire, as the jar's ``ExampleWalker`` reads them: a map's entries (key, where its value lies)
and a ``Feature``'s kind and lists. The walk of schema inference's statistics
(:mod:`spark_tfrecord._format.feature_stats`) and that of ``inspect``'s rows
(:mod:`spark_tfrecord._format.json_rows`) read records with them.

They use the jar's ``WireCursor`` (wire.py's cursor_* functions), with its messages and positions
(a byte of the record), so that a malformed record is reported as the jar reports it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from spark_tfrecord._format.decoder import LIST_READERS
from spark_tfrecord._format.wire import (
    UNSET,
    cursor_delimited,
    cursor_error,
    cursor_skip,
    cursor_varint,
)


def feature_lists(buf: bytes, start: int, end: int) -> tuple[int, list[Any]]:
    """A ``Feature``'s kind (the last of its oneof fields) and the lists of that kind since the
    last switch, as the jar's ``ExampleWalker.readFeature`` reads them (each list's values)."""
    kind = UNSET
    lists: list[Any] = []
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
                kind, lists = field, []
            lists.append(LIST_READERS[field](buf, lstart, pos))
        else:
            pos = cursor_skip(buf, pos, end, tag & 7)
    return kind, lists


def map_entries(buf: bytes, pos: int, end: int) -> Iterator[tuple[bytes, int, int]]:
    """The map entries of a ``Features`` / ``FeatureLists`` message: (key, value start, end),
    key and value in either order or missing (then empty), other fields skipped."""
    while pos < end:
        tag, pos = cursor_varint(buf, pos, end)
        if tag != 0x0A:
            pos = cursor_skip(buf, pos, end, tag & 7)
            continue
        epos, eend = cursor_delimited(buf, pos, end)
        pos = eend
        key, vstart, vend = b"", eend, eend
        while epos < eend:
            etag, epos = cursor_varint(buf, epos, eend)
            if etag == 0x0A:
                kstart, epos = cursor_delimited(buf, epos, eend)
                key = buf[kstart:epos]
            elif etag == 0x12:
                vstart, epos = cursor_delimited(buf, epos, eend)
                vend = epos
            else:
                epos = cursor_skip(buf, epos, eend, etag & 7)
        yield key, vstart, vend
