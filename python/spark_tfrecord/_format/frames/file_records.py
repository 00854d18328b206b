"""The records of one TFRecord file in order, decompressed as its name or first bytes say."""

from __future__ import annotations

from collections.abc import Iterator

from spark_tfrecord._format.files.files import Files
from spark_tfrecord._format.frames.compression import chunks, file_compression
from spark_tfrecord._format.frames.framing import HEADER as _HEADER
from spark_tfrecord._format.frames.framing import MAX_RECORD_BYTES as _MAX_RECORD_BYTES
from spark_tfrecord._format.frames.framing import walk_batches


def records(
    path: str,
    files: Files,
    *,
    compression: str | None = None,
    verify_checksums: bool = True,
    max_record_bytes: int = _MAX_RECORD_BYTES,
) -> Iterator[tuple[int, bytes]]:
    """Each record as (offset in the decompressed stream, data); damage raises CorruptFileError."""
    for buf, starts, stops, offsets in record_batches(
        path,
        files,
        compression=compression,
        verify_checksums=verify_checksums,
        max_record_bytes=max_record_bytes,
    ):
        for offset, a, b in zip(offsets, starts, stops):
            yield offset, bytes(buf[a:b])


def record_batches(
    path: str,
    files: Files,
    *,
    compression: str | None = None,
    verify_checksums: bool = True,
    max_record_bytes: int = _MAX_RECORD_BYTES,
    batch: int = 4096,
) -> Iterator[tuple[bytes, list[int], list[int], list[int]]]:
    """:func:`records`, in batches (``walk_batches``'): ``(buf, starts, stops, offsets)``."""
    codec = file_compression(path, compression, files.read_range(path, 0, _HEADER))
    file_size = files.size(path) if codec == "none" else None
    yield from walk_batches(
        chunks(path, codec, files),
        path,
        file_size,
        verify_checksums=verify_checksums,
        max_record_bytes=max_record_bytes,
        batch=batch,
    )
