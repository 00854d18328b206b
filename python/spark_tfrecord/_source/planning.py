"""A jar-less read's data files, partition folders and tasks, planned on the driver as Spark
plans the jar's (``FilePartition``); a record belongs to the slice its header starts in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from spark_tfrecord._format.datasets.folders import DataFile, list_files
from spark_tfrecord._format.files import partitions
from spark_tfrecord._format.files.files import Files, is_glob, is_url, local_path
from spark_tfrecord._format.frames.compression import compression_by_name

#: Spark's defaults of ``spark.sql.files.maxPartitionBytes`` and ``openCostInBytes``.
MAX_PARTITION_BYTES = 128 << 20
OPEN_COST_BYTES = 4 << 20


@dataclass(frozen=True)
class Slice:
    """Bytes ``[start, end)`` of a data file; ``file`` is its index in the read's file list."""

    path: str
    start: int
    end: int
    size: int
    file: int


@dataclass
class Task:
    """The slices one Spark task reads (pickled to the worker: an ``InputPartition``)."""

    slices: list[Slice] = field(default_factory=list)


def fsspec_url(path: str) -> str:
    """The path for fsspec: ``s3a://``, ``s3n://`` become ``s3://`` (s3fs, not ``fs.s3a.*``)."""
    return re.sub(r"^s3[an]://", "s3://", path)


def data_files(path: str, files: Files) -> list[DataFile]:
    """The data files of ``path`` (file, folder or glob; a URL read through ``files``), sorted."""
    if not is_url(path):
        return list_files(local_path(path))
    matches = files.glob(path) if is_glob(path) else [path]
    found: list[DataFile] = []
    for match in matches:
        if files.isdir(match):
            found += [
                DataFile(files.join(match, rel), size) for rel, size in files.list_data(match)
            ]
        elif files.isfile(match):
            found.append(DataFile(match, files.size(match)))
        elif not is_glob(path):
            raise FileNotFoundError(f"File {path} does not exist")
    return sorted(found, key=lambda f: f.path)


def plan(
    files: Sequence[DataFile],
    *,
    compression: str | None,
    split_files: bool,
    parallelism: int,
    max_partition_bytes: int = MAX_PARTITION_BYTES,
    open_cost: int = OPEN_COST_BYTES,
) -> list[Task]:
    """The tasks reading ``files``: Spark's ``FilePartition.maxSplitBytes`` and its packing."""
    total = sum(f.size + open_cost for f in files)
    per_core = total // max(parallelism, 1)
    max_split = min(max_partition_bytes, max(open_cost, per_core))
    slices: list[Slice] = []
    for i, f in enumerate(files):
        # split when ``splitFiles`` is on and the file is not compressed
        named = compression_by_name(f.path) or compression
        if f.size > max_split and split_files and named in (None, "none"):
            for start in range(0, f.size, max_split):
                slices.append(Slice(f.path, start, min(start + max_split, f.size), f.size, i))
        else:
            slices.append(Slice(f.path, 0, f.size, f.size, i))
    slices.sort(key=lambda s: s.end - s.start, reverse=True)
    tasks = [Task()]
    size = 0
    for s in slices:
        if tasks[-1].slices and size + (s.end - s.start) > max_split:
            tasks.append(Task())
            size = 0
        tasks[-1].slices.append(s)
        size += s.end - s.start + open_cost
    return tasks if slices else []


def partition_values(found: list[dict[str, str]], given: dict[str, Any]) -> dict[str, Any]:
    """Per partition column, its Spark type (``given``'s, else inferred) and each file's value."""
    out: dict[str, Any] = {}
    for name in found[0] if found else []:
        raws = [d[name] for d in found]
        t = given.get(name) or partitions.column_type(raws)
        out[name] = (t, [partitions.value(raw, t) for raw in raws])
    return out
