"""TFRecord framing: each record is its length (uint64, little-endian) and that length's masked
CRC32C (the 12-byte header), the data, then the data's masked CRC32C (the 4-byte footer).

This module is the one that reads that layout, checks it and words its errors (each naming the
file and the record's offset):

- :func:`sound_header` (compression detection) and :func:`header_length` (a header, checked);
- :func:`walk_stream` and :func:`walk_batches`: a (decompressed) stream of records in order,
  one at a time (counting, inference, the jar-less source's slices) or in batches (the
  jar-less source, the loaders' scan), both checksums checked as the data source checks them;
- :func:`check_frame` and :func:`frames_sound`: records read by their offset (the map-style
  loaders), one at a time and a batch at once;
- :func:`find_record_start`: the first sound header at or after an offset (a slice's start).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from typing import IO, Any

from spark_tfrecord import errors
from spark_tfrecord._format.frames.crc import crc32c, crc32c_words, masked, masked_all

#: A record's header (length, its CRC) and footer (the data's CRC), in bytes.
HEADER, FOOTER = 12, 4
#: The largest record the data source reads (``TFRecordFraming.MaxRecordBytes``).
MAX_RECORD_BYTES = 2**31 - 1 - 64

_HEADER_FIELDS = struct.Struct("<QI")
_FOOTER_FIELD = struct.Struct("<I")
_LENGTH_FIELD = struct.Struct("<Q")


def length_checksum_error(path: str, offset: int) -> errors.CorruptFileError:
    """The error of a header whose length does not match its CRC."""
    return errors.CorruptFileError(
        errors.LENGTH_CHECKSUM, "Corrupt TFRecord: length checksum mismatch", path, offset
    )


def data_checksum_error(path: str, offset: int, note: str = "") -> errors.CorruptFileError:
    """The error of a record whose data does not match its CRC (``note``: where it was met)."""
    return errors.CorruptFileError(
        errors.DATA_CHECKSUM, "Corrupt TFRecord: data checksum mismatch" + note, path, offset
    )


def too_large_error(length: int, limit: int, path: str, offset: int) -> errors.CorruptFileError:
    """The error of a header whose length passes ``limit`` (``maxRecordBytes``)."""
    return errors.CorruptFileError(
        errors.RECORD_TOO_LARGE,
        f"TFRecord of {length} bytes exceeds maxRecordBytes ({limit})",
        path,
        offset,
    )


def sound_header(head: bytes) -> bool:
    """Whether ``head`` starts with a record header whose length matches its CRC."""
    if len(head) < HEADER:
        return False
    (length_crc,) = _FOOTER_FIELD.unpack_from(head, 8)
    return bool(masked(crc32c()(head[:8])) == length_crc)


def header_length(
    buf: bytes, pos: int, path: str, offset: int, max_record_bytes: int = MAX_RECORD_BYTES
) -> int:
    """The data length in the record header at ``buf[pos:]`` (stream offset ``offset``),
    checked against its CRC, the largest record and ``max_record_bytes``; a CorruptFileError
    naming ``path``."""
    length, length_crc = _HEADER_FIELDS.unpack_from(buf, pos)
    if masked(crc32c()(buf[pos : pos + 8])) != length_crc:
        raise length_checksum_error(path, offset)
    # A damaged length is refused before its bytes are gathered, as the data source does.
    if length > MAX_RECORD_BYTES:
        raise too_large_error(length, MAX_RECORD_BYTES, path, offset)
    if length > max_record_bytes:
        raise too_large_error(length, max_record_bytes, path, offset)
    return int(length)


def check_frame(buf: bytes, path: str, offset: int, indexed_length: int) -> None:
    """Checks the framed record ``buf`` (header, data, footer) at ``offset`` of ``path``, whose
    data an index says is ``indexed_length`` bytes: the length's CRC, the length against the
    index, then the data's CRC."""
    length, length_crc = _HEADER_FIELDS.unpack_from(buf, 0)
    crc = crc32c()
    if masked(crc(buf[:8])) != length_crc:
        raise length_checksum_error(path, offset)
    if length != indexed_length:
        raise errors.CorruptFileError(
            errors.UNREADABLE,
            f"the record holds {length} bytes, its index says {indexed_length}: "
            "the index is of another file",
            path,
            offset,
        )
    (data_crc,) = _FOOTER_FIELD.unpack_from(buf, HEADER + length)
    if masked(crc(memoryview(buf)[HEADER : HEADER + length])) != data_crc:
        raise data_checksum_error(path, offset)


def frames_sound(buf: bytes, starts: Any, ends: Any) -> bool:
    """Whether every framed record ``buf[starts[k]:ends[k]]`` (int64 arrays) is sound: its
    header's length is its data's, and both CRCs match (:func:`sound_frames`). A batch that is
    not sound is read again a record at a time (:func:`check_frame`), for the error that names
    the record."""
    return sound_frames(buf, starts, ends) == len(starts)


def sound_frames(
    buf: bytes,
    starts: Any,
    ends: Any,
    *,
    verify_checksums: bool = True,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> int:
    """How many of the framed records ``buf[starts[k]:ends[k]]`` (int64 arrays), from the
    first, are sound: the header's length is the data's and at most ``max_record_bytes``, its
    CRC matches, and with ``verify_checksums`` the data's CRC too. The lengths' checksums for
    the batch at once; the data's, a call of the C code per record."""
    import numpy as np  # not at import time: ``import spark_tfrecord`` loads no NumPy

    if not len(starts):
        return 0
    u8 = np.frombuffer(buf, np.uint8)
    header = u8[starts[:, None] + np.arange(HEADER)]
    words = header[:, :8].copy().view("<u8")[:, 0]  # each record's length field
    length_crc = header[:, 8:].copy().view("<u4")[:, 0]
    lengths = words.view(np.int64)
    bad = (lengths != ends - starts - HEADER - FOOTER) | (lengths > max_record_bytes)
    bad |= masked_all(crc32c_words(words)) != length_crc
    if verify_checksums:
        footer = u8[(ends - FOOTER)[:, None] + np.arange(FOOTER)].copy().view("<u4")[:, 0]
        # short records' bytes are copied out (a bytes slice costs less than a memoryview's),
        # long ones are viewed (a copy would cost as much as their checksum)
        data: Any = buf if int((ends - starts).sum()) < 1024 * len(starts) else memoryview(buf)
        # each slice counted as it is made, not all made first: a freed slice's memory serves the
        # next (some 0.2 µs a record less)
        crc = crc32c()
        spans = zip((starts + HEADER).tolist(), (ends - FOOTER).tolist())
        crcs = np.array([crc(data[a:b]) for a, b in spans], np.uint64)
        bad |= masked_all(crcs) != footer
    return int(bad.argmax()) if bad.any() else len(starts)


def frame_starts(
    buf: bytes, pos: int, most: int, stop_at: int | None = None
) -> tuple[list[int], int]:
    """The starts of up to ``most`` whole frames in ``buf`` from ``pos``, one after another by
    their length fields alone, unchecked (:func:`sound_frames` checks them), and where the
    last one ends; none at or after ``stop_at``. A damaged length runs past the end of
    ``buf``, where the walk stops."""
    found: list[int] = []
    size = len(buf)
    stop = size if stop_at is None else min(size, stop_at)
    unpack = _LENGTH_FIELD.unpack_from
    while len(found) < most and pos < stop and size - pos >= HEADER:
        end = pos + HEADER + FOOTER + unpack(buf, pos)[0]
        if end > size:
            break
        found.append(pos)
        pos = end
    return found, pos


def find_record_start(
    f: IO[bytes],
    start: int,
    end: int,
    size: int,
    path: str,
    *,
    verify_checksums: bool = True,
    max_record_bytes: int = MAX_RECORD_BYTES,
    window: int = 1 << 20,
) -> int:
    """The offset of the first sound record header in ``[start, end)`` of the uncompressed
    file ``f`` of ``size`` bytes, or -1 (the jar's ``findRecordStart``): a length of at most
    ``max_record_bytes`` that fits the file, matching its CRC. With ``verify_checksums`` the
    data's CRC there is checked too, a mismatch raised; ``f`` is read ``window`` bytes at a
    time."""
    crc = crc32c()
    unpack_header = _HEADER_FIELDS.unpack_from
    at = start
    while at < end:
        f.seek(at)
        chunk = f.read(window + HEADER)
        last = len(chunk) - HEADER
        i = 0
        while i <= last and at + i < end:
            length, length_crc = unpack_header(chunk, i)
            offset = at + i
            if (
                length <= max_record_bytes
                and length <= size - offset - HEADER - FOOTER
                and masked(crc(chunk[i : i + 8])) == length_crc
            ):
                if verify_checksums:
                    f.seek(offset + HEADER)
                    data = f.read(length + FOOTER)
                    if masked(crc(data[:length])) != _FOOTER_FIELD.unpack_from(data, length)[0]:
                        raise data_checksum_error(
                            path, offset, " (found while looking for the first record of a split)"
                        )
                return offset
            i += 1
        if len(chunk) < window + HEADER:
            return -1
        at += window
    return -1


def walk_stream(
    chunks: Iterable[bytes],
    path: str,
    file_size: int | None,
    *,
    verify_checksums: bool = True,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Iterator[tuple[int, memoryview]]:
    """The records of the stream ``chunks`` (a file's bytes, decompressed) in order, as (offset
    in the stream, a view of the data, valid until the next record is asked for), every
    record's length checked, and its data's checksum too with ``verify_checksums``;
    ``file_size`` (uncompressed files) refuses a length that runs past the file's end at once,
    and ``max_record_bytes`` (the ``maxRecordBytes`` option) a longer record. A damaged stream
    raises :class:`spark_tfrecord.errors.CorruptFileError` naming ``path`` and the record's
    offset in the stream.
    """
    crc = crc32c()
    unpack_footer = _FOOTER_FIELD.unpack_from
    stream = iter(chunks)
    buf = b""
    pos = 0  # in buf
    base = 0  # the stream offset of buf[0]

    def more(need: int) -> bool:
        """Makes ``need`` bytes available at ``pos``; False if the stream ends first."""
        nonlocal buf, pos, base
        parts = [buf[pos:]]
        have = len(parts[0])
        base += pos
        pos = 0
        for chunk in stream:
            parts.append(chunk)
            have += len(chunk)
            if have >= need:
                break
        buf = b"".join(parts)
        return have >= need

    while True:
        if len(buf) - pos < HEADER and not more(HEADER):
            left = len(buf) - pos
            if left == 0:
                return
            raise errors.CorruptFileError(
                errors.TRUNCATED,
                f"Truncated TFRecord: {left} of {HEADER} header bytes",
                path,
                base + pos,
            )
        length = header_length(buf, pos, path, base + pos, max_record_bytes)
        if file_size is not None and length > file_size - (base + pos) - HEADER - FOOTER:
            raise errors.CorruptFileError(
                errors.TRUNCATED,
                f"Truncated TFRecord: the header claims {length} data bytes, but the file ends "
                f"{file_size - (base + pos) - HEADER} bytes after it",
                path,
                base + pos,
            )
        if len(buf) - pos < HEADER + length + FOOTER and not more(HEADER + length + FOOTER):
            raise errors.CorruptFileError(
                errors.TRUNCATED,
                f"Truncated TFRecord: stream ends inside a record of {length} data bytes",
                path,
                base + pos,
            )
        end = pos + HEADER + length
        data = memoryview(buf)[pos + HEADER : end]
        if verify_checksums and masked(crc(data)) != unpack_footer(buf, end)[0]:
            raise data_checksum_error(path, base + pos)
        yield base + pos, data
        pos = end + FOOTER


def walk_batches(
    chunks: Iterable[bytes],
    path: str,
    file_size: int | None,
    *,
    verify_checksums: bool = True,
    max_record_bytes: int = MAX_RECORD_BYTES,
    batch: int = 4096,
    batch_bytes: int = 16 * 2**20,
    stop_at: int | None = None,
) -> Iterator[tuple[bytes, list[int], list[int], list[int]]]:
    """:func:`walk_stream`'s records, the same checks in the same order, in batches of at most
    ``batch``: ``(buf, starts, stops, offsets)``, record i of the batch being
    ``buf[starts[i]:stops[i]]`` at stream offset ``offsets[i]``, with no Python object per
    record but three ints. A damaged stream raises its error after the batch of the records
    before it (an error of the stream itself, a compressed one's, too). A batch ends early
    where its records pass ``batch_bytes`` and the stream must be read further: 16 MiB, so
    that a batch of wide records (1,000 features, 19 KB each) still has some 800 of them, over
    which a column's fixed cost per batch is spread. With ``stop_at``, the walk ends after the
    first record (checked) whose offset is ``stop_at`` or more, which it does not
    give (a split's end).

    The records whole in the bytes read so far are found by their lengths alone and checked
    together (:func:`frame_starts`, :func:`sound_frames`); the rest (a record across chunks,
    the first that is not sound, for its error) one at a time, as :func:`walk_stream` does."""
    walk = _BatchWalk(iter(chunks), path, file_size, verify_checksums, max_record_bytes, stop_at)
    while not walk.done and walk.failure is None:
        walk.fill(batch, batch_bytes)
        if walk.starts:
            yield walk.buf, walk.starts, walk.stops, walk.offsets
            walk.starts, walk.stops, walk.offsets = [], [], []
    if walk.failure is not None:
        raise walk.failure


class _BatchWalk:
    """:func:`walk_batches`' state: the bytes read (``buf``, at stream offset ``base``), the
    next record's place in them, and the batch so far."""

    #: Fewer whole records than this in the bytes read are walked one at a time: checking them
    #: together costs a few NumPy calls, some 20 records' walk.
    FEW = 16

    def __init__(
        self,
        stream: Iterator[bytes],
        path: str,
        file_size: int | None,
        verify_checksums: bool,
        max_record_bytes: int,
        stop_at: int | None,
    ) -> None:
        self.stream, self.path, self.file_size = stream, path, file_size
        self.verify, self.max_record_bytes, self.stop_at = (
            verify_checksums,
            max_record_bytes,
            stop_at,
        )
        self.buf, self.pos, self.base = b"", 0, 0
        self.starts: list[int] = []
        self.stops: list[int] = []
        self.offsets: list[int] = []
        self.broken: Exception | None = None  # the stream's own error, raised after the batch
        self.failure: Exception | None = None
        self.done = False

    def more(self, need: int) -> bool:
        """Makes ``need`` bytes available at ``pos``, keeping the batch's records; False if
        the stream ends first."""
        keep = self.starts[0] - HEADER if self.starts else self.pos
        parts = [self.buf[keep:]]
        have = len(parts[0]) - (self.pos - keep)
        # as many bytes again as are kept: each byte is copied some twice in all, however
        # many chunks a batch spans
        ahead = max(need, len(parts[0]))
        self.base += keep
        self.pos -= keep
        self.starts = [k - keep for k in self.starts]
        self.stops = [k - keep for k in self.stops]
        try:
            for chunk in self.stream:
                parts.append(chunk)
                have += len(chunk)
                if have >= ahead:
                    break
        except Exception as e:  # raised after the batch of the records before it
            self.broken = e
        self.buf = b"".join(parts)
        return have >= need

    def fill(self, batch: int, batch_bytes: int) -> None:
        """Adds records to the batch until it has ``batch``, or ends early (see
        :func:`walk_batches`), or the stream ends or fails."""
        while len(self.starts) < batch:
            if not self.whole(batch - len(self.starts)) and not self.one(batch_bytes):
                return

    def whole(self, most: int) -> bool:
        """Adds up to ``most`` records whole in ``buf``, checked together; False when fewer
        than :attr:`FEW` are there, or the first is not sound."""
        import numpy as np

        stop = None if self.stop_at is None else self.stop_at - self.base
        found, end = frame_starts(self.buf, self.pos, most, stop)
        if len(found) < self.FEW:
            return False
        bounds = np.array([*found, end], np.int64)
        starts, ends = bounds[:-1], bounds[1:]
        sound = sound_frames(
            self.buf,
            starts,
            ends,
            verify_checksums=self.verify,
            max_record_bytes=self.max_record_bytes,
        )
        if sound:
            self.starts += (starts[:sound] + HEADER).tolist()
            self.stops += (ends[:sound] - FOOTER).tolist()
            self.offsets += (starts[:sound] + self.base).tolist()
            self.pos = int(ends[sound - 1])
        return sound > 0

    # long: one record's checks in walk_stream's order, each failure's message beside it
    def one(self, batch_bytes: int) -> bool:
        """Adds the next record, checked; False when the batch must end first (its records
        pass ``batch_bytes`` and more must be read), the stream ends, or the record fails."""
        buf, pos, base = self.buf, self.pos, self.base
        if len(buf) - pos < HEADER and self.starts and pos - self.starts[0] >= batch_bytes:
            return False  # the batch first, then more of the stream
        if len(buf) - pos < HEADER and not self.more(HEADER):
            left = len(self.buf) - self.pos
            if self.broken is not None:
                self.failure = self.broken
            elif left:
                self.failure = errors.CorruptFileError(
                    errors.TRUNCATED,
                    f"Truncated TFRecord: {left} of {HEADER} header bytes",
                    self.path,
                    self.base + self.pos,
                )
            else:
                self.done = True
            return False
        buf, pos, base = self.buf, self.pos, self.base
        try:
            length = header_length(buf, pos, self.path, base + pos, self.max_record_bytes)
        except errors.CorruptFileError as e:
            self.failure = e
            return False
        if self.file_size is not None and length > self.file_size - (base + pos) - HEADER - FOOTER:
            self.failure = errors.CorruptFileError(
                errors.TRUNCATED,
                f"Truncated TFRecord: the header claims {length} data bytes, but the file "
                f"ends {self.file_size - (base + pos) - HEADER} bytes after it",
                self.path,
                base + pos,
            )
            return False
        need = HEADER + length + FOOTER
        if len(buf) - pos < need and self.starts and pos - self.starts[0] >= batch_bytes:
            return False
        if len(buf) - pos < need and not self.more(need):
            self.failure = self.broken or errors.CorruptFileError(
                errors.TRUNCATED,
                f"Truncated TFRecord: stream ends inside a record of {length} data bytes",
                self.path,
                self.base + self.pos,
            )
            return False
        buf, pos, base = self.buf, self.pos, self.base
        end = pos + HEADER + length
        if self.verify:
            (data_crc,) = _FOOTER_FIELD.unpack_from(buf, end)
            if masked(crc32c()(memoryview(buf)[pos + HEADER : end])) != data_crc:
                self.failure = data_checksum_error(self.path, base + pos)
                return False
        if self.stop_at is not None and base + pos >= self.stop_at:
            self.done = True
            return False
        self.starts.append(pos + HEADER)
        self.stops.append(end)
        self.offsets.append(base + pos)
        self.pos = end + FOOTER
        return True


def count_stream(chunks: Iterable[bytes], path: str, file_size: int | None) -> int:
    """The number of records in the stream ``chunks`` (a file's bytes, decompressed), every
    record's length and both checksums checked (:func:`walk_stream`)."""
    count = 0
    for _ in walk_stream(chunks, path, file_size):
        count += 1
    return count
