"""The write half of the jar-less ``tfrecord`` source: ``df.write.format("tfrecord")`` with no jar.

:class:`TFRecordWriter` is a ``DataSourceArrowWriter``. On the driver it checks the options and
the schema (the encoder is built once, so a column no record can hold fails the query before any
task) and starts the write (:class:`~spark_tfrecord._format.datasets.commit.FolderWrite`: its
staging folder, ``.tfrecord-staging-<write id>`` in the folder written, hidden, so that readers
of either route pass over it). Each task encodes its Arrow batches with the package's encoder
(:class:`~spark_tfrecord._format.columns.encoder.ExampleEncoder`, the jar's bytes) into one staged
file. ``commit`` is the write's commit, the jar's job commit (the one Ray's datasink runs too):
under the folder's manifest lock it empties the folder (mode overwrite), moves the files into
place with the jar's names (``part-00000-<write id>-c000.tfrecord.gz``), adds the empty files
``numShards`` asks for, merges the files' counts into ``_tfrecord_manifest.json`` and writes
``_SUCCESS``. ``abort`` removes the staging folder: a failed job leaves the folder as it was.

What the API does not allow: Spark tells a Python data source's writer no partition columns, and
refuses ``partitionBy`` itself before the writer exists ("The provided partitioning or
clustering columns do not match the existing table's"); write each value's rows into its
``key=value`` folder instead (both routes read those as partition columns), or add the jar.
Only modes ``append`` and ``overwrite`` exist (Spark's ``UNSUPPORTED_DATA_SOURCE_SAVE_MODE``
otherwise). Paths are local (or FUSE-mounted); an object store's URL is refused by name.
"""

from __future__ import annotations

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
    """What a write task sends its commit: the file it staged (None: no rows, no file), the
    file's name in the folder, its records and its features' fewest and most values."""

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
        out: Any = None
        records: RecordFileWriter | None = None
        try:
            for batch in iterator:
                if batch.num_rows == 0:
                    continue
                encoded = encoder.encode(batch)
                if records is None:
                    out = open(staged, "xb")  # noqa: SIM115 (closed below, or on failure)
                    records = RecordFileWriter(out, self.options.compression)
                records.write(encoded)
            if records is None:
                # As Spark's file writes: a task with no rows writes no file, but the first,
                # so that a write of no rows leaves one (empty) file.
                if partition != 0:
                    return TaskFile(None, name, 0, manifest_write.NO_COUNTS)
                out = open(staged, "xb")  # noqa: SIM115
                records = RecordFileWriter(out, self.options.compression)
            records.close()
            out.close()
        except BaseException:
            if out is not None:
                out.close()
                os.remove(staged)
            raise
        return TaskFile(staged, name, records.records, encoder.value_counts())

    # --- on the driver --------------------------------------------------------------------

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        tasks = [m for m in messages if isinstance(m, TaskFile)]
        self.target.commit(tasks, self.record_type, self.schema)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        # The messages are None for every task once one failed (Spark 4.0 and 4.3): the staging
        # folder holds all this write's files.
        self.target.discard()
