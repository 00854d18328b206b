"""The ``tf.train.Example`` wire format, decoded in Python for trainers: no TensorFlow, no JVM.

:class:`ExampleDecoder` is built once for the feature keys a reader wants; :meth:`decode` walks
one serialized Example (``Example.features`` → ``Features.feature``, a map of key → ``Feature``)
and returns, per wanted key, its kind and values. Keys not wanted are skipped by their length,
never parsed. Values are what TensorFlow reads, bit for bit: float32 from their little-endian
bytes (NaN payloads, -0.0 and ±inf kept), int64 from two's-complement varints, bytes as they are.

Why this and not the ``protobuf`` package's parser (upb, in C): parsing is fast there, but a
trainer then walks generic message objects feature by feature (``features.feature[key]
.float_list.value``), one Python object per value, and protobuf becomes a dependency whose
version must suit TensorFlow's. Here a packed float list becomes an ndarray in one
``numpy.frombuffer``, a packed int64 list one vectorized varint decode, and only the wanted keys
are touched (benchmarks/loaders.py measures both ways).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from spark_tfrecord._format.wire import (
    BYTES,
    FLOAT,
    INT64,
    KIND_NAMES,
    UNSET,
    MalformedRecord,
    delimited,
    packed_varints,
    skip,
    varint,
)

__all__ = [
    "BYTES",
    "FLOAT",
    "INT64",
    "KIND_NAMES",
    "STEPS",
    "UNSET",
    "ExampleDecoder",
    "MalformedRecord",
    "bytes_list",
]

#: Not a ``Feature`` kind: a SequenceExample's ``FeatureList``, whose values are its steps'
#: ``(kind, values)``, one per ``Feature``.
STEPS = -1

_F32 = struct.Struct("<f")
_TWO_64, _TWO_63 = 1 << 64, 1 << 63
_EMPTY_F32 = np.empty(0, np.float32)
_EMPTY_I64 = np.empty(0, np.int64)


def _int64_list(buf: bytes, pos: int, end: int) -> Any:
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
    """Past a list's field that is not a value of its kind: a ``value`` (field 1) of another
    wire type is malformed, as the jar says; another field is skipped."""
    if tag >> 3 == 1:
        raise MalformedRecord(f"{KIND_NAMES[kind]} value with wire type {tag & 7}")
    return skip(buf, pos, end, tag & 7)


def _float_list(buf: bytes, pos: int, end: int) -> Any:
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
LIST_READERS = {BYTES: bytes_list, FLOAT: _float_list, INT64: _int64_list}
#: The tags of a Feature's lists (bytes_list, float_list, int64_list), length-delimited.
_LIST_TAGS = frozenset((0x0A, 0x12, 0x1A))


def _feature(buf: bytes, pos: int, end: int) -> tuple[int, Any]:
    """A ``Feature``'s kind and values. Of several kinds set the last wins (a ``oneof``); the
    same kind set twice merges (its values concatenated), as protobuf parsers do. As the jar,
    only the lists of the winning kind since its last switch are read, and a list field of
    another wire type than length-delimited is malformed."""
    if pos < end:
        tag = buf[pos]
        if tag in _LIST_TAGS:  # the usual Feature: one list filling it
            start, stop = delimited(buf, pos + 1, end)
            if stop == end:
                return tag >> 3, LIST_READERS[tag >> 3](buf, start, stop)
    kind, first, stop, more = UNSET, 0, 0, None
    while pos < end:
        tag = buf[pos]
        if tag < 0x80:
            pos += 1
        else:
            tag, pos = varint(buf, pos, end)
        field = tag >> 3
        if 1 <= field <= 3:
            if tag & 7 != 2:
                raise MalformedRecord(f"Feature field {field} has wire type {tag & 7}")
            start, pos = delimited(buf, pos, end)
            if field != kind:
                kind, first, stop, more = field, start, pos, None
            elif more is None:
                more = [(start, pos)]
            else:
                more.append((start, pos))
        else:
            pos = skip(buf, pos, end, tag & 7)
    if kind == UNSET:
        return kind, None
    read = LIST_READERS[kind]
    values = read(buf, first, stop)
    if more is not None:
        parts = [values, *(read(buf, a, b) for a, b in more)]
        if kind == BYTES:
            values = [v for part in parts for v in part]
        else:
            dtype = np.float32 if kind == FLOAT else np.int64
            values = np.concatenate([np.asarray(part, dtype) for part in parts])
    return kind, values


def _steps(buf: bytes, pos: int, end: int) -> list[tuple[int, Any]]:
    """A ``FeatureList``'s ``Feature`` messages (its steps), each as ``(kind, values)``."""
    steps = []
    while pos < end:
        if buf[pos] == 0x0A:
            start, pos = delimited(buf, pos + 1, end)
            steps.append(_feature(buf, start, pos))
        else:
            tag, pos = varint(buf, pos, end)
            pos = skip(buf, pos, end, tag & 7)
    return steps


class ExampleDecoder:
    """Decodes the features named ``keys`` from serialized Examples (with ``sequence``,
    SequenceExamples: the context's features and the feature lists); built once per reader."""

    def __init__(self, keys: Sequence[str], sequence: bool = False) -> None:
        self.keys = tuple(keys)
        self._slots = {k.encode("utf-8"): i for i, k in enumerate(self.keys)}
        self._width = len(self.keys)
        #: Whether the last record decoded gave a wanted key twice (the last Feature wins).
        self.repeated = False
        self._sequence = sequence

    def decode(
        self, buf: bytes, visit: Callable[[int, tuple[int, Any]], None] | None = None
    ) -> list[tuple[int, Any] | None]:
        """Per key: None when the record has no such feature, else ``(kind, values)``: kind one
        of :data:`UNSET` (values None), :data:`BYTES` (a list of bytes), :data:`FLOAT` (a
        float32 ndarray), :data:`INT64` (a list of ints or an int64 ndarray), or in a
        SequenceExample :data:`STEPS` for a feature list (values: its steps, a list of
        ``(kind, values)``). A key that appears twice takes its last Feature, as a protobuf
        map does. Raises :class:`MalformedRecord`. ``visit(slot, feature)``, if given, is called
        with each wanted Feature in the record's order, every occurrence of a key given twice
        included: an error it raises stops the walk there, as the jar's walk stops."""
        out: list[tuple[int, Any] | None] = [None] * self._width
        repeated = False
        slots = self._slots
        pos, end = 0, len(buf)
        lists = 0x12 if self._sequence else -1  # SequenceExample.feature_lists
        try:
            while pos < end:
                tag = buf[pos]
                if tag == lists:
                    pos = self._feature_lists(buf, pos, end, out)
                    continue
                if tag != 0x0A:  # not Example.features (the context): an unknown field
                    tag, pos = varint(buf, pos, end)
                    pos = skip(buf, pos, end, tag & 7)
                    continue
                # Features (repeated occurrences merge: their map entries add up)
                fpos, fend = delimited(buf, pos + 1, end)
                pos = fend
                while fpos < fend:
                    if buf[fpos] != 0x0A:  # not Features.feature
                        tag, fpos = varint(buf, fpos, fend)
                        fpos = skip(buf, fpos, fend, tag & 7)
                        continue
                    epos, eend = delimited(buf, fpos + 1, fend)
                    fpos = eend
                    key: bytes = b""
                    vstart = vend = -1
                    while epos < eend:  # a map entry: key (1) and value (2), in any order
                        etag = buf[epos]
                        if etag == 0x0A:
                            kstart, epos = delimited(buf, epos + 1, eend)
                            key = buf[kstart:epos]
                        elif etag == 0x12:
                            vstart, epos = delimited(buf, epos + 1, eend)
                            vend = epos
                        else:
                            etag, epos = varint(buf, epos, eend)
                            epos = skip(buf, epos, eend, etag & 7)
                    slot = slots.get(key)
                    if slot is not None:
                        try:
                            found = (UNSET, None) if vstart < 0 else _feature(buf, vstart, vend)
                        except MalformedRecord as e:
                            raise MalformedRecord(e.reason, self.keys[slot]) from None
                        if out[slot] is not None:
                            repeated = True
                        out[slot] = found
                        if visit is not None:
                            visit(slot, found)
        except IndexError:
            raise MalformedRecord("a field runs past the end of the record") from None
        self.repeated = repeated
        return out

    def _feature_lists(
        self, buf: bytes, pos: int, end: int, out: list[tuple[int, Any] | None]
    ) -> int:
        """Reads ``SequenceExample.feature_lists`` at ``pos`` (its tag) into ``out``; the
        position after it."""
        fpos, fend = delimited(buf, pos + 1, end)
        while fpos < fend:
            if buf[fpos] != 0x0A:  # not FeatureLists.feature_list
                tag, fpos = varint(buf, fpos, fend)
                fpos = skip(buf, fpos, fend, tag & 7)
                continue
            epos, eend = delimited(buf, fpos + 1, fend)
            fpos = eend
            key: bytes = b""
            vstart = vend = -1
            while epos < eend:
                etag = buf[epos]
                if etag == 0x0A:
                    kstart, epos = delimited(buf, epos + 1, eend)
                    key = buf[kstart:epos]
                elif etag == 0x12:
                    vstart, epos = delimited(buf, epos + 1, eend)
                    vend = epos
                else:
                    etag, epos = varint(buf, epos, eend)
                    epos = skip(buf, epos, eend, etag & 7)
            slot = self._slots.get(key)
            if slot is not None:
                try:
                    out[slot] = (STEPS, [] if vstart < 0 else _steps(buf, vstart, vend))
                except MalformedRecord as e:
                    raise MalformedRecord(e.reason, self.keys[slot]) from None
        return fend
