"""What ``spark-tfrecord inspect`` looks at (data files, TFDS shards, record counts), in Python."""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

from spark_tfrecord import errors
from spark_tfrecord._format.datasets import tfds_dataset
from spark_tfrecord._format.files.files import (
    Files,
    LocalFiles,
    hidden,
    index_path,
    is_glob,
    metadata,
)
from spark_tfrecord._format.frames.compression import file_compression
from spark_tfrecord._format.frames.framing import HEADER as _HEADER
from spark_tfrecord._format.frames.manifest import count_records


@dataclass(frozen=True)
class DataFile:
    """One data file: its path and size in bytes."""

    path: str
    size: int


@dataclass(frozen=True)
class Shard:
    """One shard of a TFDS split: its split, records (from ``dataset_info.json``), size, path."""

    split: str
    records: int
    size: int
    path: str


def _missing(path: str) -> FileNotFoundError:
    # Hadoop's message.
    return FileNotFoundError(f"File {path} does not exist")


def _braces(pattern: str) -> list[str]:
    """Hadoop's ``{a,b}`` alternatives expanded (``glob`` knows ``*?[`` only)."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if m is None:
        return [pattern]
    return [
        expanded
        for choice in m.group(1).split(",")
        for expanded in _braces(pattern[: m.start()] + choice + pattern[m.end() :])
    ]


def list_files(path: str) -> list[DataFile]:
    """The data files at ``path`` (file, folder or glob) as Spark lists them, sorted by path."""
    found: list[DataFile] = []

    def visit(p: str, top: bool) -> None:
        name = os.path.basename(p.rstrip("/"))
        if not top and hidden(name):
            return
        if os.path.isdir(p):
            for child in os.listdir(p):
                visit(os.path.join(p, child), False)
        elif top or not metadata(name):
            found.append(DataFile(os.path.abspath(p), os.path.getsize(p)))

    if is_glob(path):
        matches = sorted({m for pattern in _braces(path) for m in glob.glob(pattern)})
    elif os.path.exists(path):
        matches = [path]
    else:
        raise _missing(path)
    for match in matches:
        visit(match, True)
    return sorted(found, key=lambda f: f.path)


def tfds_folder(path: str) -> str | None:
    """The TFDS version folder at ``path`` or just under it (its only version), or None."""
    if not os.path.exists(path):
        raise _missing(path)
    if not os.path.isdir(path):
        return None
    if os.path.isfile(os.path.join(path, tfds_dataset.INFO_FILE)):
        return os.path.abspath(path)
    versions = [
        os.path.join(path, d)
        for d in sorted(os.listdir(path))
        if os.path.isfile(os.path.join(path, d, tfds_dataset.INFO_FILE))
    ]
    return os.path.abspath(versions[0]) if len(versions) == 1 else None


def tfds_shards(folder: str) -> tuple[str, str, list[Shard]]:
    """A TFDS version folder's name, version and shards (``dataset_info.json``); TFRecord only."""
    info = tfds_dataset.read_info(folder)
    if info is None:
        raise _missing(os.path.join(folder, tfds_dataset.INFO_FILE))
    if info.splits:
        tfds_dataset.split_info(folder, info.splits[0].name)
    shards = []
    for split in info.splits:
        for name, records in zip(info.shard_names(split), split.shard_lengths):
            path = os.path.join(folder, name)
            if not os.path.exists(path):
                raise _missing(path)
            shards.append(Shard(split.name, records, os.path.getsize(path), path))
    return info.name, info.version, shards


def count(path: str, compression: str | None = None, files: Files | None = None) -> int:
    """Records in one file, checksums checked; ``compression`` if its name doesn't say."""
    fs = files if files is not None else LocalFiles()
    codec = file_compression(path, compression, fs.read_range(path, 0, _HEADER))
    return count_records(path, codec, fs)


def list_files_in(path: str, files: Files) -> list[DataFile]:
    """:func:`list_files` on any file system (an fsspec one's paths are URLs)."""
    if isinstance(files, LocalFiles):
        return list_files(path)
    path = path.rstrip("/")
    if is_glob(path):
        matches = sorted({m for pattern in _braces(path) for m in files.glob(pattern)})
    elif files.isdir(path) or files.isfile(path):
        matches = [path]
    else:
        raise _missing(path)
    found: list[DataFile] = []
    for match in matches:
        if not files.isdir(match):
            found.append(DataFile(match, files.size(match)))
            continue
        for rel, size in files.list_data(match):
            if not metadata(rel.rsplit("/", 1)[-1]):  # below the top, as list_files skips them
                found.append(DataFile(files.join(match, rel), size))
    return sorted(found, key=lambda f: f.path)


def write_index(
    path: str, compression: str | None = None, files: Files | None = None
) -> tuple[int, int]:
    """Writes ``path``'s index (gzip: uncompressed offsets) atomically; returns records, bytes."""
    from spark_tfrecord._format.frames.file_records import records

    fs = files if files is not None else LocalFiles()
    codec = index_compression(path, compression, fs)
    lines = [
        f"{offset} {len(data) + 16}\n" for offset, data in records(path, fs, compression=codec)
    ]
    fs.write_whole(index_path(path), "".join(lines).encode("ascii"))
    return len(lines), fs.size(path)


def index_compression(path: str, compression: str | None = None, files: Files | None = None) -> str:
    """The codec ``path`` is read with; only none and gzip are indexed (else ``ArgumentError``)."""
    fs = files if files is not None else LocalFiles()
    codec = file_compression(path, compression, fs.read_range(path, 0, _HEADER))
    if codec not in ("none", "gzip"):
        raise errors.ArgumentError(
            errors.INVALID_OPTION,
            f"Cannot index {path} (compression {codec}): the readers that take an index (the "
            "tfrecord package for PyTorch, NVIDIA DALI) read uncompressed TFRecord files, and "
            "the tfrecord package gzip ones. Valid compressions with 'writeIndex': none, gzip.",
        )
    return codec
