"""The tf.data reference: TensorFlow's own reader and parser on our narrow files, with two
threads, in a child process (a fresh Python without a Spark JVM)."""

from __future__ import annotations

import argparse
import os
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .child import emit, run, script
from .data import NARROW_DDL, data_files
from .timing import timed

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

# Records per batch, and the threads of every TensorFlow pool (as many as local[2] has cores).
BATCH = 1024
THREADS = 2
# No GPU, and less start-up chatter on stderr.
QUIET_TF = {"CUDA_VISIBLE_DEVICES": "-1", "TF_CPP_MIN_LOG_LEVEL": "3"}


@dataclass
class TFData:
    """What the child measured: its timed runs, and what the last run read."""

    runs: list[float]
    spent: dict[str, float]
    records: int
    id_sum: int
    values: int
    version: str

    @property
    def median(self) -> float:
        return statistics.median(self.runs)


def narrow_struct() -> StructType:
    """The narrow schema as a ``StructType`` without a JVM (pyspark parses DDL in the JVM), every
    field non-nullable: no value is ever missing, so ``feature_spec`` gives each scalar a
    ``FixedLenFeature``, TensorFlow's fastest (dense) way to parse it, and each array a
    ``RaggedFeature``."""
    from pyspark.sql.types import (
        ArrayType,
        DataType,
        FloatType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    types: dict[str, DataType] = {
        "bigint": LongType(),
        "float": FloatType(),
        "string": StringType(),
        "array<float>": ArrayType(FloatType()),
        "array<bigint>": ArrayType(LongType()),
    }
    pairs = (item.split(" ", 1) for item in NARROW_DDL.split(", "))
    return StructType([StructField(name, types[kind], nullable=False) for name, kind in pairs])


def tfdata_in_child(path: Path, args: argparse.Namespace) -> TFData:
    """Reads the TFRecord files under ``path`` with tf.data in a child process."""
    cmd = script("run", "--tfdata-child", str(path), "--repeat", str(args.repeat))
    return TFData(**run(cmd, env={**os.environ, **QUIET_TF}))


def flat(tensor: Any) -> Any:
    """The values of a dense, ragged or sparse tensor as one NumPy array."""
    if hasattr(tensor, "flat_values"):
        return tensor.flat_values.numpy()
    if hasattr(tensor, "indices"):
        return tensor.values.numpy()
    return tensor.numpy()


def tfdata_child(args: argparse.Namespace) -> None:
    """The child's side of ``tfdata_in_child``: ``TFRecordDataset`` (2 files at a time) ->
    ``batch`` -> ``parse_example`` (2 batches at a time), every tensor of every batch taken
    to NumPy; one untimed run, then ``--repeat`` timed ones. Emits its ``TFData``."""
    import tensorflow as tf

    from spark_tfrecord import feature_spec

    tf.get_logger().setLevel("ERROR")
    tf.config.threading.set_inter_op_parallelism_threads(THREADS)
    tf.config.threading.set_intra_op_parallelism_threads(THREADS)
    spec = feature_spec(narrow_struct())
    files = [str(f) for f in data_files(Path(args.tfdata_child)) if f.suffix == ".tfrecord"]
    options = tf.data.Options()
    options.threading.private_threadpool_size = THREADS
    dataset = (
        tf.data.TFRecordDataset(files, num_parallel_reads=THREADS)
        .batch(BATCH)
        .map(lambda records: tf.io.parse_example(records, spec), num_parallel_calls=THREADS)
        .with_options(options)
    )
    totals: dict[str, int] = {}

    def consume() -> None:
        records = id_sum = values = 0
        for batch in dataset:
            ids = batch["id"].numpy()
            records += len(ids)
            id_sum += int(ids.sum())
            values += sum(flat(tensor).size for tensor in batch.values())
        totals.update(records=records, id_sum=id_sum, values=values)

    consume()  # warm-up: tf.function tracing and the first file reads
    runs, spent = timed(None, args.repeat, consume)
    emit(TFData(runs, asdict(spent), version=tf.__version__, **totals))
