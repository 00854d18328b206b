"""The ``tfrecord`` Python data source: ``spark.read.format("tfrecord")`` (and ``df.write``,
:mod:`spark_tfrecord._source.writer`) with no jar.

:class:`TFRecordDataSource` infers the schema on the driver as the jar does
(:func:`spark_tfrecord._format.inference.infer_schema`, partition columns after), and
:class:`TFRecordReader` plans tasks (:mod:`spark_tfrecord._source.planning`) and reads each
in a Python worker, yielding ``pyarrow.RecordBatch`` es of exactly the schema's Arrow types. The
API gives no projection: a schema given with ``.schema(...)`` is the projection, and only its
columns are decoded.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceWriter, InputPartition
from pyspark.sql.types import BinaryType, StructType

from spark_tfrecord import errors
from spark_tfrecord._format.decoder import MalformedRecord
from spark_tfrecord._format.encode_errors import EncodeError
from spark_tfrecord._format.feature_paths import reject_maps
from spark_tfrecord._format.files import Files, file_system
from spark_tfrecord._format.inference import infer_schema
from spark_tfrecord._format.layout import ColumnError
from spark_tfrecord._source.batch_arrays import BatchArrays
from spark_tfrecord._source.columns import ArrowColumns, exact_layout
from spark_tfrecord._source.options import ReadOptions
from spark_tfrecord._source.planning import (
    Slice,
    Task,
    data_files,
    fsspec_url,
    partition_folders,
    partition_values,
    plan,
)
from spark_tfrecord._source.slices import slice_batches

#: Records per Arrow batch a task yields.
BATCH_RECORDS = 4096
#: A batch of a slice's records: ``(buf, starts, stops, offsets)``, record i being
#: ``buf[starts[i]:stops[i]]`` at ``offsets[i]`` in the file's stream.
Chunk = tuple[bytes, list[int], list[int], list[int]]
#: Spark's JSON names of the types partition discovery gives (``partitions.column_type``).
_JSON_NAMES = {"int": "integer", "bigint": "long", "smallint": "short", "tinyint": "byte"}
#: The values' Arrow types of partition columns, by their Spark (simple) type.
_PARTITION_VALUES = {
    "int": pa.int64(),
    "bigint": pa.int64(),
    "smallint": pa.int64(),
    "tinyint": pa.int64(),
    "boolean": pa.bool_(),
    "date": pa.int32(),
    "timestamp": pa.int64(),
    "timestamp_ntz": pa.int64(),
    "double": pa.float64(),
    "float": pa.float64(),
    "string": pa.string(),
    "void": pa.null(),
}


def _files(options: Mapping[str, str], parsed: ReadOptions) -> tuple[Files, str]:
    """The read's file system and path (fsspec's for a URL, with ``storageOptions``)."""
    url = fsspec_url(_path(options))
    return file_system(url, parsed.storage_options or None)


def _path(options: Mapping[str, str]) -> str:
    path = options.get("path")
    if not path:
        raise errors.ArgumentError(
            errors.INVALID_OPTION,
            "A TFRecord read needs a path: spark.read.format('tfrecord').load(path)",
            option="path",
            value="",
            valid="a file, a folder or a glob",
        )
    return str(path)


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark checks a Python data source's batches against (its worker's
    ``to_arrow_schema``: timestamps in UTC; the keyword differs between Spark 4.0 and 4.2+)."""
    from pyspark.sql.pandas import types

    convert: Any = types.to_arrow_schema  # Spark 3.5's (for mypy) has neither keyword
    if "timezone" in inspect.signature(convert).parameters:
        return convert(schema, timezone="UTC")
    return convert(schema)


class TFRecordDataSource(DataSource):
    """``spark.read.format("tfrecord")`` where no jar can go (issue 43): the jar's options,
    inference, rows and errors, in a Spark 4 Python data source."""

    @classmethod
    def name(cls) -> str:
        return "tfrecord"

    def schema(self) -> StructType:
        """The jar's inferred schema of the files, then the partition columns."""
        options = ReadOptions.parse(self.options)
        fs, path = _files(self.options, options)
        files = data_files(path, fs)
        found = partition_folders(path, files)
        inferred = infer_schema([f.path for f in files], options.inference, files=fs)
        fields = list(inferred["fields"])
        for name, (t, _) in partition_values(found, {}).items():
            fields.append(
                {"name": name, "type": _JSON_NAMES.get(t, t), "nullable": True, "metadata": {}}
            )
        return StructType.fromJson({"type": "struct", "fields": fields})

    def reader(self, schema: StructType) -> TFRecordReader:
        return TFRecordReader(dict(self.options), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        """``df.write.format("tfrecord").mode("append" | "overwrite")``: see
        :mod:`spark_tfrecord._source.writer`."""
        from spark_tfrecord._source.writer import TFRecordWriter

        return TFRecordWriter(dict(self.options), schema, overwrite)


class _TaskPartition(InputPartition):
    """One task's slices (pickled to the worker that reads them)."""

    def __init__(self, task: Task) -> None:
        super().__init__(task)
        self.task = task


class TFRecordReader(DataSourceReader):
    """Plans the tasks on the driver and reads each in a Python worker."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        self.options = dict(options)
        self.parsed = ReadOptions.parse(self.options)
        self.fs, self.path = _files(self.options, self.parsed)
        self.schema = schema
        self.files = data_files(self.path, self.fs)
        found = partition_folders(self.path, self.files)
        given = {f.name: f.dataType.simpleString() for f in schema.fields}
        names = list(found[0]) if found else []
        self.partitions_of = {
            n: v for n, v in partition_values(found, given).items() if n in given and n in names
        }
        # decided here, on the driver, so that a bad schema fails the query before any task
        self._columns()

    def _columns(self) -> tuple[Any, ArrowColumns, pa.Schema, list[int], BatchArrays | None]:
        """The layout of the data columns, their Arrow builders, the Arrow schema, the
        positions of the data columns in the schema, and the fast path's builders (None where
        every batch takes the record path)."""
        record_type = self.parsed.inference.record_type
        if record_type != "ByteArray":  # a map, variant or interval: the jar's refusal
            try:
                reject_maps(self.schema.jsonValue(), record_type)
            except EncodeError as e:
                rest = {k: v for k, v in e.parameters.items() if k != "reason"}
                raise errors.ArgumentError(e.condition, e.reason, **rest) from None
        target = arrow_schema(self.schema)
        skip = set(self.partitions_of)
        if self.parsed.mode == "PERMISSIVE":
            skip.add(self.parsed.corrupt_column)
        data = [i for i, f in enumerate(self.schema.fields) if f.name not in skip]
        if record_type == "ByteArray":
            # The jar's check (TFRecordSchema.validate): every column but the partitions' is
            # `byteArray binary`, a PERMISSIVE read's corrupt record column too.
            given = [f for f in self.schema.fields if f.name not in self.partitions_of]
            if any(f.name != "byteArray" or f.dataType != BinaryType() for f in given):
                shown = StructType(given).simpleString()
                raise errors.ArgumentError(
                    errors.INVALID_SCHEMA,
                    "recordType ByteArray reads exactly one binary column (named 'byteArray' "
                    f"on read), but the schema is {shown}.",
                    schema=shown,
                )
            return None, ArrowColumns([], [], "/"), target, data, None
        json = self.schema.jsonValue()
        fields = [json["fields"][i] for i in data]
        separator = self.parsed.inference.path_separator
        try:
            found = exact_layout(
                {"type": "struct", "fields": fields},
                separator,
                "SequenceExample" if record_type == "SequenceExample" else "Example",
            )
        except ValueError as e:  # a type no feature holds
            raise errors.ArgumentError(errors.UNSUPPORTED_TYPE, str(e)) from None
        targets = [target.field(i) for i in data]
        columns = ArrowColumns(fields, targets, separator)
        return found, columns, target, data, BatchArrays.of(found, fields, targets)

    def partitions(self) -> Sequence[InputPartition]:
        tasks = plan(
            self.files,
            compression=self.parsed.inference.compression,
            split_files=self.parsed.split_files,
            parallelism=os.cpu_count() or 1,
        )
        # no files (a glob matching none, with a schema given): one task that reads nothing
        return [_TaskPartition(t) for t in tasks] or [_TaskPartition(Task())]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _TaskPartition)
        found, columns, target, data, fast = self._columns()
        for s in partition.task.slices:
            for chunk in self._chunks(s):
                buf, starts, stops, _ = chunk
                if found is None:  # ByteArray: the records as they are
                    records = [buf[a:b] for a, b in zip(starts, stops)]
                    arrays = [pa.array(records, pa.binary()) for _ in data]
                    yield self._batch(arrays, len(records), [], s.file, target, data)
                    continue
                made = None
                if fast is not None:
                    made = fast.arrays(buf, np.array(starts, np.int64), np.array(stops, np.int64))
                if made is not None:
                    yield self._batch(made, len(starts), [], s.file, target, data)
                else:
                    yield from self._decoded(chunk, s, found, columns, target, data)

    def _decoded(
        self,
        chunk: Chunk,
        s: Slice,
        found: Any,
        columns: ArrowColumns,
        target: pa.Schema,
        data: list[int],
    ) -> Iterator[pa.RecordBatch]:
        """The record path: each record decoded alone, a record that fails the schema failing
        the read (FAILFAST, with the jar's file, offset and column), dropped (DROPMALFORMED)
        or a row of nulls with its bytes in the corrupt record column (PERMISSIVE)."""
        options = self.parsed
        what = (
            "tf.train.SequenceExample"
            if options.inference.record_type == "SequenceExample"
            else "tf.train.Example"
        )
        records: list[Any] = []
        bad: list[bytes | None] = []
        buf, starts, stops, offsets = chunk
        for offset, a, b in zip(offsets, starts, stops):
            record = buf[a:b]
            try:
                records.append(found.record(record))
                bad.append(None)
            except (MalformedRecord, ColumnError) as e:
                if options.mode == "FAILFAST":
                    raise _failure(e, what, s.path, offset) from None
                if options.mode == "PERMISSIVE":
                    records.append(None)
                    bad.append(record)
        if records:
            arrays = columns.arrays(records)
            yield self._batch(arrays, len(records), bad, s.file, target, data)

    def _chunks(self, s: Slice) -> Iterator[Chunk]:
        """The slice's records in batches of :data:`BATCH_RECORDS` (``slice_batches``'); with
        ``ignoreMissingFiles`` none of a file gone since planning, with ``ignoreCorruptFiles``
        none after damaged framing (the records before it are kept), as Spark's file scan
        skips them for the jar. Damaged framing is raised after the batch of the records before
        it, so that a record there that fails the schema (FAILFAST) is the error, as when
        records are read one by one."""
        options = self.parsed.inference
        try:
            yield from slice_batches(s, options, self.fs, BATCH_RECORDS)
        except FileNotFoundError:
            if not options.ignore_missing_files:
                raise
        except errors.CorruptFileError:
            if not options.ignore_corrupt_files:
                raise

    def _batch(
        self,
        arrays: Sequence[pa.Array],
        rows: int,
        bad: list[bytes | None],
        file: int,
        target: pa.Schema,
        data: list[int],
    ) -> pa.RecordBatch:
        """The Arrow batch of ``rows`` rows of file ``file``: the data columns ``arrays`` (in
        their values' types), the partition columns, and the corrupt records' bytes ``bad``
        (PERMISSIVE; empty: none)."""
        names = self.schema.fieldNames()
        columns: list[pa.Array | None] = [None] * len(names)
        for i, a in zip(data, arrays):
            columns[i] = a if a.type == target.field(i).type else a.cast(target.field(i).type)
        for name, (t, values) in self.partitions_of.items():
            i = names.index(name)
            held = _PARTITION_VALUES.get(t, pa.string())
            value = pa.array([values[file]], held).cast(target.field(i).type)
            columns[i] = pa.repeat(value[0], rows) if rows else value[:0]
        corrupt = self.parsed.corrupt_column
        if self.parsed.mode == "PERMISSIVE" and corrupt in names:
            i = names.index(corrupt)
            if not any(b is not None for b in bad):
                columns[i] = pa.nulls(rows, target.field(i).type)
            else:
                text = target.field(i).type == pa.string()
                kept = [
                    None if b is None else (b.decode("utf-8", "replace") if text else b)
                    for b in bad
                ]
                columns[i] = pa.array(kept, target.field(i).type)
        return pa.RecordBatch.from_arrays(columns, schema=target)


def _failure(
    e: MalformedRecord | ColumnError, what: str, path: str, offset: int
) -> errors.CorruptFileError:
    """The jar's error for a record that does not decode or fit the schema (FAILFAST)."""
    if isinstance(e, MalformedRecord):
        column = e.key
        return errors.CorruptFileError(
            errors.MALFORMED_RECORD,
            f"Malformed {what}: " + e.reason + (f" (feature {column!r})" if column else ""),
            path,
            offset,
        )
    return errors.CorruptFileError(errors.DATA_MISMATCH, str(e), path, offset, e.column)
