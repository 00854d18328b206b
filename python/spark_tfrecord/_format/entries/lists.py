"""A ``Feature``'s list values, read from the wire bit for bit as TensorFlow reads them."""

from __future__ import annotations

from typing import Any

import numpy as np

from spark_tfrecord._format.entries.wire import (
    BYTES,
    FLOAT,
    INT64,
    KIND_NAMES,
    MalformedRecord,
    delimited,
    packed_varints,
    skip,
    varint,
)

_TWO_64, _TWO_63 = 1 << 64, 1 << 63
_EMPTY_F32 = np.empty(0, np.float32)


def int64_list(buf: bytes, pos: int, end: int) -> Any:
    """An ``Int64List``'s values: a list of ints when short, else an int64 ndarray."""
    if pos < end and buf[pos] == 0x0A:  # packed, as every writer writes it
        start, stop = delimited(buf, pos + 1, end)
        if stop == end:
            if stop - start > 16:
                return packed_varints(buf, start, stop)
            out = []
            while start < stop:
                b = buf[start]
                if b < 0x80:
                    out.append(b)
                    start += 1
                else:
                    v, start = varint(buf, start, stop)
                    out.append(v - _TWO_64 if v >= _TWO_63 else v)
            return out
    values: list[int] = []
    while pos < end:  # the general case: packed runs and unpacked values, in any mix
        tag, pos = varint(buf, pos, end)
        if tag == 0x0A:
            start, stop = delimited(buf, pos, end)
            while start < stop:
                v, start = varint(buf, start, stop)
                values.append(v - _TWO_64 if v >= _TWO_63 else v)
            pos = stop
        elif tag == 0x08:
            v, pos = varint(buf, pos, end)
            values.append(v - _TWO_64 if v >= _TWO_63 else v)
        else:
            pos = _other(buf, pos, end, tag, INT64)
    return values


def _other(buf: bytes, pos: int, end: int, tag: int, kind: int) -> int:
    """Past a non-value field; a ``value`` (field 1) of another wire type is malformed."""
    if tag >> 3 == 1:
        raise MalformedRecord(f"{KIND_NAMES[kind]} value with wire type {tag & 7}")
    return skip(buf, pos, end, tag & 7)


def float_list(buf: bytes, pos: int, end: int) -> Any:
    """A ``FloatList``'s values, a float32 ndarray (its own copy of the bytes)."""
    if pos < end and buf[pos] == 0x0A:  # packed
        start, stop = delimited(buf, pos + 1, end)
        if stop == end:
            if (stop - start) & 3:
                raise MalformedRecord("a packed float list whose length is not a multiple of 4")
            return np.frombuffer(buf, "<f4", (stop - start) >> 2, start).astype(np.float32)
    chunks: list[bytes] = []
    while pos < end:
        tag, pos = varint(buf, pos, end)
        if tag == 0x0A:
            start, stop = delimited(buf, pos, end)
            if (stop - start) & 3:
                raise MalformedRecord("a packed float list whose length is not a multiple of 4")
            chunks.append(buf[start:stop])
            pos = stop
        elif tag == 0x0D:
            if pos + 4 > end:
                raise MalformedRecord("a float runs past the end of its list")
            chunks.append(buf[pos : pos + 4])
            pos += 4
        else:
            pos = _other(buf, pos, end, tag, FLOAT)
    return np.frombuffer(b"".join(chunks), "<f4").astype(np.float32) if chunks else _EMPTY_F32


def bytes_list(buf: bytes, pos: int, end: int) -> list[bytes]:
    values = []
    while pos < end:
        tag = buf[pos]
        if tag == 0x0A:
            start, pos = delimited(buf, pos + 1, end)
            values.append(buf[start:pos])
        else:
            tag, pos = varint(buf, pos, end)
            pos = _other(buf, pos, end, tag, BYTES)
    return values


#: Each kind's list reader: ``(buf, start, end)`` of the list message to its values.
LIST_READERS = {BYTES: bytes_list, FLOAT: float_list, INT64: int64_list}
