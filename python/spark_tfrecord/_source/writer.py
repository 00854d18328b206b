"""The write half of the jar-less ``tfrecord`` source: ``df.write.format("tfrecord")`` with no jar.
Each task stages at most one file in a hidden folder; ``commit`` is the jar's job commit and
``abort`` leaves the folder as it was. Spark refuses ``partitionBy`` for a Python writer: write
each value's rows into its ``key=value`` folder. Modes append and overwrite; local paths only.
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from spark_tfrecord import errors
from spark_tfrecord._format.columns.encoder import ExampleEncoder
from spark_tfrecord._format.datasets import manifest_write
from spark_tfrecord._format.datasets.commit import FolderWrite
from spark_tfrecord._format.files.files import is_url, local_path
from spark_tfrecord._format.frames.record_writer import RecordFileWriter
from spark_tfrecord._source.options import WriteOptions


@dataclass
class TaskFile(WriterCommitMessage):
    """A task's staged file (None: no rows), its name, records, features' fewest and most values."""

    staged: str | None
    name: str
    records: int
    counts: manifest_write.Counts


def write_path(options: Mapping[str, str]) -> str:
    """The local folder a write's ``path`` option names (a ``file:`` URL too)."""
    path = options.get("path")
    if not path:
        raise errors.ArgumentError(
            errors.INVALID_OPTION,
            "A TFRecord write needs a path: df.write.format('tfrecord').mode('append').save(path)",
            option="path",
            value="",
            valid="a local folder",
        )
    path = str(path)
    if is_url(path):
        raise errors.ArgumentError(
            errors.INVALID_OPTION,
            f"The Python data source (no jar) writes local (or FUSE-mounted) folders, not {path}: "
            "write to a local folder and copy it, or write with the jar.",
            option="path",
            value=path,
            valid="a local folder",
        )
    return os.path.abspath(local_path(path))


class TFRecordWriter(DataSourceArrowWriter):
    """Writes a DataFrame's rows as the jar writes them; see the module's docstring."""

    def __init__(self, options: Mapping[str, str], schema: StructType, overwrite: bool) -> None:
        self.options = WriteOptions.parse(options)
        self.schema = schema.jsonValue()
        # A schema or option the jar refuses fails here, on the driver.
        self.record_type = self._encoder().record_type
        n = self.options.num_shards
        self.target = FolderWrite(
            write_path(options),
            None,
            write_id=str(uuid.uuid4()),
            compression=self.options.compression,
            num_shards=n,
            overwrite=overwrite,
            shards_option="numShards",
            repartition=f"repartition the DataFrame to {n} partitions (the Python data source "
            "cannot arrange the rows before the write, as the jar's session extensions do).",
        )
        self.target.start()

    def _encoder(self) -> ExampleEncoder:
        o = self.options
        return ExampleEncoder(
            self.schema,
            record_type=o.record_type,
            path_separator=o.path_separator,
            vector_layout=o.vector_layout,
        )

    # --- in each task ---------------------------------------------------------------------

    def write(self, iterator: Iterator[Any]) -> TaskFile:
        from pyspark import TaskContext

        context = TaskContext.get()
        partition = context.partitionId() if context is not None else 0
        attempt = context.attemptNumber() if context is not None else 0
        name = self.target.name(partition)
        staged = self.target.staged_path(name, str(attempt))
        encoder = self._encoder()
        batches = (batch for batch in iterator if batch.num_rows)
        first = next(batches, None)
        # As Spark: only the first task writes a file with no rows (so one exists).
        if first is None and partition != 0:
            return TaskFile(None, name, 0, manifest_write.NO_COUNTS)
        out = open(staged, "xb")  # noqa: SIM115 (closed below, or on failure)
        try:
            records = RecordFileWriter(out, self.options.compression)
            for batch in itertools.chain([] if first is None else [first], batches):
                records.write(encoder.encode(batch))
            records.close()
            out.close()
        except BaseException:
            out.close()
            os.remove(staged)
            raise
        return TaskFile(staged, name, records.records, encoder.value_counts())

    # --- on the driver --------------------------------------------------------------------

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        tasks = [m for m in messages if isinstance(m, TaskFile)]
        self.target.commit(tasks, self.record_type, self.schema)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        # The messages are all None once a task failed: the staging folder holds the files.
        self.target.discard()
