"""``format("tfrecord_held")``: the jar-less source's reader, but that each Python worker keeps
the Arrow batches it decoded and yields them again on the next read of the same task. Timed
after a first read, it measures Spark's hand-over of the same batches alone (the Python
worker's Arrow stream, the JVM's rows): the bound of the jar-less route's speed that no reader
can pass (benchmarks/no_jar.py)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from spark_tfrecord._source.reader import TFRecordReader

#: The batches of each task read by this worker, by the path and the task's slices.
_HELD: dict[Any, list[pa.RecordBatch]] = {}


class HeldSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "tfrecord_held"

    def reader(self, schema: StructType) -> DataSourceReader:
        return _HeldReader(dict(self.options), schema)


class _HeldReader(DataSourceReader):
    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.inner = TFRecordReader(options, schema)
        self.path = options["path"]

    def partitions(self) -> Sequence[InputPartition]:
        return self.inner.partitions()

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        key = (self.path, repr(partition.value))
        if key not in _HELD:
            _HELD[key] = list(self.inner.read(partition))
        return iter(_HELD[key])
