"""The write half of the jar-less ``tfrecord`` source: ``df.write.format("tfrecord")`` with no jar.

:class:`TFRecordWriter` is a ``DataSourceArrowWriter``. On the driver it checks the options and
the schema (the encoder is built once, so a column no record can hold fails the query before any
task) and makes the write's staging folder, ``.tfrecord-staging-<write id>`` in the folder
written: hidden, so that readers of either route pass over it. Each task encodes its Arrow
batches with the package's encoder (:class:`~spark_tfrecord._format.columns.encoder.ExampleEncoder`,
the jar's bytes) into one staged file. ``commit`` then, under the folder's manifest lock,
empties the folder (mode overwrite), moves the files into place with the jar's names
(``part-00000-<write id>-c000.tfrecord.gz``), adds the empty files ``numShards`` asks for,
merges the files' counts into ``_tfrecord_manifest.json`` and writes ``_SUCCESS``, as the jar's
job commit does. ``abort`` removes the staging folder: a failed job leaves the folder as it was.

What the API does not allow: Spark tells a Python data source's writer no partition columns, and
refuses ``partitionBy`` itself before the writer exists ("The provided partitioning or
clustering columns do not match the existing table's"); write each value's rows into its
``key=value`` folder instead (both routes read those as partition columns), or add the jar.
Only modes ``append`` and ``overwrite`` exist (Spark's ``UNSUPPORTED_DATA_SOURCE_SAVE_MODE``
otherwise). Paths are local (or FUSE-mounted); an object store's URL is refused by name.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from spark_tfrecord import errors
from spark_tfrecord._format.columns.encoder import ExampleEncoder
from spark_tfrecord._format.datasets import manifest_write
from spark_tfrecord._format.files.files import is_url, local_path
from spark_tfrecord._format.frames.record_writer import EXTENSIONS, RecordFileWriter
from spark_tfrecord._source.options import WriteOptions

#: The staging folder's name in the folder written, before the write's id.
STAGING_PREFIX = ".tfrecord-staging-"
#: The extension of the files written, before the codec's.
EXTENSION = ".tfrecord"


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
        self.folder = write_path(options)
        self.schema = schema.jsonValue()
        self.overwrite = overwrite
        # A schema or option the jar refuses fails here, on the driver.
        self.record_type = self._encoder().record_type
        self.write_id = str(uuid.uuid4())
        self.created = not os.path.isdir(self.folder)
        self.staging = os.path.join(self.folder, STAGING_PREFIX + self.write_id)
        # Made here, before any task: a task that outlives its job's abort finds no folder to
        # stage into, rather than leaving a file behind.
        os.makedirs(self.staging)
        self.extension = EXTENSION + EXTENSIONS[self.options.compression]

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
        name = f"part-{partition:05d}-{self.write_id}-c000{self.extension}"
        staged = os.path.join(self.staging, f"{name}.{attempt}")
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
        tasks = sorted(
            (m for m in messages if isinstance(m, TaskFile) and m.staged is not None),
            key=lambda m: m.name,
        )
        n = self.options.num_shards or max(1, len(tasks))
        if len(tasks) > n:
            self.abort(messages)
            raise OSError(
                f"The write produced {len(tasks)} files, more than its numShards {n}: "
                f"repartition the DataFrame to {n} partitions (the Python data source cannot "
                "arrange the rows before the write, as the jar's session extensions do)."
            )
        with manifest_write.lock(self.folder, self.write_id):
            if self.overwrite:
                self._empty_folder()
            placed: list[tuple[str, int]] = []
            for t in tasks:
                assert t.staged is not None
                os.replace(t.staged, os.path.join(self.folder, t.name))
                placed.append((t.name, t.records))
            for i in range(len(tasks), n):
                # A write of no tasks (a DataFrame of no partitions) leaves one empty file, as
                # Spark's file writes do; numShards' files of no records are named as the jar's.
                kind = "empty" if self.options.num_shards else "c000"
                name = f"part-{i:05d}-{self.write_id}-{kind}{self.extension}"
                with open(os.path.join(self.folder, name), "wb") as out:
                    RecordFileWriter(out, self.options.compression).close()
                placed.append((name, 0))
            counted = [t.counts for t in tasks if t.records > 0]
            counts = counted[0] if counted else manifest_write.NO_COUNTS
            for c in counted[1:]:
                counts = manifest_write.merge_counts(counts, c)
            written = manifest_write.Manifest(
                self.record_type,
                self.schema,
                (),
                manifest_write.entries(self.folder, placed, self.options.compression),
                counts,
            )
            manifest_write.commit_manifest(self.folder, written)
            with open(os.path.join(self.folder, "_SUCCESS"), "wb"):
                pass
        shutil.rmtree(self.staging, ignore_errors=True)

    def _empty_folder(self) -> None:
        """Mode overwrite: everything in the folder goes, but this write's staging folder and
        the lock it holds."""
        keep = {os.path.basename(self.staging), manifest_write.LOCK_NAME}
        for entry in os.scandir(self.folder):
            if entry.name in keep:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.remove(entry.path)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        # The messages are None for every task once one failed (Spark 4.0 and 4.3): the staging
        # folder holds all this write's files.
        shutil.rmtree(self.staging, ignore_errors=True)
        if self.created:
            with contextlib.suppress(OSError):  # only if empty: another write may begin there
                os.rmdir(self.folder)
