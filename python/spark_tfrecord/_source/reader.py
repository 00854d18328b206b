"""The ``tfrecord`` Python data source's reads: a thin layer over ``arrow_read``.
The API gives no projection: a schema given with ``.schema(...)`` is it (only its columns decode).
"""

from __future__ import annotations

import decimal
import inspect
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceWriter, InputPartition
from pyspark.sql.types import DataType, StructType

from spark_tfrecord import errors
from spark_tfrecord._source.arrow_read import ArrowRead, read_files, table_schema
from spark_tfrecord._source.options import ReadOptions
from spark_tfrecord._source.planning import Task


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark checks a Python data source's batches against (timestamps in UTC)."""
    from pyspark.sql.pandas import types

    convert: Any = types.to_arrow_schema  # Spark 3.5's (for mypy) has neither keyword
    if "timezone" in inspect.signature(convert).parameters:
        return convert(schema, timezone="UTC")
    return convert(schema)


class TFRecordDataSource(DataSource):
    """``spark.read.format("tfrecord")`` with no jar (issue 43): the jar's options, rows, errors."""

    @classmethod
    def name(cls) -> str:
        return "tfrecord"

    def schema(self) -> StructType:
        """The jar's inferred schema of the files, then the partition columns."""
        options = ReadOptions.parse(self.options)
        fs, path = read_files(self.options, options)
        return StructType.fromJson(table_schema(options, fs, path))

    def reader(self, schema: StructType) -> TFRecordReader:
        return TFRecordReader(dict(self.options), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        """``df.write.format("tfrecord").mode("append" | "overwrite")``."""
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
        parsed = ReadOptions.parse(options)
        fs, path = read_files(options, parsed)
        # made here, on the driver, so that a bad schema fails the query before any task
        for f in schema.fields:
            if not _handed_over(f.dataType):
                raise _negative_scale(f.name, f.dataType)
        self.read_plan = ArrowRead(
            schema.jsonValue(), parsed, fs, path, lambda _: arrow_schema(schema)
        )

    def partitions(self) -> Sequence[InputPartition]:
        tasks = self.read_plan.tasks(os.cpu_count() or 1)
        # no files (a glob matching none, with a schema given): one task that reads nothing
        return [_TaskPartition(t) for t in tasks] or [_TaskPartition(Task())]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _TaskPartition)
        return self.read_plan.read(partition.task)


def _handed_over(t: DataType) -> bool:
    """Whether this PySpark's Python workers hand a data source's column of type ``t`` to Spark:
    its converter made as theirs is, before the first batch. From PySpark 4.1 (SPARK-53938) a
    decimal's rescales with ``Decimal(f"1E-{scale}")``, which fails at a negative scale."""
    try:
        from pyspark.sql.conversion import (  # type: ignore[import-not-found, unused-ignore]
            LocalDataToArrowConversion,
        )

        LocalDataToArrowConversion._create_converter(t)
    except decimal.InvalidOperation:
        return False
    except Exception:  # another PySpark's converters: the read tells
        return True
    return True


def _negative_scale(column: str, t: DataType) -> errors.ArgumentError:
    return errors.ArgumentError(
        errors.UNSUPPORTED_TYPE,
        f"Column '{column}' has type {t.simpleString()}, of a negative scale, which this "
        "PySpark's Python data sources cannot hand to Spark (its workers fail on it, "
        "SPARK-53938): read it with the jar, or as a decimal of scale 0",
        column=column,
    )
