"""What a read must return, computed in pure Python from the documented rules.

An oracle for the fuzz test, written from docs/errors.md and the protobuf encoding rules, not
from the Scala code: TFRecord framing (TensorFlow's reader), how a split finds its first record,
a lazy protobuf walk of `tf.train.Example` / `SequenceExample` (only the features a column asks
for are looked into; unknown fields and groups skipped; the last map entry and the last `kind`
of a Feature win; repeated lists of one kind concatenate), and the column conversions of
docs/types.md. Each record becomes a row, or a `PayloadError` that the read mode handles.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Callable

from support.tfrecord_bytes import masked_crc

MAX_RECORD_BYTES = 2**31 - 1 - 64
HEADER, FOOTER = 12, 4


@dataclass(frozen=True)
class Record:
    offset: int
    data: bytes


@dataclass(frozen=True)
class FramingError:
    offset: int
    what: str


class PayloadError(Exception):
    """A record whose payload does not decode (malformed) or does not fit a column."""

    def __init__(self, what: str, malformed: bool) -> None:
        super().__init__(what)
        self.malformed = malformed


# --- framing ---------------------------------------------------------------------------------


def _header(content: bytes, at: int) -> tuple[int, bool]:
    (length,) = struct.unpack_from("<Q", content, at)
    (crc,) = struct.unpack_from("<I", content, at + 8)
    return length, crc == masked_crc(content[at : at + 8])


def _check_header(content: bytes, at: int, size: int | None) -> FramingError | None:
    """The error of the header at `at`, or None when it is sound (`size`: the stream's length)."""
    if len(content) - at < HEADER:
        return FramingError(at, "truncated header")
    length, crc_ok = _header(content, at)
    if not crc_ok:
        return FramingError(at, "length checksum")
    if length > MAX_RECORD_BYTES:
        return FramingError(at, "maxRecordBytes")
    if size is not None and length > size - at - HEADER - FOOTER:
        return FramingError(at, "truncated record")
    return None


def read_records(
    content: bytes, start: int = 0, end: int | None = None, split: bool = False
) -> tuple[list[Record], FramingError | None]:
    """The records a reader of `[start, end)` returns, then its framing error, if any.

    `split`: the stream is an uncompressed file read in splits (its length is known, a split
    not starting at 0 looks for its first record, and a split's reader checks the header it
    stops at). Otherwise it is a whole (possibly decompressed) stream.
    """
    size = len(content) if split else None
    stop = len(content) if end is None else end
    pos = start
    if start > 0:
        found = _first_record(content, start, stop)
        if found is None:
            return [], None
        pos = found
        length, _ = _header(content, pos)
        data = content[pos + HEADER : pos + HEADER + length]
        if struct.unpack_from("<I", content, pos + HEADER + length)[0] != masked_crc(data):
            return [], FramingError(pos, "data checksum (split start)")
    records: list[Record] = []
    while True:
        if pos >= stop:
            if split and records and pos < len(content):
                error = _check_header(content, pos, size)
                if error is not None:
                    return records, error
            return records, None
        if pos == len(content):
            return records, None
        error = _check_header(content, pos, size)
        if error is not None:
            return records, error
        length, _ = _header(content, pos)
        if len(content) - pos - HEADER - FOOTER < length:
            return records, FramingError(pos, "truncated record")
        data = content[pos + HEADER : pos + HEADER + length]
        if struct.unpack_from("<I", content, pos + HEADER + length)[0] != masked_crc(data):
            return records, FramingError(pos, "data checksum")
        records.append(Record(pos, data))
        pos += HEADER + length + FOOTER


def _first_record(content: bytes, start: int, stop: int) -> int | None:
    """The first offset in [start, stop) with a sound header whose record fits in the file."""
    for at in range(start, min(stop, len(content) - HEADER + 1)):
        length, crc_ok = _header(content, at)
        if crc_ok and length <= MAX_RECORD_BYTES and length <= len(content) - at - 16:
            return at
    return None


def split_ranges(size: int, max_split: int) -> list[tuple[int, int]]:
    """Spark's splits of an uncompressed file: consecutive ranges of `max_split` bytes."""
    return [(s, min(size, s + max_split)) for s in range(0, size, max_split)] or [(0, 0)]


# --- protobuf, lazily ------------------------------------------------------------------------

INT64, FLOAT, BYTES = 3, 2, 1
KIND_NAMES = {BYTES: "bytes_list", FLOAT: "float_list", INT64: "int64_list"}


class _Malformed(Exception):
    pass


def _varint(buf: bytes, pos: int, limit: int) -> tuple[int, int]:
    result = 0
    for i in range(10):
        if pos >= limit:
            raise _Malformed("varint runs past its message")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << (7 * i)
        if b < 0x80:
            return result & (2**64 - 1), pos
    raise _Malformed("varint longer than 10 bytes")


def _signed(v: int) -> int:
    return v - 2**64 if v >= 2**63 else v


def _length_end(buf: bytes, pos: int, limit: int) -> tuple[int, int]:
    """(start, end) of a length-delimited field whose length varint is at `pos`."""
    length, pos = _varint(buf, pos, limit)
    if length >= 2**63 or length > limit - pos:
        raise _Malformed("length runs past its message")
    return pos, pos + length


def _skip(buf: bytes, wire: int, pos: int, limit: int) -> int:
    if wire == 0:
        return _varint(buf, pos, limit)[1]
    if wire == 1 or wire == 5:
        n = 8 if wire == 1 else 4
        if limit - pos < n:
            raise _Malformed("fixed field runs past its message")
        return pos + n
    if wire == 2:
        return _length_end(buf, pos, limit)[1]
    if wire == 3:  # a group: skipped to its matching end, at any depth
        depth = 1
        while depth:
            tag, pos = _varint(buf, pos, limit)
            if tag & 7 == 3:
                depth += 1
            elif tag & 7 == 4:
                depth -= 1
            else:
                pos = _skip(buf, tag & 7, pos, limit)
        return pos
    raise _Malformed(f"invalid wire type {wire}")


def _fields(buf: bytes, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(field, wire type, value start, value end) of each field of the message [start, end), as
    it is parsed; a length-delimited value's start and end are those of its content."""
    pos = start
    while pos < end:
        tag, pos = _varint(buf, pos, end)
        field, wire = tag >> 3, tag & 7
        if wire == 2:
            s, e = _length_end(buf, pos, end)
        else:
            s, e = pos, _skip(buf, wire, pos, end)
        yield field, wire, s, e
        pos = e


def _map(buf: bytes, start: int, end: int) -> Iterator[tuple[bytes, int, int]]:
    """The entries (key, value start, value end) of a map<string, message>, as parsed."""
    for field, wire, s, e in _fields(buf, start, end):
        if (field, wire) != (1, 2):
            continue
        key, value = b"", (e, e)
        for f2, w2, s2, e2 in _fields(buf, s, e):
            if (f2, w2) == (1, 2):
                key = buf[s2:e2]
            elif (f2, w2) == (2, 2):
                value = (s2, e2)
        yield key, value[0], value[1]


class _Feature:
    """A Feature message: its kind (0 when unset) and the list messages of its last run."""

    def __init__(self, buf: bytes, start: int, end: int) -> None:
        self.buf = buf
        self.kind = 0
        self.lists: list[tuple[int, int]] = []
        for field, wire, s, e in _fields(buf, start, end):
            if field in (BYTES, FLOAT, INT64):
                if wire != 2:
                    raise _Malformed(f"Feature field {field} has wire type {wire}")
                if field != self.kind:
                    self.kind, self.lists = field, []
                self.lists.append((s, e))

    def _value_fields(self) -> Iterator[tuple[int, int, int]]:
        for ls, le in self.lists:
            for f, w, s, e in _fields(self.buf, ls, le):
                if f == 1:
                    yield w, s, e

    def count(self) -> int:
        n = 0
        for wire, s, e in self._value_fields():
            if self.kind == INT64 and wire == 2:
                if e > s and self.buf[e - 1] >= 0x80:
                    raise _Malformed("packed int64 run ends inside a varint")
                n += sum(1 for b in self.buf[s:e] if b < 0x80)
            elif self.kind == INT64 and wire == 0:
                n += 1
            elif self.kind == FLOAT and wire == 2:
                if (e - s) % 4:
                    raise _Malformed("packed float run")
                n += (e - s) // 4
            elif (self.kind == FLOAT and wire == 5) or (self.kind == BYTES and wire == 2):
                n += 1
            else:
                raise _Malformed(f"{KIND_NAMES[self.kind]} value with wire type {wire}")
        return n

    def values(self) -> Iterator[Any]:
        """The values, decoded one by one (after `count`, which checked the runs' framing)."""
        for wire, s, e in self._value_fields():
            if self.kind == INT64 and wire == 2:
                pos = s
                while pos < e:
                    v, pos = _varint(self.buf, pos, e)
                    yield _signed(v)
            elif self.kind == INT64:
                yield _signed(_varint(self.buf, s, e)[0])
            elif self.kind == FLOAT:
                for (x,) in struct.iter_unpack("<f", self.buf[s:e]):
                    yield x
            else:
                yield self.buf[s:e]


# --- columns ---------------------------------------------------------------------------------


def _float32(v: int) -> float:
    """An int64 rounded to the nearest float32 (ties to even), as Java's long-to-float does."""
    a = abs(v)
    if a.bit_length() > 24:
        shift = a.bit_length() - 24
        q, r = divmod(a, 1 << shift)
        half = 1 << (shift - 1)
        if r > half or (r == half and q & 1):
            q += 1
        a = q << shift
    return -float(a) if v < 0 else float(a)


@dataclass(frozen=True)
class Column:
    """A column of the fuzz schemas: its element type and shape (scalar, array, nested)."""

    name: str
    element: str  # long, int, float, double, binary
    shape: str  # scalar, array, nested

    def accepts(self, kind: int) -> bool:
        if self.element in ("long", "int"):
            return kind == INT64
        if self.element in ("float", "double"):
            return kind in (INT64, FLOAT)
        return kind == BYTES

    def convert(self, kind: int, v: Any) -> Any:
        if self.element == "int" and not -(2**31) <= v < 2**31:
            raise PayloadError(f"cannot hold the value {v}", malformed=False)
        if self.element == "float" and kind == INT64:
            return _float32(v)
        if self.element == "double" and kind == INT64:
            return float(v)
        return v

    def read(self, feature: _Feature) -> Any:
        count = feature.count() if feature.kind else 0
        if count > 0 and not self.accepts(feature.kind):
            raise PayloadError(f"cannot be read from a {KIND_NAMES[feature.kind]}", False)
        if self.shape == "scalar":
            if count == 0:
                return None
            if count > 1:
                raise PayloadError("is a scalar but the feature holds", malformed=False)
        values = [self.convert(feature.kind, v) for v in feature.values()] if count else []
        return values[0] if self.shape == "scalar" else values


def decode(data: bytes, columns: list[Column], sequence: bool) -> dict[str, Any]:
    """The values an Example (or SequenceExample) gives the columns; missing ones are None."""
    by_name = {c.name.encode(): c for c in columns}
    row: dict[str, Any] = {c.name: None for c in columns}
    try:
        for field, wire, s, e in _fields(data, 0, len(data)):
            if wire != 2 or field not in ((1, 2) if sequence else (1,)):
                continue
            for key, vs, ve in _map(data, s, e):
                column = by_name.get(key)
                if column is None:
                    continue
                if field == 2:  # a SequenceExample's feature list
                    if column.shape != "nested":
                        raise PayloadError("is read from a single feature", malformed=False)
                    fields = list(_fields(data, vs, ve))  # all steps are counted first
                    steps = [(ss, se) for f, w, ss, se in fields if (f, w) == (1, 2)]
                    step_column = Column(column.name, column.element, "array")
                    row[column.name] = [step_column.read(_Feature(data, a, b)) for a, b in steps]
                else:
                    if column.shape == "nested":
                        raise PayloadError("is read from a SequenceExample feature list", False)
                    row[column.name] = column.read(_Feature(data, vs, ve))
    except _Malformed as e:
        raise PayloadError(str(e), malformed=True) from None
    return row


def expected_rows(
    records: list[Record],
    to_row: Callable[[bytes], tuple[Any, ...]],
    mode: str,
    corrupt_row: Callable[[bytes], tuple[Any, ...]],
) -> tuple[list[tuple[Any, ...]], tuple[int, PayloadError] | None]:
    """The rows of a reader's records under `mode`, and the payload error (offset, error) that
    ends them under FAILFAST."""
    rows = []
    for record in records:
        try:
            rows.append(to_row(record.data))
        except PayloadError as e:
            if mode == "FAILFAST":
                return rows, (record.offset, e)
            if mode == "PERMISSIVE":
                rows.append(corrupt_row(record.data))
    return rows, None


def normalize(value: Any) -> Any:
    """A value as comparable data: floats by their bits (as doubles, which hold every float32
    exactly), NaN as one value; bytes as bytes; lists as tuples."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else struct.pack("<d", value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, (list, tuple)):
        return tuple(normalize(v) for v in value)
    return value
