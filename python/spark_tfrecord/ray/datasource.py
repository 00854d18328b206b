"""TFRecord folders as a Ray Data ``Dataset``: :func:`read` and its :class:`TFRecordDatasource`.

The reading is :func:`~spark_tfrecord.read_arrow`'s (:class:`~spark_tfrecord._source.arrow_read.
ArrowRead`): the jar's schema, rows and errors, partition columns included. The read's tasks are
planned as Spark plans the jar's (whole files, and byte ranges of large uncompressed files: a
record belongs to the range its header starts in), one Ray ``ReadTask`` each. A folder a
spark-tfrecord write left a valid manifest in gives each task of whole files its record count,
so that ``ds.count()`` reads nothing, but only where that count is the task's rows: each of its
files read whole, of the size the manifest names, by a read that gives a row for every record
(not ``mode`` DROPMALFORMED, ``ignoreCorruptFiles`` or ``ignoreMissingFiles``, which may drop
some). Any other task's rows are unknown (None), and Ray counts them by reading. Every task gives
its bytes on disk as its size estimate.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import ray.data
from ray.data.block import BlockMetadata
from ray.data.datasource import Datasource, ReadTask

from spark_tfrecord._format.frames.manifest import read_manifest
from spark_tfrecord._source.arrow_read import ArrowRead, prepare
from spark_tfrecord._source.planning import Task

#: Ray's in-memory size estimate per byte on disk of an uncompressed file (Arrow's offsets and
#: validity beside the values, less the record framing and feature keys: about one to one), and
#: of a compressed one (gzip and zlib shrink feature records about three times).
SIZE_PER_BYTE = 1
COMPRESSED_SIZE_PER_BYTE = 3


class TFRecordDatasource(Datasource):
    """A Ray ``Datasource`` of the TFRecord folder, file or glob ``path``; see :func:`read`."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        columns: Sequence[str] | str | None = None,
        *,
        options: Mapping[str, str] | None = None,
        storage_options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call,unused-ignore]
        self._path = os.fspath(path)
        self._read: ArrowRead = prepare(
            self._path, columns, dict(options or {}), storage_options, "spark_tfrecord.ray.read"
        )
        self._records = self._counted()

    def _counted(self) -> dict[str, tuple[int, int]]:
        """Each data file's records and bytes, from the folder's manifest when it is valid (no
        file is read) and the read gives a row for every record; empty otherwise."""
        fs, path, parsed = self._read.fs, self._read.path, self._read.parsed
        if parsed.mode == "DROPMALFORMED" or parsed.inference.ignore_corrupt_files:
            return {}  # a record failing the schema, or damaged framing, gives no row
        if parsed.inference.ignore_missing_files or not fs.isdir(path):
            return {}  # a file gone since planning gives none
        info = read_manifest(path, fs)
        if info is None:
            return {}
        return {_key(f.path): (f.num_records, f.num_bytes) for f in info.files}

    def get_name(self) -> str:
        return "TFRecord"

    def estimate_inmemory_data_size(self) -> int:
        return sum(_size(f.path, f.size) for f in self._read.files)

    def get_read_tasks(
        self,
        parallelism: int,
        per_task_row_limit: int | None = None,
        data_context: Any = None,
    ) -> list[ReadTask]:
        read = self._read
        tasks: list[ReadTask] = []
        # One task asked for (Ray's planning asks for one to learn the rows and size): every file
        # whole, so that a manifest's counts give the rows even of files Spark would split.
        planned = [read.in_order()] if parallelism <= 1 else read.tasks(parallelism)
        for task in planned:
            metadata = BlockMetadata(
                num_rows=self._rows(task),
                size_bytes=sum(_size(s.path, s.end - s.start) for s in task.slices),
                input_files=tuple(s.path for s in task.slices),
                exec_stats=None,
            )
            tasks.append(
                ReadTask(
                    _reader(read, task),
                    metadata,
                    schema=read.target,
                    per_task_row_limit=per_task_row_limit,
                )
            )
        return tasks

    def _rows(self, task: Task) -> int | None:
        """The task's rows, when the manifest counts them: each of its slices a whole file of
        the size the manifest names (a byte range's rows are not known); None otherwise."""
        rows = 0
        for s in task.slices:
            counted = self._records.get(_key(s.path))
            if counted is None or s.start != 0 or s.end < s.size or counted[1] != s.size:
                return None
            rows += counted[0]
        return rows


def _key(path: str) -> str:
    return path if "://" in path else os.path.normpath(path)


def _size(path: str, on_disk: int) -> int:
    compressed = path.endswith((".gz", ".deflate", ".zlib"))
    return on_disk * (COMPRESSED_SIZE_PER_BYTE if compressed else SIZE_PER_BYTE)


def _reader(read: ArrowRead, task: Task) -> Any:
    """The function a Ray worker runs for ``task``: its batches, as Arrow tables (Ray's
    blocks); a task of no rows (empty files, every record dropped) gives one empty table of the
    read's schema, not Ray's block of no columns."""

    def blocks() -> Iterator[pa.Table]:
        rows = False
        for batch in read.read(task):
            rows = True
            yield pa.Table.from_batches([batch], read.target)
        if not rows:
            yield read.target.empty_table()

    return blocks


def read(
    path: str | os.PathLike[str],
    columns: Sequence[str] | str | None = None,
    *,
    options: Mapping[str, str] | None = None,
    storage_options: Mapping[str, Any] | None = None,
    override_num_blocks: int | None = None,
    concurrency: int | None = None,
    ray_remote_args: Mapping[str, Any] | None = None,
) -> ray.data.Dataset:
    """A ``ray.data.Dataset`` of the records of the TFRecord folder, file or glob ``path`` (a
    local path, a ``file://`` URL, or an fsspec URL such as ``s3://bucket/train`` with fsspec's
    ``storage_options``), as ``spark.read.format("tfrecord").load(path)`` reads them: the same
    schema (inferred as the jar infers it, partition columns last), rows and errors.

    - ``columns``: all (None); some by name, in that order; or a DDL string, which is then the
      schema (nothing inferred, only its columns decoded), as :func:`~spark_tfrecord.read_arrow`.
    - ``options``: the jar's read options, as strings (``recordType``, ``mode``,
      ``inferNesting``, ``ignoreCorruptFiles``...; docs/options.md).
    - ``override_num_blocks``, ``concurrency``, ``ray_remote_args``: as for Ray's own readers
      (``ray.data.read_datasource``). The tasks are planned as Spark plans the jar's for that
      many blocks: whole files packed together, and large uncompressed files in byte ranges.
      By default two blocks per CPU of the Ray cluster, not Ray's choice (200 for a large
      folder: each block costs Ray milliseconds of its own, as much CPU as our decode of 1M
      narrow rows on 2 CPUs, benchmarks/ray_overhead.py).
    - A folder with a valid ``_tfrecord_manifest.json`` counts its rows from it:
      ``ds.count()`` reads no record (but with ``mode`` DROPMALFORMED, ``ignoreCorruptFiles`` or
      ``ignoreMissingFiles``, which may drop records: then Ray counts by reading).
    - A damaged or malformed record fails the read in its Ray task with
      :class:`~spark_tfrecord.errors.CorruptFileError`, its file and offset (FAILFAST, the
      default).

    >>> import tempfile, ray
    >>> import spark_tfrecord.ray
    >>> folder = tempfile.mkdtemp() + "/train"
    >>> spark.createDataFrame([(1, [0.5]), (2, [])], "id long, x array<float>").write.format(
    ...     "tfrecord").save(folder)
    >>> ds = spark_tfrecord.ray.read(folder)
    >>> ds.count()
    2
    >>> sorted(ds.to_pandas()["id"].tolist())
    [1, 2]
    """
    source = TFRecordDatasource(path, columns, options=options, storage_options=storage_options)
    if override_num_blocks is None:
        override_num_blocks = 2 * _cpus()
    dataset: ray.data.Dataset = ray.data.read_datasource(
        source,
        override_num_blocks=override_num_blocks,
        concurrency=concurrency,
        ray_remote_args=dict(ray_remote_args or {}),
    )
    return dataset


def _cpus() -> int:
    """The CPUs of the Ray cluster this process is connected to (this machine's when none yet:
    ``read_datasource`` then starts a local one with all of them)."""
    if ray.is_initialized():
        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call,unused-ignore]
        return max(1, int(resources.get("CPU", 1)))
    return os.cpu_count() or 1
