"""The records of one slice of a data file, as the jar's ``TFRecordReader`` reads a split: from
its first sound record header to the first at or past its end (a compressed file: all in slice 0).
"""

from __future__ import annotations

from collections.abc import Iterator

from spark_tfrecord import errors
from spark_tfrecord._format.files.files import Files
from spark_tfrecord._format.frames.compression import CHUNK, chunks, file_compression
from spark_tfrecord._format.frames.framing import HEADER, find_record_start, walk_batches
from spark_tfrecord._format.frames.read_options import InferenceOptions
from spark_tfrecord._source.planning import Slice


def _read_from(path: str, start: int, files: Files) -> Iterator[bytes]:
    with files.open(path) as f:
        f.seek(start)
        while chunk := f.read(CHUNK):
            yield chunk


def slice_batches(
    s: Slice, options: InferenceOptions, files: Files, batch: int
) -> Iterator[tuple[bytes, list[int], list[int], list[int]]]:
    """:func:`slice_records`' records in batches of at most ``batch``: ``(buf, starts, stops,
    offsets)``, record i ``buf[starts[i]:stops[i]]`` at ``offsets[i]`` in the file's stream.
    Damaged framing is raised after the batch of the records before it.
    """
    path = s.path
    head = files.read_range(path, 0, min(HEADER, s.size))
    codec = file_compression(path, options.compression, head)
    base = 0
    if s.start != 0:
        if codec != "none":
            return  # a compressed file is read whole, in slice 0
        with files.open(path) as f:  # from the first sound record header in the slice
            base = find_record_start(
                f,
                s.start,
                s.end,
                s.size,
                path,
                verify_checksums=options.verify_checksums,
                max_record_bytes=options.max_record_bytes,
                window=CHUNK,
            )
        if base < 0:
            return
    compressed = codec != "none"  # (its size is not known)
    walk = walk_batches(
        chunks(path, codec, files) if compressed else _read_from(path, base, files),
        path,
        None if compressed else s.size - base,
        verify_checksums=options.verify_checksums,
        max_record_bytes=options.max_record_bytes,
        batch=batch,
        stop_at=None if compressed or (s.start == 0 and s.end >= s.size) else s.end - base,
    )
    try:
        for buf, starts, stops, offsets in walk:
            yield buf, starts, stops, [base + o for o in offsets] if base else offsets
    except errors.CorruptFileError as e:
        if not base:
            raise e from None
        at = base + int(e.parameters["offset"])  # from the file's start, not the stream's
        raise errors.CorruptFileError(e.condition, e.parameters["reason"], path, at) from None


def slice_records(s: Slice, options: InferenceOptions, files: Files) -> Iterator[tuple[int, bytes]]:
    """The records of slice ``s`` as (offset in the file's stream, data)."""
    for buf, starts, stops, offsets in slice_batches(s, options, files, 4096):
        for at, a, b in zip(offsets, starts, stops):
            yield at, bytes(buf[a:b])
