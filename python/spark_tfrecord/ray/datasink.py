"""A Ray Data ``Dataset`` written as the jar writes a DataFrame: :func:`write`."""

from __future__ import annotations

import copyreg
import itertools
import os
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa
import ray.data
from ray.data.datasource import Datasink, WriteResult

from spark_tfrecord import errors
from spark_tfrecord._format.columns.ddl import parse_ddl, to_ddl
from spark_tfrecord._format.columns.encoder import ExampleEncoder
from spark_tfrecord._format.datasets import manifest_write
from spark_tfrecord._format.datasets.commit import FolderWrite
from spark_tfrecord._format.frames.encode_errors import EncodeError
from spark_tfrecord._format.frames.record_writer import RecordFileWriter, compression
from spark_tfrecord._source.arrow_schema import arrow_schema
from spark_tfrecord.ray.spark_schema import known, merged, spark_schema

#: Rows per batch the encoder takes (at most; a task's small blocks are put together).
BATCH_ROWS = 4096
Mode = Literal["append", "overwrite"]
RecordType = Literal["Example", "SequenceExample", "ByteArray"]


@dataclass(frozen=True)
class TaskFile:
    """What a write task returns: its staged file (None: none), name, records, counts, schema."""

    staged: str | None
    name: str
    records: int
    counts: manifest_write.Counts
    #: The Spark schema (its JSON) the task wrote its rows as; None: it had no blocks.
    schema: dict[str, Any] | None


class TFRecordDatasink(Datasink[TaskFile]):
    """A Ray ``Datasink`` writing TFRecord files as the jar writes them; see :func:`write`."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        schema: str | Mapping[str, Any] | None = None,
        mode: Mode = "append",
        compression: str | None = None,
        num_shards: int | None = None,
        record_type: RecordType = "Example",
        path_separator: str = "/",
        vector_layout: Literal["dense", "sparse"] = "dense",
        storage_options: Mapping[str, Any] | None = None,
        min_rows_per_file: int | None = None,
    ) -> None:
        if mode not in ("append", "overwrite"):
            raise errors.invalid_option("mode", str(mode), ["append", "overwrite"])
        if num_shards is not None and num_shards < 1:
            raise errors.invalid_option("numShards", str(num_shards), ["a positive integer"])
        self.target = FolderWrite(
            os.fspath(path),
            dict(storage_options or {}) or None,
            write_id=str(uuid.uuid4()),
            compression=_codec(compression),
            num_shards=num_shards,
            overwrite=mode == "overwrite",
            shards_option="num_shards",
            repartition=f"ds.repartition({num_shards}) first.",
        )
        self.given_schema = schema
        self.schema: dict[str, Any] | None = None
        self.record_type = record_type
        self.path_separator = path_separator
        self.vector_layout = vector_layout
        self.min_rows_per_file = min_rows_per_file

    def get_name(self) -> str:
        return "TFRecord"

    @property
    def min_rows_per_write(self) -> int | None:
        return self.min_rows_per_file

    def _encoder(self, schema: Mapping[str, Any]) -> ExampleEncoder:
        return ExampleEncoder(
            schema,
            record_type=self.record_type,
            path_separator=self.path_separator,
            vector_layout=self.vector_layout,
        )

    # --- on the driver, before the tasks ----------------------------------------------------

    def on_write_start(self, schema: pa.Schema | None = None) -> None:
        # Ray's schema may be a fused map's input: without ``schema=``, each task takes its blocks'.
        if self.given_schema is not None:
            self.schema = _json(self.given_schema)
            self._encoder(self.schema)  # a schema or option the jar refuses fails here
        self.target.start()

    # --- in each task -------------------------------------------------------------------------

    def write(self, blocks: Iterable[Any], ctx: Any) -> TaskFile:
        index = int(ctx.task_idx)
        target = self.target
        name = target.name(index)
        tables = (_as_table(b) for b in blocks)
        first = next(tables, None)
        schema = self.schema
        if schema is None and first is not None:
            schema = spark_schema(first.schema)
        if schema is None:  # no blocks, no schema: nothing to write
            return TaskFile(None, name, 0, manifest_write.NO_COUNTS, None)
        encoder = self._encoder(known(schema))
        arrow = arrow_schema(encoder.schema)
        staged = target.staged_path(name, uuid.uuid4().hex)
        with target.folder.create(staged) as out:
            writer = RecordFileWriter(out, target.compression)
            every = tables if first is None else itertools.chain([first], tables)
            for batch in _batches(every, arrow):
                writer.write(encoder.encode(batch))
            writer.close()
        if writer.records == 0 and index != 0:
            # As Spark's: no rows, no file, but for the first task (a write leaves one file).
            target.folder.remove(staged)
            return TaskFile(None, name, 0, manifest_write.NO_COUNTS, schema)
        return TaskFile(staged, name, writer.records, encoder.value_counts(), schema)

    # --- on the driver, after the tasks -------------------------------------------------------

    def on_write_complete(self, write_result: WriteResult[TaskFile]) -> None:
        tasks = list(write_result.write_returns)
        schema = self._one_schema(tasks)
        self.target.commit(tasks, self._encoder(schema).record_type, schema)

    def _one_schema(self, tasks: list[TaskFile]) -> dict[str, Any]:
        """The one schema the tasks wrote; ValueError naming two that disagree."""
        if self.schema is not None:
            return self.schema
        schema: Any = None
        for t in tasks:
            if t.schema is None:
                continue
            both = t.schema if schema is None else merged(schema, t.schema)
            if both is None:
                self.target.discard()
                raise ValueError(
                    "The dataset's blocks have different schemas, which one folder cannot hold: "
                    f"{to_ddl(schema)} and {to_ddl(t.schema)}. Give the schema to write "
                    "(schema='id long, ...')."
                )
            schema = both
        if schema is None:
            return {"type": "struct", "fields": []}
        if known(schema, None) != schema:
            self.target.discard()
            raise ValueError(
                f"A column of the dataset holds only nulls, of no type ({to_ddl(schema)}): give "
                "the schema to write (schema='id long, ...')."
            )
        return dict(schema)

    def on_write_failed(self, error: Exception) -> None:
        self.target.discard()


def _encode_error(
    condition: str, reason: str, column: str | None, row: int | None, parameters: dict[str, str]
) -> EncodeError:
    """An EncodeError unpickled: see :func:`_reduce_encode_error`."""
    return EncodeError(condition, reason, column=column, row=row, parameters=parameters)


def _reduce_encode_error(e: EncodeError) -> tuple[Any, ...]:
    """Pickle an EncodeError by its condition and parameters (its ``args`` are only its message)."""
    rest = {k: v for k, v in e.parameters.items() if k not in ("column", "reason")}
    return _encode_error, (e.condition, e.reason, e.column, e.row, rest)


copyreg.pickle(EncodeError, _reduce_encode_error)


def _codec(value: str | None) -> str:
    return compression(value) if value is not None else "none"


def _json(schema: str | Mapping[str, Any]) -> dict[str, Any]:
    """A Spark schema given as DDL or its JSON, as its JSON."""
    if isinstance(schema, str):
        return dict(parse_ddl(schema))
    return dict(schema)


def _batches(blocks: Iterable[pa.Table], target: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Blocks as batches of :data:`BATCH_ROWS` rows, small ones joined: a batch costs per column."""
    held: list[pa.Table] = []
    rows = 0
    for block in blocks:
        table = _table(block, target)
        if table.num_rows == 0:
            continue
        held.append(table)
        rows += table.num_rows
        if rows >= BATCH_ROWS:
            yield from pa.concat_tables(held).combine_chunks().to_batches(BATCH_ROWS)
            held, rows = [], 0
    if held:
        yield from pa.concat_tables(held).combine_chunks().to_batches(BATCH_ROWS)


def _as_table(block: Any) -> pa.Table:
    """A Ray block as an Arrow table (a pandas block through Arrow)."""
    return block if isinstance(block, pa.Table) else pa.Table.from_pandas(block)


def _table(table: pa.Table, target: pa.Schema) -> pa.Table:
    """A block's table of the schema's Arrow types, its columns in the schema's order."""
    names = set(table.column_names)
    missing = [n for n in target.names if n not in names]
    if missing:
        raise ValueError(f"The dataset has no column {missing[0]!r}; it has {table.column_names}")
    # Only columns of another type: a cast to the same struct type refuses a null ML vector.
    columns = [
        c if c.type == f.type else c.cast(f.type)
        for c, f in zip(table.select(target.names).columns, target)
    ]
    return pa.table(columns, names=target.names)


def write(
    ds: ray.data.Dataset,
    path: str | os.PathLike[str],
    *,
    mode: Mode = "append",
    compression: str | None = None,
    num_shards: int | None = None,
    schema: str | Mapping[str, Any] | None = None,
    record_type: RecordType = "Example",
    path_separator: str = "/",
    vector_layout: Literal["dense", "sparse"] = "dense",
    storage_options: Mapping[str, Any] | None = None,
    min_rows_per_file: int | None = None,
    concurrency: int | None = None,
    ray_remote_args: Mapping[str, Any] | None = None,
) -> None:
    """Write the Ray dataset ``ds`` into the folder ``path`` as the jar writes a DataFrame.

    ``path``: local, ``file://``, or an fsspec URL with ``storage_options``. One file per write
    task (``ds.repartition(n)`` for n), plus the manifest and ``_SUCCESS``. ``schema``: the Spark
    schema to write (DDL or JSON), by default from the Arrow schema; columns taken by name.
    ``mode``: ``append`` or ``overwrite``; ``compression``: ``gzip``, ``deflate`` or None;
    ``num_shards``: at least this many files; ``min_rows_per_file``: Ray's; the rest: the jar's
    write options. A failed write leaves the folder as it was.

    >>> import tempfile, ray
    >>> import spark_tfrecord.ray
    >>> folder = tempfile.mkdtemp() + "/out"
    >>> spark_tfrecord.ray.write(ray.data.from_items([{"id": 1}, {"id": 2}]), folder)
    >>> from spark_tfrecord import dataset_info
    >>> info = dataset_info(folder)
    >>> info.num_records, info.source, info.schema
    (2, 'manifest', 'id BIGINT')
    """
    sink = TFRecordDatasink(
        path,
        schema=schema,
        mode=mode,
        compression=compression,
        num_shards=num_shards,
        record_type=record_type,
        path_separator=path_separator,
        vector_layout=vector_layout,
        storage_options=storage_options,
        min_rows_per_file=min_rows_per_file,
    )
    ds.write_datasink(sink, concurrency=concurrency, ray_remote_args=dict(ray_remote_args or {}))
