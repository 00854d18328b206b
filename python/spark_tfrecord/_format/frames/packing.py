"""Protobuf bytes for whole columns at once: varints, length-delimited fields, row assembly.
No loop over rows: values are :class:`Ragged` byte strings per unit, messages :class:`Parts`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

Bytes = npt.NDArray[np.uint8]
Ints = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]

#: Above this many bytes per unit on average, a piece is copied per unit, not by index arrays.
_COPY_PER_UNIT = 1024


class Ragged(NamedTuple):
    """Unit i's bytes are ``buf[start[i] : start[i] + size[i]]``; size 0 for an absent unit."""

    buf: Bytes
    start: Ints
    size: Ints
    #: If known, ``start[i] == start[0] + stride * i`` for every unit (0: a constant).
    stride: int | None = None


class Parts(NamedTuple):
    """Unit i's bytes are piece i of every part, in order; ``size`` is their total per unit."""

    parts: list[Ragged]
    size: Ints


def offsets(size: Any, dtype: type[np.signedinteger[Any]] = np.int64) -> Any:
    """The n+1 offsets of units of ``size`` laid end to end (``dtype`` np.int32 for Arrow's)."""
    out = np.zeros(len(size) + 1, dtype)
    np.cumsum(size, dtype=dtype, out=out[1:])
    return out


def const(data: bytes, present: Mask) -> Ragged:
    """``data`` for every present unit, nothing for the others."""
    buf = np.frombuffer(data, np.uint8)
    return Ragged(buf, np.zeros(len(present), np.int64), np.where(present, len(data), 0), 0)


#: The smallest value of each varint size from 2 bytes on.
_VARINT_STEPS = np.array([1 << (7 * k) for k in range(1, 10)], np.uint64)


def varints(values: npt.NDArray[np.int64] | npt.NDArray[np.uint64], present: Mask | None) -> Ragged:
    """Values as varints end to end (a negative int64: 10 bytes); nothing where not ``present``."""
    v = values.astype(np.int64, copy=False).view(np.uint64)
    if present is not None and present.all():
        present = None
    n = len(v)
    if n and int(v.max()) < 0x80:
        # Every value one byte (lengths of short messages, small labels): the values are the bytes.
        if present is None:
            return Ragged(v.astype(np.uint8), np.arange(n, dtype=np.int64), np.ones(n, np.int64), 1)
        sizes = present.astype(np.int64)
        return Ragged(v[present].astype(np.uint8), offsets(sizes)[:-1], sizes)
    sizes = np.searchsorted(_VARINT_STEPS, v, side="right") + 1  # 1 to 10 bytes
    if present is not None:
        sizes = np.where(present, sizes, 0)
    # Byte k of every varint in column k of a matrix, then the matrix's bytes that are varints'.
    longest = int(sizes.max()) if len(sizes) else 0
    bytes_ = np.empty((n, longest), np.uint8)
    for k in range(longest):
        byte = (v >> np.uint64(7 * k)).astype(np.uint8) & np.uint8(0x7F)
        bytes_[:, k] = byte | ((sizes > k + 1).astype(np.uint8) << np.uint8(7))
    buf = bytes_[np.arange(longest, dtype=np.int64) < sizes[:, None]]
    return Ragged(buf, offsets(sizes)[:-1], sizes, None)


def lengths(sizes: Ints, present: Mask) -> Ragged:
    """Length-prefix varints of ``sizes`` for ``present`` units; one constant if all are equal."""
    if len(sizes) and present.all() and int(sizes.min()) == int(sizes.max()):
        return const(varint(int(sizes[0])), present)
    return varints(sizes, present)


def varint(value: int) -> bytes:
    """One non-negative value as a varint (the keys' lengths, in headers built once)."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field(tag: bytes, content: Parts, present: Mask) -> Parts:
    """A length-delimited field for present units; an absent unit's content must be empty."""
    prefix = lengths(content.size, present)
    size = np.where(present, len(tag) + prefix.size + content.size, 0)
    return Parts([const(tag, present), prefix, *content.parts], size)


def single(r: Ragged) -> Parts:
    """One ragged piece as a message's parts."""
    return Parts([r], r.size)


#: At most this many slot bytes per piece byte (plus 32 a unit), else pieces go one by one.
_PADDING = 2
#: At most this share of bytes in long pieces, else pieces go one by one: long pieces are
#: copied per unit either way, and the slots' compress would copy them again.
_LONG_SHARE = 0.5


def concat(pieces: Sequence[Ragged], n: int) -> tuple[Bytes, Ints]:
    """Unit i's pieces laid end to end, for every unit: the bytes and their n+1 offsets."""
    total = np.zeros(n, np.int64)
    for p in pieces:
        total += p.size
    off = offsets(total)
    widths = [int(p.size.max()) if n else 0 for p in pieces]
    sums = [int(p.size.sum()) for p in pieces]
    bytes_ = int(off[-1])
    long = sum(s for s in sums if s > _COPY_PER_UNIT * n)
    if sum(widths) * n <= _PADDING * (bytes_ + 32 * n) and long <= _LONG_SHARE * bytes_:
        return _compressed(pieces, widths, sums, n), off
    out = np.empty(bytes_, np.uint8)
    pos = off[:-1].copy()
    for p in pieces:
        _place(out, pos, p)
        pos += p.size
    return out, off


def _compressed(pieces: Sequence[Ragged], widths: list[int], sums: list[int], n: int) -> Bytes:
    """The pieces in slots of ``widths`` columns of an n-row matrix, kept bytes row after row."""
    width = sum(widths)
    row = np.zeros(width, np.uint8)
    slots: list[tuple[int, Ragged, int, bool]] = []  # (column, piece, width, every unit as long)
    at = 0
    for p, w, total in zip(pieces, widths, sums):
        if w == 0:
            continue
        first = int(p.start[0])
        fixed = total == w * n
        if fixed and (p.stride == 0 or (p.stride is None and np.all(p.start == first))):
            row[at : at + w] = p.buf[first : first + w]
        else:
            slots.append((at, p, w, fixed))
        at += w
    matrix = np.empty((n, width), np.uint8)
    matrix[...] = row
    keep = None if all(fixed for *_, fixed in slots) else np.ones((n, width), np.bool_)
    for at, p, w, fixed in slots:
        start, size = p.start, p.size
        slot, first = matrix[:, at : at + w], int(start[0])
        if not fixed:
            assert keep is not None
            np.less(np.arange(w, dtype=np.int64), size[:, None], out=keep[:, at : at + w])
        if p.stride == 0 or (p.stride is None and np.all(start == first)):
            slot[...] = p.buf[first : first + w]  # a constant some units have (or a prefix of)
        elif fixed and (
            p.stride == w or (p.stride is None and np.array_equal(start, first + w * np.arange(n)))
        ):
            slot[...] = p.buf[first : first + w * n].reshape(n, w)
        elif int(size.sum()) > _COPY_PER_UNIT * n:
            for i in np.flatnonzero(size).tolist():
                s, k = int(start[i]), int(size[i])
                slot[i, :k] = p.buf[s : s + k]
        elif _is_laid_out(p):  # the units' bytes one run: the slot's kept bytes, in order
            assert keep is not None
            slot[keep[:, at : at + w]] = p.buf[first : first + int(size.sum())]
        else:
            index = start[:, None] + np.arange(w, dtype=np.int64)
            np.minimum(index, len(p.buf) - 1, out=index)  # past a unit's end: dropped
            slot[...] = p.buf[index]
    out: Bytes = matrix.ravel() if keep is None else matrix[keep]  # every unit as long: no gaps
    return out


def materialize(parts: Parts, n: int) -> Ragged:
    """The parts copied into one buffer, unit after unit."""
    if len(parts.parts) == 1 and _is_laid_out(parts.parts[0]):
        return parts.parts[0]
    buf, off = concat(parts.parts, n)
    return Ragged(buf, off[:-1], np.diff(off))


def group(units: Ragged, unit_offsets: Ints, present: Mask) -> Ragged:
    """Rows of consecutive units (row r: ``unit_offsets[r]`` to ``[r + 1]``); empty if absent."""
    ends = np.append(units.start, units.start[-1] + units.size[-1] if len(units.size) else 0)
    starts = ends[unit_offsets[:-1]]
    size = np.where(present, ends[unit_offsets[1:]] - starts, 0)
    return Ragged(units.buf, starts, size)


def _is_laid_out(r: Ragged) -> bool:
    return len(r.size) == 0 or bool(np.array_equal(r.start[1:], r.start[:-1] + r.size[:-1]))


def _place(out: Bytes, pos: Ints, p: Ragged) -> None:
    """Copies each unit's piece of ``p`` to ``out`` at ``pos``."""
    total = int(p.size.sum())
    if total == 0:
        return
    if total > _COPY_PER_UNIT * len(p.size):
        buf, start, size = p.buf, p.start, p.size
        for i in np.flatnonzero(size).tolist():
            s, d, k = int(start[i]), int(pos[i]), int(size[i])
            out[d : d + k] = buf[s : s + k]
        return
    at = p.size > 0
    size = p.size[at]
    k = int(size[0])
    if np.all(size == k):
        # Pieces of one length: a 2-D scatter, from a constant or contiguous source, no gather.
        cols = np.arange(k, dtype=np.int64)
        into = pos[at][:, None] + cols
        start = p.start[at]
        if np.all(start == start[0]):
            out[into] = p.buf[int(start[0]) : int(start[0]) + k]
        elif np.array_equal(start, start[0] + k * np.arange(len(start))):
            first = int(start[0])
            out[into] = p.buf[first : first + k * len(start)].reshape(-1, k)
        else:
            out[into] = p.buf[start[:, None] + cols]
        return
    before = offsets(size)[:-1]
    step = np.arange(total, dtype=np.int64)
    source = np.repeat(p.start[at] - before, size) + step
    out[np.repeat(pos[at] - before, size) + step] = p.buf[source]
