"""A read of TFRecord files as Arrow batches, without pyspark (the data source's, read_arrow's)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from spark_tfrecord import errors
from spark_tfrecord._format.columns.column_errors import ColumnError
from spark_tfrecord._format.columns.ddl import parse_ddl
from spark_tfrecord._format.columns.feature_paths import reject_maps
from spark_tfrecord._format.columns.record_values import exact_layout
from spark_tfrecord._format.columns.type_table import simple_string
from spark_tfrecord._format.datasets.inference import as_nullable, infer_schema
from spark_tfrecord._format.entries.decoder import MalformedRecord
from spark_tfrecord._format.entries.entries import gather
from spark_tfrecord._format.files import partitions
from spark_tfrecord._format.files.files import Files, file_system
from spark_tfrecord._format.frames.encode_errors import EncodeError
from spark_tfrecord._format.frames.packing import offsets
from spark_tfrecord._source import nodes
from spark_tfrecord._source.arrow_schema import arrow_schema
from spark_tfrecord._source.batch_arrays import BatchArrays
from spark_tfrecord._source.columns import ArrowColumns
from spark_tfrecord._source.options import ReadOptions
from spark_tfrecord._source.planning import (
    Slice,
    Task,
    data_files,
    fsspec_url,
    partition_values,
    plan,
)
from spark_tfrecord._source.slices import slice_batches

#: Records per Arrow batch a task yields.
BATCH_RECORDS = 4096
#: A batch of a slice's records: ``(buf, starts, stops, offsets)`` (see ``slice_batches``).
Chunk = tuple[bytes, list[int], list[int], list[int]]
#: Spark's JSON names of the types partition discovery gives (``partitions.column_type``).
_JSON_NAMES = {"int": "integer", "bigint": "long", "smallint": "short", "tinyint": "byte"}
#: The values' Arrow types of partition columns, by their Spark (simple) type (else strings).
_PARTITION_VALUES = {
    **dict.fromkeys(["int", "bigint", "smallint", "tinyint"], pa.int64()),
    "boolean": pa.bool_(),
    "date": pa.int32(),
    "timestamp": pa.int64(),
    "timestamp_ntz": pa.int64(),
    "double": pa.float64(),
    "float": pa.float64(),
    "void": pa.null(),
}


def read_files(options: Mapping[str, str], parsed: ReadOptions) -> tuple[Files, str]:
    """The read's file system and path (``options["path"]``; fsspec's for a URL)."""
    path = options.get("path")
    if not path:
        raise errors.ArgumentError(
            errors.INVALID_OPTION,
            "A TFRecord read needs a path: spark.read.format('tfrecord').load(path)",
            option="path",
            value="",
            valid="a file, a folder or a glob",
        )
    return file_system(fsspec_url(str(path)), parsed.storage_options or None)


def record_batches(
    path: str,
    columns: Sequence[str] | str | None,
    options: Mapping[str, str],
    storage_options: Mapping[str, Any] | None,
) -> pa.RecordBatchReader:
    """:func:`spark_tfrecord.read_arrow`'s reader: the schema (all nullable) checked now; lazy."""
    read = prepare(path, columns, options, storage_options, "read_arrow")
    return pa.RecordBatchReader.from_batches(read.target, read.read(read.in_order()))


def prepare(
    path: str,
    columns: Sequence[str] | str | None,
    options: Mapping[str, str],
    storage_options: Mapping[str, Any] | None,
    caller: str,
) -> ArrowRead:
    """The :class:`ArrowRead` of ``read_arrow``'s arguments (``caller`` named in errors)."""
    if any(k.lower() in ("path", "storageoptions") for k in options):
        raise ValueError(
            f"{caller} takes the path as its first argument and fsspec's options as "
            f"storage_options=, not in options: {sorted(options)}"
        )
    parsed = ReadOptions.parse(options)
    fs, where = file_system(fsspec_url(path), dict(storage_options or {}) or None)
    if isinstance(columns, str):
        schema = parse_ddl(columns)
    else:
        schema = table_schema(parsed, fs, where)
        if columns is not None:
            schema = _projection(schema, list(columns))
    # what Spark makes of a file source's schema, inferred or given (DataType.asNullable)
    return ArrowRead(as_nullable(schema), parsed, fs, where)


def _projection(schema: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """The fields of ``schema`` named ``names``, in that order; ValueError for an unknown name."""
    by_name = {f["name"]: f for f in schema["fields"]}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"No column {', '.join(map(repr, unknown))}; the columns: {list(by_name)}")
    if len(set(names)) != len(names):
        raise ValueError(f"A column is named twice in {names}")
    return {"type": "struct", "fields": [by_name[n] for n in names]}


def table_schema(options: ReadOptions, fs: Files, path: str) -> dict[str, Any]:
    """The jar's inferred schema of ``path``'s files, then the partition columns (as JSON)."""
    paths = [f.path for f in data_files(path, fs)]
    found = partitions.discover(path, paths)
    fields = list(infer_schema(paths, options.inference, files=fs)["fields"])
    for name, (t, _) in partition_values(found, {}).items():
        fields.append(
            {"name": name, "type": _JSON_NAMES.get(t, t), "nullable": True, "metadata": {}}
        )
    return {"type": "struct", "fields": fields}


class ArrowRead:
    """One read of ``path``'s files into Spark schema ``schema`` (JSON), decoding only its columns.
    Picklable: planned on the driver, read in workers. ``to_arrow`` gives the batches' Arrow schema.
    Raises the jar's ArgumentError here for a schema the records cannot fill.
    """

    def __init__(
        self,
        schema: Mapping[str, Any],
        options: ReadOptions,
        fs: Files,
        path: str,
        to_arrow: Callable[[dict[str, Any]], pa.Schema] = arrow_schema,
    ) -> None:
        self.schema = dict(schema)
        self.names = [str(f["name"]) for f in self.schema["fields"]]
        self.parsed = options
        self.fs, self.path = fs, path
        record_type = options.inference.record_type
        if record_type != "ByteArray":  # the jar's refusal of a map, variant or interval column
            try:
                reject_maps(self.schema, record_type)
            except EncodeError as e:
                rest = {k: v for k, v in e.parameters.items() if k != "reason"}
                raise errors.ArgumentError(e.condition, e.reason, **rest) from None
        self.target = to_arrow(self.schema)
        self.files = data_files(path, fs)
        found = partitions.discover(path, [f.path for f in self.files])
        given = {f["name"]: simple_string(f["type"]) for f in self.schema["fields"]}
        self.partitions_of = {n: v for n, v in partition_values(found, given).items() if n in given}
        self.columns()

    def columns(self) -> tuple[Any, ArrowColumns, list[int], BatchArrays | None]:
        """The layout (None: ByteArray), builders, schema positions, fast path (None: records)."""
        record_type = self.parsed.inference.record_type
        skip = set(self.partitions_of)
        if self.parsed.mode == "PERMISSIVE":
            skip.add(self.parsed.corrupt_column)
        fields = self.schema["fields"]
        data = [i for i, f in enumerate(fields) if f["name"] not in skip]
        if record_type == "ByteArray":
            # The jar's check (TFRecordSchema.validate), the corrupt record column included.
            given = [f for f in fields if f["name"] not in self.partitions_of]
            if any(f["name"] != "byteArray" or f["type"] != "binary" for f in given):
                shown = simple_string({"type": "struct", "fields": given})
                raise errors.ArgumentError(
                    errors.INVALID_SCHEMA,
                    "recordType ByteArray reads exactly one binary column (named 'byteArray' "
                    f"on read), but the schema is {shown}.",
                    schema=shown,
                )
            return None, ArrowColumns([]), data, None
        kept = [fields[i] for i in data]
        separator = self.parsed.inference.path_separator
        try:
            found = exact_layout(
                {"type": "struct", "fields": kept},
                separator,
                "SequenceExample" if record_type == "SequenceExample" else "Example",
            )
        except errors.ArgumentError:  # the jar's, as it is (an encoded tensor's dtype)
            raise
        except ValueError as e:  # a type no feature holds
            raise errors.ArgumentError(errors.UNSUPPORTED_TYPE, str(e)) from None
        targets = [self.target.field(i) for i in data]
        made = nodes.walk(kept, targets, found.columns, separator)
        return found, ArrowColumns(made), data, BatchArrays.of(found, made)

    def tasks(self, parallelism: int) -> list[Task]:
        """The tasks reading the files, as Spark plans the jar's for ``parallelism`` cores."""
        return plan(
            self.files,
            compression=self.parsed.inference.compression,
            split_files=self.parsed.split_files,
            parallelism=parallelism,
        )

    def in_order(self) -> Task:
        """One task reading every file whole: files by path, records in file order."""
        return Task([Slice(f.path, 0, f.size, f.size, i) for i, f in enumerate(self.files)])

    def read(self, task: Task, batch: int | None = None) -> Iterator[pa.RecordBatch]:
        """The batches of the task's slices, in order, of ``batch`` (:data:`BATCH_RECORDS`)
        records at most."""
        found, columns, data, fast = self.columns()
        for s in task.slices:
            for chunk in self.chunks(s, batch):
                buf, starts, stops, _ = chunk
                made = None
                if found is None:  # ByteArray: the records as they are
                    made = [_records(buf, starts, stops)] * len(data)
                elif fast is not None:
                    made = fast.arrays(buf, np.array(starts, np.int64), np.array(stops, np.int64))
                if made is None:
                    yield from self._decoded(chunk, s, found, columns, data)
                else:
                    yield self._batch(made, len(starts), [], s.file, data)

    def _decoded(
        self, chunk: Chunk, s: Slice, found: Any, columns: ArrowColumns, data: list[int]
    ) -> Iterator[pa.RecordBatch]:
        """The record path: each record decoded alone, a bad one handled as ``mode`` says."""
        options = self.parsed
        what = f"tf.train.{options.inference.record_type}"  # (Example or SequenceExample)
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
            yield self._batch(columns.arrays(records), len(records), bad, s.file, data)

    def chunks(self, s: Slice, batch: int | None = None) -> Iterator[Chunk]:
        """The slice's records in batches; ``ignoreMissingFiles``/``ignoreCorruptFiles`` as Spark's.
        Damaged framing is raised after the batch before it, so a FAILFAST record there wins.
        """
        options = self.parsed.inference
        try:
            yield from slice_batches(s, options, self.fs, batch or BATCH_RECORDS)
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
        data: list[int],
    ) -> pa.RecordBatch:
        """The batch of ``rows`` rows of file ``file``: ``arrays``, partitions, corrupt ``bad``."""
        names, target = self.names, self.target
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
        return errors.CorruptFileError(
            errors.MALFORMED_RECORD,
            f"Malformed {what}: " + e.reason + (f" (feature {e.key!r})" if e.key else ""),
            path,
            offset,
        )
    return errors.CorruptFileError(errors.DATA_MISMATCH, str(e), path, offset, e.column)


def _records(buf: bytes, starts: Sequence[int], stops: Sequence[int]) -> pa.Array:
    """The records ``buf[starts[i]:stops[i]]`` as one binary array (one by one past 2 GiB)."""
    first, last = np.array(starts, np.int64), np.array(stops, np.int64)
    lengths = last - first
    if int(lengths.sum()) >= 2**31:
        return pa.array([buf[a:b] for a, b in zip(starts, stops)], pa.binary())
    bounds = pa.py_buffer(offsets(lengths, np.int32))
    data = gather(buf, first, last)
    return pa.Array.from_buffers(pa.binary(), len(lengths), [None, bounds, pa.py_buffer(data)])
