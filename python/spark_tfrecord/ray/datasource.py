"""TFRecord folders as a Ray Data ``Dataset``: :func:`read` and its :class:`TFRecordDatasource`."""

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

#: Records per Arrow table a read task yields: twice the other reads' batches, which Ray reads
#: in 0.94x the time (docs/ray.md).
BLOCK_RECORDS = 8192
#: Ray's in-memory size estimate per byte on disk of an uncompressed, and a compressed, file.
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
        """Each file's (records, bytes) from a valid manifest, if every record gives a row."""
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
        # One task asked for (Ray learning rows and size): whole files, so manifest counts apply.
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
        """The task's rows if the manifest counts them (whole files of its sizes), else None."""
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
    """A Ray worker's function for ``task``: Arrow tables, an empty one of the schema if no rows."""

    def blocks() -> Iterator[pa.Table]:
        rows = False
        for batch in read.read(task, BLOCK_RECORDS):
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
    """A ``ray.data.Dataset`` of the TFRecord folder, file or glob ``path``, as the jar reads it.

    ``path``: local, ``file://``, or an fsspec URL with ``storage_options``. Schema (partition
    columns last), rows and errors are the jar's. ``columns``: all (None), some by name, or a DDL
    schema, as :func:`~spark_tfrecord.read_arrow`. ``options``: the jar's read options, as
    strings. ``override_num_blocks`` (default: two per Ray CPU), ``concurrency``,
    ``ray_remote_args``: as for Ray's readers. A valid manifest spares ``ds.count()`` reading.
    A bad record fails its task with :class:`~spark_tfrecord.errors.CorruptFileError` (FAILFAST).

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
    """The connected Ray cluster's CPUs, else this machine's (``read_datasource`` starts one)."""
    if ray.is_initialized():
        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call,unused-ignore]
        return max(1, int(resources.get("CPU", 1)))
    return os.cpu_count() or 1
