"""What ``spark-tfrecord inspect`` looks at, found in plain Python as the jar's
``TFRecordInspector`` finds it: the data files under a path or glob, the TFDS version folder, its
shards, and each file's record count (both checksums of every record checked)."""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

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
    # Hadoop's message, which the command has always shown.
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
    """The data files under ``path`` (itself when a file, every match when a glob), recursively,
    skipping names that start with ``_`` or ``.`` and TFDS metadata files below the top, sorted
    by path. A glob that matches nothing gives none; a missing path raises FileNotFoundError."""
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
    """The TFDS version folder at ``path`` (a folder with ``dataset_info.json``) or just under
    it (a dataset folder holding one version), or None."""
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
    """A TFDS version folder's dataset name, version and shards, as ``dataset_info.json`` has
    them (nothing else is read); refuses a folder of another file format, naming it."""
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
    """Records in one file, its framing walked and both checksums of each record checked;
    ``compression`` for a file whose name does not say (else its first bytes decide)."""
    fs = files if files is not None else LocalFiles()
    codec = file_compression(path, compression, fs.read_range(path, 0, _HEADER))
    return count_records(path, codec, fs)


def list_files_in(path: str, files: Files) -> list[DataFile]:
    """:func:`list_files` on any file system: the data files under the folder, file or glob
    ``path`` of ``files`` (an fsspec URL's: paths are URLs), found as Spark finds them."""
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
    """Writes the index of the TFRecord file ``path`` (local, or of ``files``) beside it
    (``_<name>.idx``: one line ``<offset> <size>`` per record, what the ``writeIndex`` option
    writes), reading it through with both checksums of every record checked; the index appears
    whole or not at all (:meth:`Files.write_whole`). Offsets of a gzip file are in its
    uncompressed stream. Returns the file's records and bytes."""
    from spark_tfrecord._format.frames.file_records import records

    fs = files if files is not None else LocalFiles()
    codec = index_compression(path, compression, fs)
    lines = [
        f"{offset} {len(data) + 16}\n" for offset, data in records(path, fs, compression=codec)
    ]
    fs.write_whole(index_path(path), "".join(lines).encode("ascii"))
    return len(lines), fs.size(path)


def index_compression(path: str, compression: str | None = None, files: Files | None = None) -> str:
    """The compression ``path`` is read with, refused (``TFRECORD_INVALID_OPTION``) when no
    reader takes an index of it: only uncompressed and gzip files are indexed."""
    from spark_tfrecord import errors

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
