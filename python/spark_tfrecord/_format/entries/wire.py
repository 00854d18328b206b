"""Protobuf's wire format: the primitives the Example decoders walk records with."""

from __future__ import annotations

from typing import Any

import numpy as np

#: ``Feature``'s field numbers, one per kind (the jar's ``ProtoWire.Kind…``); 0: none set.
UNSET, BYTES, FLOAT, INT64 = 0, 1, 2, 3
#: The TensorFlow name of each kind.
KIND_NAMES = {UNSET: "no kind", BYTES: "bytes_list", FLOAT: "float_list", INT64: "int64_list"}


class MalformedRecord(Exception):
    """The record's bytes are not a valid Example; ``key`` is the feature at fault, if known."""

    def __init__(self, reason: str, key: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.key = key


def varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """The varint at ``pos`` (as an unsigned 64-bit number) and the position after it."""
    result = shift = 0
    while pos < end:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7
        if shift >= 70:
            raise MalformedRecord("a varint longer than 10 bytes")
    raise MalformedRecord("a varint runs past the end of its message")


def delimited(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A length-delimited field's (start, end) after its tag, checked against ``end``."""
    b = buf[pos] if pos < end else 0x80
    if b < 0x80:
        start, n = pos + 1, b
    else:
        n, start = varint(buf, pos, end)
    stop = start + n
    if stop > end:
        raise MalformedRecord(f"a field of {n} bytes runs past the end of its message")
    return start, stop


def skip(buf: bytes, pos: int, end: int, wire_type: int) -> int:
    """The position after an unknown field's value (protobuf readers skip unknown fields)."""
    if wire_type == 0:
        return varint(buf, pos, end)[1]
    if wire_type == 2:
        return delimited(buf, pos, end)[1]
    size = 8 if wire_type == 1 else 4 if wire_type == 5 else -1
    if size < 0 or pos + size > end:
        raise MalformedRecord(f"a field of wire type {wire_type} that cannot be read")
    return pos + size


# --- the jar's WireCursor ------------------------------------------------------------------------
# The same reads with the jar's messages and positions, Java's signed varints, groups skipped.


def cursor_error(what: str, at: int) -> MalformedRecord:
    """A malformed record as the jar words it: ``what at byte <at> of the record``."""
    return MalformedRecord(f"{what} at byte {at} of the record")


def cursor_varint(buf: bytes, pos: int, limit: int) -> tuple[int, int]:
    """:func:`varint`, as a signed int64 (as Java reads it), with the jar's messages."""
    if pos < limit:
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
    try:
        value, after = varint(buf, pos, limit)
    except MalformedRecord:
        if limit - pos >= 10:  # ten bytes there, each saying that more follow
            raise cursor_error("varint longer than 10 bytes", pos + 10) from None
        raise cursor_error("varint runs past its message", max(pos, limit)) from None
    return (value - (1 << 64) if value >= 1 << 63 else value), after


def cursor_delimited(buf: bytes, pos: int, limit: int) -> tuple[int, int]:
    """A length-delimited field's (start, end) after its tag, checked against ``limit``."""
    n = buf[pos] if pos < limit else 0x80
    if n < 0x80 and n < limit - pos:  # a short field, whole (most are)
        return pos + 1, pos + 1 + n
    n, start = cursor_varint(buf, pos, limit)
    if n < 0 or n > limit - start:
        raise cursor_error(f"length {n} runs past its message", pos)
    return start, start + n


def cursor_skip(buf: bytes, pos: int, limit: int, wire_type: int) -> int:
    """The position after the value of a field of ``wire_type`` whose tag was just read."""
    if wire_type == 0:
        return cursor_varint(buf, pos, limit)[1]
    if wire_type == 2:
        return cursor_delimited(buf, pos, limit)[1]
    if wire_type in (1, 5):
        n = 8 if wire_type == 1 else 4
        if limit - pos < n:
            raise cursor_error(f"{n}-byte field runs past its message", pos)
        return pos + n
    if wire_type == 3:  # a group: fields up to its end tag, groups in it counted, not recursed
        depth = 1
        while depth:
            tag, pos = cursor_varint(buf, pos, limit)
            if tag & 7 == 4:
                depth -= 1
            elif tag & 7 == 3:
                depth += 1
            else:
                pos = cursor_skip(buf, pos, limit, tag & 7)
        return pos
    raise cursor_error(f"invalid wire type {wire_type}", pos)


def packed_varints(buf: bytes, start: int, end: int) -> Any:
    """The packed varints of ``buf[start:end]`` as an int64 ndarray, vectorized."""
    b = np.frombuffer(buf, np.uint8, end - start, start)
    last = b < 0x80
    if last.all():
        return b.astype(np.int64)
    if not last[-1]:
        raise MalformedRecord("a packed varint list ends inside a varint")
    ends = np.flatnonzero(last)
    starts = np.concatenate([[0], ends[:-1] + 1])
    lengths = ends - starts + 1
    if int(lengths.max()) > 10:
        raise MalformedRecord("a varint longer than 10 bytes")
    # byte k of every varint that has one: a step per byte of the longest, not an index per byte
    out = (b[starts] & 0x7F).astype(np.uint64)
    more = lengths > 1
    second = (b[np.minimum(starts + 1, b.size - 1)] & 0x7F).astype(np.uint64) << np.uint64(7)
    out |= np.where(more, second, np.uint64(0))
    for k in range(2, int(lengths.max())):
        going = np.flatnonzero(lengths > k)
        out[going] |= (b[starts[going] + k] & 0x7F).astype(np.uint64) << np.uint64(7 * k)
    return out.view(np.int64)


def varints_at(u8: Any, p: Any, ok: Any, longest: int = 5) -> tuple[Any, Any, Any]:
    """Varints (``longest`` bytes at most) at ``p``: int64 values, positions after, new ``ok``."""
    last = len(u8) - 1
    b = u8[np.minimum(p, last)]
    more = b >= 0x80
    if not more.any():
        return b.astype(np.int64), p + 1, ok & (p <= last)
    value = (b & 0x7F).astype(np.int64)
    n = np.ones(len(p), np.int64)
    for k in range(1, longest):
        b = u8[np.minimum(p + k, last)]
        value |= np.where(more, (b & 0x7F).astype(np.int64) << (7 * k), 0)
        n += more
        more &= b >= 0x80
        if not more.any():
            return value, p + n, ok & (p + n - 1 <= last)
    return value, p + n, ok & ~more & (p + n - 1 <= last)
