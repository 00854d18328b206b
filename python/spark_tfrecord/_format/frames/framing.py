"""TFRecord framing (length, its masked CRC32C, data, its masked CRC32C), read and checked."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from spark_tfrecord import errors
from spark_tfrecord._format.frames.crc import (
    RESIDUE,
    RESTART_WORD,
    crc32c,
    crc32c_words,
    masked,
    masked_all,
    unmasked_all,
)

#: A record's header (length, its CRC) and footer (the data's CRC), in bytes.
HEADER, FOOTER = 12, 4
#: The largest record the data source reads (``TFRecordFraming.MaxRecordBytes``).
MAX_RECORD_BYTES = 2**31 - 1 - 64

#: Frames whose data CRCs :func:`_data_sound` checks in one call (short ones: some MB copied).
_CHECKED_AT_ONCE = 4096

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


def truncated_error(reason: str, path: str, offset: int) -> errors.CorruptFileError:
    """The error of a stream that ends inside a record (``reason``: where)."""
    return errors.CorruptFileError(errors.TRUNCATED, "Truncated TFRecord: " + reason, path, offset)


def sound_header(head: bytes) -> bool:
    """Whether ``head`` starts with a record header whose length matches its CRC."""
    if len(head) < HEADER:
        return False
    (length_crc,) = _FOOTER_FIELD.unpack_from(head, 8)
    return bool(masked(crc32c()(head[:8])) == length_crc)


def header_length(
    buf: bytes,
    pos: int,
    path: str,
    offset: int,
    max_record_bytes: int = MAX_RECORD_BYTES,
    file_size: int | None = None,
) -> int:
    """The header's data length at ``buf[pos:]``, CRC and size checked (against ``file_size``, the
    stream's, if known); raises CorruptFileError."""
    length, length_crc = _HEADER_FIELDS.unpack_from(buf, pos)
    if masked(crc32c()(buf[pos : pos + 8])) != length_crc:
        raise length_checksum_error(path, offset)
    # A damaged length is refused before its bytes are gathered, as the data source does.
    limit = MAX_RECORD_BYTES if length > MAX_RECORD_BYTES else max_record_bytes
    if length > limit:
        raise errors.CorruptFileError(
            errors.RECORD_TOO_LARGE,
            f"TFRecord of {length} bytes exceeds maxRecordBytes ({limit})",
            path,
            offset,
        )
    if file_size is not None and length > file_size - offset - HEADER - FOOTER:
        raise truncated_error(
            f"the header claims {length} data bytes, but the file ends "
            f"{file_size - offset - HEADER} bytes after it",
            path,
            offset,
        )
    return int(length)


def check_frame(buf: bytes, path: str, offset: int, indexed_length: int) -> None:
    """Checks the frame ``buf`` at ``offset``: length CRC, length against the index's, data CRC."""
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
    """Whether every frame ``buf[starts[k]:ends[k]]`` is sound (see :func:`sound_frames`)."""
    return sound_frames(buf, starts, ends) == len(starts)


def sound_frames(
    buf: bytes,
    starts: Any,
    ends: Any,
    *,
    verify_checksums: bool = True,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> int:
    """How many frames, from the first, are sound (lengths, size limit, CRCs; data's if asked)."""
    import numpy as np  # not at import time: ``import spark_tfrecord`` loads no NumPy

    if not len(starts) or len(buf) < HEADER + FOOTER:
        return 0  # (no frame fits)
    # each frame's fields read as words where they lie
    words = np.ndarray((len(buf) - 7,), "<u8", buf, 0, (1,))[starts]  # the length fields
    fields: Any = np.ndarray((len(buf) - 3,), "<u4", buf, 0, (1,))
    lengths = words.view(np.int64)
    bad = (lengths != ends - starts - HEADER - FOOTER) | (lengths > max_record_bytes)
    bad |= masked_all(crc32c_words(words)) != fields[starts + 8]
    if verify_checksums and not bad.any() and _data_sound(buf, starts, ends, fields):
        return len(starts)
    if verify_checksums:
        footer = fields[ends - FOOTER]
        # short records copied out (cheaper than a memoryview's slice), long ones viewed
        data: Any = buf if int((ends - starts).sum()) < 1024 * len(starts) else memoryview(buf)
        # each slice checked as made, so a freed slice's memory serves the next
        crc = crc32c()
        spans = zip((starts + HEADER).tolist(), (ends - FOOTER).tolist())
        crcs = np.array([crc(data[a:b]) for a, b in spans], np.uint64)
        bad |= masked_all(crcs) != footer
    return int(bad.argmax()) if bad.any() else len(starts)


def _data_sound(buf: bytes, starts: Any, ends: Any, fields: Any) -> bool:
    """Whether short frames, one after another, all hold their data's CRC, checked a block of
    them per CRC32C call: over a copy of the block, each footer its CRC unmasked, each header
    between :data:`RESTART_WORD`'s 12 bytes. Each record's data and CRC leave :data:`RESIDUE`,
    which the restart takes back to the start for the next. A damaged record leaves another
    value, which every later byte carries to the end (the CRC's steps are invertible): the
    block's CRC differs from RESIDUE unless two damaged records cancel, one chance in 2^32, as a
    damaged record passes its own CRC. False: a record may be damaged (the caller checks each).
    """
    import numpy as np

    size = int(ends[-1] - starts[0])
    if len(starts) < 2 or size >= 1024 * len(starts) or not (starts[1:] == ends[:-1]).all():
        return False  # long records: a C call each costs less than the copy
    crc = crc32c()
    for at in range(0, len(starts), _CHECKED_AT_ONCE):
        first = int(starts[at]) + HEADER
        stops = ends[at : at + _CHECKED_AT_ONCE]
        copy = np.frombuffer(buf, np.uint8, int(stops[-1]) - first, first).copy()
        words: Any = np.ndarray((len(copy) - 3,), "<u4", copy, 0, (1,))
        words[stops - FOOTER - first] = unmasked_all(fields[stops - FOOTER])
        gaps = stops[:-1] - first
        np.ndarray((len(copy) - 7,), "<u8", copy, 0, (1,))[gaps] = 0
        words[gaps + 8] = RESTART_WORD
        if crc(copy) != RESIDUE:
            return False
    return True


def frame_starts(
    buf: bytes, pos: int, most: int, stop_at: int | None = None
) -> tuple[list[int], int]:
    """Starts of up to ``most`` frames from ``pos`` by length fields alone, and the last's end."""
    found: list[int] = []
    append = found.append
    size = len(buf)
    # a header starts before ``stop_at`` and fits in ``buf``
    stop = min(size if stop_at is None else stop_at, size - HEADER + 1)
    unpack = _LENGTH_FIELD.unpack_from
    for _ in range(most):
        if pos >= stop:
            break
        end = pos + HEADER + FOOTER + unpack(buf, pos)[0]
        if end > size:
            break
        append(pos)
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
    """The first sound header's offset in ``[start, end)`` of uncompressed ``f``, or -1 (the jar's
    ``findRecordStart``); with ``verify_checksums`` a data CRC mismatch there raises.
    """
    crc = crc32c()
    unpack_header = _HEADER_FIELDS.unpack_from
    for at in range(start, end, window):
        f.seek(at)
        chunk = f.read(window + HEADER)
        for i in range(min(len(chunk) - HEADER + 1, end - at)):
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
        if len(chunk) < window + HEADER:
            return -1
    return -1


def walk_stream(
    chunks: Iterable[bytes],
    path: str,
    file_size: int | None,
    *,
    verify_checksums: bool = True,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Iterator[tuple[int, memoryview]]:
    """Each record of the decompressed stream ``chunks`` as (stream offset, a data view valid until
    the next record), checked; ``file_size`` (uncompressed) refuses an overlong length at once.
    Damage raises :class:`~spark_tfrecord.errors.CorruptFileError` naming ``path`` and offset.
    """
    crc = crc32c()
    unpack_footer = _FOOTER_FIELD.unpack_from
    stream = iter(chunks)
    buf, pos, base = b"", 0, 0  # base: the stream offset of buf[0]

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
            raise truncated_error(f"{left} of {HEADER} header bytes", path, base + pos)
        length = header_length(buf, pos, path, base + pos, max_record_bytes, file_size)
        if len(buf) - pos < HEADER + length + FOOTER and not more(HEADER + length + FOOTER):
            raise truncated_error(
                f"stream ends inside a record of {length} data bytes", path, base + pos
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
    """:func:`walk_stream`'s records and checks, as ``(buf, starts, stops, offsets)`` batches.
    Record i is ``buf[starts[i]:stops[i]]`` at stream offset ``offsets[i]``; an error is raised
    after the batch before it. ``stop_at``: stop before the first record at or past it (checked).
    """
    walk = _BatchWalk(iter(chunks), path, file_size, verify_checksums, max_record_bytes, stop_at)
    while not walk.done and walk.failure is None:
        # whole records checked together, else one (until the batch is full, ends or fails)
        while len(walk.starts) < batch:
            if not walk.whole(batch - len(walk.starts)) and not walk.one(batch_bytes):
                break
        if walk.starts:
            yield walk.buf, walk.starts, walk.stops, walk.offsets
            walk.starts, walk.stops, walk.offsets = [], [], []
    if walk.failure is not None:
        raise walk.failure


@dataclass
class _BatchWalk:
    """:func:`walk_batches`' state: the bytes read (``buf``, at stream ``base``), place, batch."""

    #: Fewer whole records than this are walked one at a time (cheaper than the NumPy checks).
    FEW = 16

    stream: Iterator[bytes]
    path: str
    file_size: int | None
    verify: bool
    max_record_bytes: int
    stop_at: int | None
    buf: bytes = b""
    pos: int = 0
    base: int = 0
    starts: list[int] = field(default_factory=list)
    stops: list[int] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    broken: Exception | None = None  # the stream's own error, raised after the batch
    failure: Exception | None = None
    done: bool = False

    def more(self, need: int) -> bool:
        """Gets ``need`` bytes at ``pos``, keeping the batch; False if the stream ends first."""
        keep = self.starts[0] - HEADER if self.starts else self.pos
        parts = [self.buf[keep:]]
        have = len(parts[0]) - (self.pos - keep)
        # read as many bytes again as are kept: each byte is copied about twice in all
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

    def whole(self, most: int) -> bool:
        """Adds up to ``most`` whole records, checked at once; False if under FEW or unsound."""
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

    # one record's checks, in walk_stream's order
    def one(self, batch_bytes: int) -> bool:
        """Adds the next record, checked; False: the batch ends first, the stream ends or fails."""
        buf, pos = self.buf, self.pos
        if len(buf) - pos < HEADER and self.starts and pos - self.starts[0] >= batch_bytes:
            return False  # the batch first, then more of the stream
        if len(buf) - pos < HEADER and not self.more(HEADER):
            left = len(self.buf) - self.pos
            self.failure = self.broken
            if left and self.broken is None:
                self.failure = truncated_error(
                    f"{left} of {HEADER} header bytes", self.path, self.base + self.pos
                )
            self.done = self.failure is None  # the stream ends after a record
            return False
        buf, pos = self.buf, self.pos
        try:
            length = header_length(
                buf, pos, self.path, self.base + pos, self.max_record_bytes, self.file_size
            )
        except errors.CorruptFileError as e:
            self.failure = e
            return False
        need = HEADER + length + FOOTER
        if len(buf) - pos < need and self.starts and pos - self.starts[0] >= batch_bytes:
            return False
        if len(buf) - pos < need and not self.more(need):
            self.failure = self.broken or truncated_error(
                f"stream ends inside a record of {length} data bytes",
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
