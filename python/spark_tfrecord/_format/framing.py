"""TFRecord framing: each record is its length (uint64, little-endian) and that length's masked
CRC32C (the 12-byte header), the data, then the data's masked CRC32C (the 4-byte footer).

The header check (:func:`header_length`) is the one that counting, the loaders' scan and the
compression detection use; :func:`walk_stream` walks a (decompressed) stream of records,
checking both checksums of each, as the data source does; counting and inference use it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator

from spark_tfrecord import errors
from spark_tfrecord._format.crc import MASK_DELTA, crc32c, masked

#: A record's header (length, its CRC) and footer (the data's CRC), in bytes.
HEADER, FOOTER = 12, 4
#: The largest record the data source reads (``TFRecordFraming.MaxRecordBytes``).
MAX_RECORD_BYTES = 2**31 - 1 - 64

_HEADER_FIELDS = struct.Struct("<QI")
_FOOTER_FIELD = struct.Struct("<I")


def sound_header(head: bytes) -> bool:
    """Whether ``head`` starts with a record header whose length matches its CRC."""
    if len(head) < HEADER:
        return False
    (length_crc,) = _FOOTER_FIELD.unpack_from(head, 8)
    return bool(masked(crc32c()(head[:8])) == length_crc)


def header_length(buf: bytes, pos: int, path: str, offset: int) -> int:
    """The data length in the record header at ``buf[pos:]`` (stream offset ``offset``),
    checked against its CRC and the largest record; a CorruptFileError naming ``path``."""
    length, length_crc = _HEADER_FIELDS.unpack_from(buf, pos)
    if masked(crc32c()(buf[pos : pos + 8])) != length_crc:
        raise errors.CorruptFileError(
            errors.LENGTH_CHECKSUM, "Corrupt TFRecord: length checksum mismatch", path, offset
        )
    # A damaged length is refused before its bytes are gathered, as the data source does.
    if length > MAX_RECORD_BYTES:
        raise errors.CorruptFileError(
            errors.RECORD_TOO_LARGE,
            f"TFRecord of {length} bytes exceeds maxRecordBytes ({MAX_RECORD_BYTES})",
            path,
            offset,
        )
    return int(length)


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
        length = header_length(buf, pos, path, base + pos)
        if length > max_record_bytes:
            raise errors.CorruptFileError(
                errors.RECORD_TOO_LARGE,
                f"TFRecord of {length} bytes exceeds maxRecordBytes ({max_record_bytes})",
                path,
                base + pos,
            )
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
            raise errors.CorruptFileError(
                errors.DATA_CHECKSUM,
                "Corrupt TFRecord: data checksum mismatch",
                path,
                base + pos,
            )
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
    batch_bytes: int = 2 * 2**20,
    stop_at: int | None = None,
) -> Iterator[tuple[bytes, list[int], list[int], list[int]]]:
    """:func:`walk_stream`'s records, the same checks in the same order, in batches of at most
    ``batch``: ``(buf, starts, stops, offsets)``, record i of the batch being
    ``buf[starts[i]:stops[i]]`` at stream offset ``offsets[i]``, with no Python object per
    record but three ints. A damaged stream raises its error after the batch of the records
    before it (an error of the stream itself, a compressed one's, too). A batch ends early
    where its records pass ``batch_bytes`` and the stream must be read further, so that the
    bytes kept are copied once more per chunk read at most. With ``stop_at``, the walk ends
    after the first record (checked) whose offset is ``stop_at`` or more, which it does not
    give (a split's end)."""
    crc = crc32c()
    unpack_header = _HEADER_FIELDS.unpack_from
    footer = _FOOTER_FIELD.unpack_from
    stream = iter(chunks)
    buf = b""
    view = memoryview(buf)
    pos = 0  # in buf
    base = 0  # the stream offset of buf[0]
    starts: list[int] = []
    stops: list[int] = []
    offsets: list[int] = []
    broken: Exception | None = None

    def more(need: int) -> bool:
        """Makes ``need`` bytes available at ``pos``, keeping the batch's records; False if
        the stream ends first."""
        nonlocal buf, view, pos, base, broken
        keep = starts[0] - HEADER if starts else pos
        parts = [buf[keep:]]
        have = len(parts[0]) - (pos - keep)
        base += keep
        pos -= keep
        for k in range(len(starts)):
            starts[k] -= keep
            stops[k] -= keep
        try:
            for chunk in stream:
                parts.append(chunk)
                have += len(chunk)
                if have >= need:
                    break
        except Exception as e:  # raised after the batch of the records before it
            broken = e
        buf = b"".join(parts)
        view = memoryview(buf)
        return have >= need

    failure: Exception | None = None
    done = False
    while not done and failure is None:
        while len(starts) < batch:
            if len(buf) - pos < HEADER and starts and pos - starts[0] >= batch_bytes:
                break  # the batch first, then more of the stream
            if len(buf) - pos < HEADER and not more(HEADER):
                if broken is not None:
                    failure = broken
                    break
                left = len(buf) - pos
                if left:
                    failure = errors.CorruptFileError(
                        errors.TRUNCATED,
                        f"Truncated TFRecord: {left} of {HEADER} header bytes",
                        path,
                        base + pos,
                    )
                done = True
                break
            length, length_crc = unpack_header(buf, pos)
            c = crc(buf[pos : pos + 8])  # masked, inline: a call less per record
            if (((c >> 15) | (c << 17)) + MASK_DELTA) & 0xFFFFFFFF != length_crc:
                failure = errors.CorruptFileError(
                    errors.LENGTH_CHECKSUM,
                    "Corrupt TFRecord: length checksum mismatch",
                    path,
                    base + pos,
                )
                break
            if length > MAX_RECORD_BYTES:
                failure = errors.CorruptFileError(
                    errors.RECORD_TOO_LARGE,
                    f"TFRecord of {length} bytes exceeds maxRecordBytes ({MAX_RECORD_BYTES})",
                    path,
                    base + pos,
                )
                break
            if length > max_record_bytes:
                failure = errors.CorruptFileError(
                    errors.RECORD_TOO_LARGE,
                    f"TFRecord of {length} bytes exceeds maxRecordBytes ({max_record_bytes})",
                    path,
                    base + pos,
                )
                break
            if file_size is not None and length > file_size - (base + pos) - HEADER - FOOTER:
                failure = errors.CorruptFileError(
                    errors.TRUNCATED,
                    f"Truncated TFRecord: the header claims {length} data bytes, but the file "
                    f"ends {file_size - (base + pos) - HEADER} bytes after it",
                    path,
                    base + pos,
                )
                break
            need = HEADER + length + FOOTER
            if len(buf) - pos < need and starts and pos - starts[0] >= batch_bytes:
                break
            if len(buf) - pos < need and not more(need):
                if broken is not None:
                    failure = broken
                    break
                failure = errors.CorruptFileError(
                    errors.TRUNCATED,
                    f"Truncated TFRecord: stream ends inside a record of {length} data bytes",
                    path,
                    base + pos,
                )
                break
            end = pos + HEADER + length
            if verify_checksums:
                c = crc(view[pos + HEADER : end])
                if (((c >> 15) | (c << 17)) + MASK_DELTA) & 0xFFFFFFFF != footer(buf, end)[0]:
                    failure = errors.CorruptFileError(
                        errors.DATA_CHECKSUM,
                        "Corrupt TFRecord: data checksum mismatch",
                        path,
                        base + pos,
                    )
                    break
            if stop_at is not None and base + pos >= stop_at:
                done = True
                break
            starts.append(pos + HEADER)
            stops.append(end)
            offsets.append(base + pos)
            pos = end + FOOTER
        if starts:
            yield buf, starts, stops, offsets
            starts, stops, offsets = [], [], []
    if failure is not None:
        raise failure


def count_stream(chunks: Iterable[bytes], path: str, file_size: int | None) -> int:
    """The number of records in the stream ``chunks`` (a file's bytes, decompressed), every
    record's length and both checksums checked (:func:`walk_stream`)."""
    count = 0
    for _ in walk_stream(chunks, path, file_size):
        count += 1
    return count
