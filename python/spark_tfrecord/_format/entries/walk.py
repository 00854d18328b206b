"""The one walk of a record's features, as the jar's ``ExampleWalker``, with its error messages.
It keeps protobuf's rules: field order, unknown fields, merging, a Feature's last oneof kind.
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

#: The record fields' tags: ``features`` / ``context`` and ``feature_lists``.
CONTEXT, FEATURE_LIST = 0x0A, 0x12
#: The tags of a Feature's lists (bytes_list, float_list, int64_list), length-delimited.
_LIST_TAGS = frozenset((0x0A, 0x12, 0x1A))


def entries(buf: bytes, sequence: bool) -> Iterator[tuple[int, bytes, int, int]]:
    """Each map entry, in order: (field, key, value start, value end; empty when it has none)."""
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
    """A ``Feature``'s kind (last oneof field set) and its lists of that kind since the switch."""
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
    """A ``Feature``'s kind and values, its winning kind's lists concatenated (None if unset)."""
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
