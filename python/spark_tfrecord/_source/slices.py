"""The records of one slice of a data file, as the jar's ``TFRecordReader`` reads a split: from
its first sound record header to the first at or past its end (a compressed file: all in slice 0).
"""

from __future__ import annotations

from collections.abc import Iterator

from spark_tfrecord import errors
from spark_tfrecord._format.files.files import Files
from spark_tfrecord._format.frames.compression import CHUNK, chunks, file_compression
from spark_tfrecord._format.frames.framing import (
    HEADER,
    find_record_start,
    walk_batches,
    walk_stream,
)
from spark_tfrecord._format.frames.read_options import InferenceOptions
from spark_tfrecord._source.planning import Slice


def _read_from(path: str, start: int, files: Files) -> Iterator[bytes]:
    with files.open(path) as f:
        f.seek(start)
        while chunk := f.read(CHUNK):
            yield chunk


def _first_record(path: str, s: Slice, options: InferenceOptions, files: Files) -> int:
    """The offset of the first sound record header in the slice, or -1 (``findRecordStart``)."""
    with files.open(path) as f:
        return find_record_start(
            f,
            s.start,
            s.end,
            s.size,
            path,
            verify_checksums=options.verify_checksums,
            max_record_bytes=options.max_record_bytes,
            window=CHUNK,
        )


def _stream(
    s: Slice, options: InferenceOptions, files: Files
) -> tuple[Iterator[bytes], int | None, int, bool] | None:
    """The slice's stream, size to check lengths by, file offset, whether whole; None: empty."""
    path = s.path
    head = files.read_range(path, 0, min(HEADER, s.size))
    codec = file_compression(path, options.compression, head)
    if codec != "none":
        if s.start != 0:
            return None
        return chunks(path, codec, files), None, 0, True
    whole = s.start == 0 and s.end >= s.size
    if s.start == 0:
        return _read_from(path, 0, files), s.size, 0, whole
    base = _first_record(path, s, options, files)
    if base < 0:
        return None
    return _read_from(path, base, files), s.size - base, base, whole


def slice_batches(
    s: Slice, options: InferenceOptions, files: Files, batch: int
) -> Iterator[tuple[bytes, list[int], list[int], list[int]]]:
    """:func:`slice_records`' records in batches of at most ``batch``: ``(buf, starts, stops,
    offsets)``, record i ``buf[starts[i]:stops[i]]`` at ``offsets[i]`` in the file's stream.
    Damaged framing is raised after the batch of the records before it.
    """
    found = _stream(s, options, files)
    if found is None:
        return
    stream, size, base, whole = found
    walk = walk_batches(
        stream,
        s.path,
        size,
        verify_checksums=options.verify_checksums,
        max_record_bytes=options.max_record_bytes,
        batch=batch,
        stop_at=None if whole else s.end - base,
    )
    try:
        for buf, starts, stops, offsets in walk:
            yield buf, starts, stops, [base + o for o in offsets] if base else offsets
    except errors.CorruptFileError as e:
        raise _in_file(e, s.path, base) from None


def slice_records(s: Slice, options: InferenceOptions, files: Files) -> Iterator[tuple[int, bytes]]:
    """The records of slice ``s`` as (offset in the file's stream, data)."""
    found = _stream(s, options, files)
    if found is None:
        return
    stream, size, base, whole = found
    walk = walk_stream(
        stream,
        s.path,
        size,
        verify_checksums=options.verify_checksums,
        max_record_bytes=options.max_record_bytes,
    )
    try:
        for offset, data in walk:
            at = base + offset
            if not whole and at >= s.end:
                return
            yield at, bytes(data)
    except errors.CorruptFileError as e:
        raise _in_file(e, s.path, base) from None


def _in_file(e: errors.CorruptFileError, path: str, base: int) -> errors.CorruptFileError:
    """``e`` with its offset counted from the file's start, not the stream's at ``base``."""
    if not base:
        return e
    at = base + int(e.parameters["offset"])
    return errors.CorruptFileError(e.condition, e.parameters["reason"], path, at)
