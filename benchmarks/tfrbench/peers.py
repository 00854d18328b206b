"""The optional peers: tfx-bsl's C++ decoder and Ray Data's ``read_tfrecords`` on our narrow
files, each in a child process run by the Python of their own environment (``--peers-python``;
``ci/bench --peers`` makes one): their dependencies clash with the Spark one's, and they stay
out of the wheel and the test environments. A peer whose package is not installed there is
left out of the page.

- **tfx-bsl**: ``ExamplesToRecordBatchDecoder`` with the narrow schema, on every narrow record,
  read into memory first (untimed), in batches of ``BATCH``, one thread: decoding only.
- **Ray Data**: ``ray.data.read_tfrecords`` of a subset of the narrow records (``RAY_RECORDS``
  in all, the first of each of the first two files, copied to two files of their own), with
  the narrow schema as ``tf_schema``, ``ray.init(num_cpus=2)``, every batch taken as Arrow. It
  parses in Python, about a thousand records a second per CPU, so the whole narrow data set
  would take an hour.

Both are checked against what our reader reads from the same records: the number of records
and the sums of ``id``, ``label``, ``f0`` and of the values (and their count) in ``ids``.

The child runs as ``python -m tfrbench.peers NAME PATH --repeat N`` with ``benchmarks/`` on
its path, and imports nothing of Spark.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import struct
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .child import MISSING, Missing, emit, run
from .data import NARROW_DDL, data_files
from .timing import timed

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

PEERS = {"tfx-bsl": "tfx_bsl", "ray": "ray"}
# Records per DecodeBatch call, as tf.data's batches.
BATCH = 1024
# Records Ray Data reads (fewer if the first narrow file has fewer), and its CPUs.
RAY_RECORDS = 20_000
RAY_CPUS = 2
QUIET = {"CUDA_VISIBLE_DEVICES": "-1", "TF_CPP_MIN_LOG_LEVEL": "3", "RAY_DEDUP_LOGS": "0"}


@dataclass
class Totals:
    """What a reader read: records, and sums over a few columns (``f0`` as doubles)."""

    records: int
    id_sum: int
    label_sum: int
    f0_sum: float
    ids_values: int
    ids_sum: int

    def matches(self, other: Totals) -> bool:
        exact = (self.records, self.id_sum, self.label_sum, self.ids_values, self.ids_sum)
        theirs = (other.records, other.id_sum, other.label_sum, other.ids_values, other.ids_sum)
        return exact == theirs and math.isclose(self.f0_sum, other.f0_sum, rel_tol=1e-9)


@dataclass
class PeerResult:
    """What a peer's child measured: its timed runs, what the last run read, and how."""

    runs: list[float]
    spent: dict[str, float]
    totals: dict[str, Any]
    version: str
    how: str

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def records(self) -> int:
        return int(self.totals["records"])


def totals_of(df: DataFrame) -> Totals:
    """The ``Totals`` of a narrow DataFrame, computed by Spark."""
    row = df.selectExpr(
        "count(*)",
        "coalesce(sum(id), 0)",
        "coalesce(sum(label), 0)",
        "coalesce(sum(CAST(f0 AS DOUBLE)), 0D)",
        "coalesce(sum(size(ids)), 0)",
        "coalesce(sum(aggregate(ids, 0L, (a, x) -> a + x)), 0)",
    ).collect()[0]
    return Totals(int(row[0]), int(row[1]), int(row[2]), float(row[3]), int(row[4]), int(row[5]))


def records_in(path: Path) -> Iterator[bytes]:
    """The records of a TFRecord file, framing and all (length, its CRC, data, its CRC)."""
    with path.open("rb") as f:
        while header := f.read(12):
            (length,) = struct.unpack("<Q", header[:8])
            yield header + f.read(length + 4)


def write_subset(narrow: Path, target: Path, records: int) -> int:
    """The first records of the first ``RAY_CPUS`` narrow files, ``records`` in all, framing
    copied byte for byte, as as many files under ``target`` (one read task per CPU); returns
    how many records were copied."""
    firsts = [f for f in data_files(narrow) if f.suffix == ".tfrecord"][:RAY_CPUS]
    target.mkdir(parents=True, exist_ok=True)
    copied = 0
    for i, first in enumerate(firsts):
        n = 0
        with (target / f"part-{i:05d}.tfrecord").open("wb") as out:
            for record in records_in(first):
                if n == records // len(firsts):
                    break
                out.write(record)
                n += 1
        copied += n
    return copied


def peer_in_child(python: str, name: str, path: Path, repeat: int) -> PeerResult | str:
    """Runs peer ``name`` on the TFRecord files under ``path`` with ``python``: its result, or
    why it was not measured."""
    cmd = [python, "-m", "tfrbench.peers", name, str(path), "--repeat", str(repeat)]
    env = {**os.environ, **QUIET, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    try:
        return PeerResult(**run(cmd, env))
    except Missing as e:
        return str(e)


def flat(column: Any) -> Any:
    """The values of an Arrow column, its lists (of any depth) flattened."""
    import pyarrow as pa
    import pyarrow.compute as pc

    while pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        column = pc.list_flatten(column)
    return column


def add_up(batches: Any) -> Totals:
    """The ``Totals`` of Arrow record batches (or tables) of narrow records."""
    import pyarrow.compute as pc

    sums = Totals(0, 0, 0, 0.0, 0, 0)

    def total(column: Any, kind: type) -> Any:
        value = pc.sum(flat(column), min_count=0).as_py()
        return kind(value or 0)

    for batch in batches:
        sums.records += batch.num_rows
        sums.id_sum += total(batch.column("id"), int)
        sums.label_sum += total(batch.column("label"), int)
        sums.f0_sum += total(flat(batch.column("f0")).cast("float64"), float)
        ids = flat(batch.column("ids"))
        sums.ids_values += len(ids)
        sums.ids_sum += total(ids, int)
    return sums


def tfx_schema() -> bytes:
    """The narrow schema as a serialized TensorFlow Metadata ``Schema``."""
    from tensorflow_metadata.proto.v0 import schema_pb2

    kinds = {"bigint": schema_pb2.INT, "float": schema_pb2.FLOAT, "string": schema_pb2.BYTES}
    schema = schema_pb2.Schema()
    for item in NARROW_DDL.split(", "):
        name, kind = item.split(" ", 1)
        element = kind.removeprefix("array<").removesuffix(">")
        schema.feature.add(name=name, type=kinds[element])
    return bytes(schema.SerializeToString())


def tfx_child(path: Path, repeat: int) -> PeerResult:
    """Every narrow record read into memory (untimed), then decoded by tfx-bsl in batches of
    ``BATCH`` on this thread; one untimed pass, then ``repeat`` timed ones."""
    import tfx_bsl
    from tfx_bsl.coders.example_coder import ExamplesToRecordBatchDecoder

    files = [f for f in data_files(path) if f.suffix == ".tfrecord"]
    examples = [record[12:-4] for f in files for record in records_in(f)]
    batches = [examples[i : i + BATCH] for i in range(0, len(examples), BATCH)]
    decoder = ExamplesToRecordBatchDecoder(tfx_schema())
    decoded: list[Any] = []

    def decode() -> None:
        decoded[:] = [decoder.DecodeBatch(batch) for batch in batches]

    decode()
    runs, spent = timed(None, repeat, decode)
    how = f"ExamplesToRecordBatchDecoder with the narrow schema, batches of {BATCH}, 1 thread"
    return PeerResult(runs, asdict(spent), asdict(add_up(decoded)), tfx_bsl.__version__, how)


def ray_child(path: Path, repeat: int) -> PeerResult:
    """``ray.data.read_tfrecords`` of the files under ``path`` on ``RAY_CPUS`` CPUs, every
    batch taken as Arrow; one untimed run, then ``repeat`` timed ones."""
    import ray

    ray.init(num_cpus=RAY_CPUS, include_dashboard=False, log_to_driver=False)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    from tensorflow_metadata.proto.v0 import schema_pb2

    files = [str(f) for f in data_files(path) if f.suffix == ".tfrecord"]
    # Without a schema Ray infers each record's types alone: a list of one value becomes a
    # scalar, and batches of both do not concatenate.
    schema = schema_pb2.Schema.FromString(tfx_schema())
    read: list[Totals] = []

    def consume() -> None:
        dataset = ray.data.read_tfrecords(files, tf_schema=schema)
        read[:] = [add_up(dataset.iter_batches(batch_format="pyarrow", batch_size=None))]

    consume()
    runs, spent = timed(None, repeat, consume)
    ray.shutdown()
    how = "ray.data.read_tfrecords with the narrow schema as tf_schema,"
    how += f" ray.init(num_cpus={RAY_CPUS})"
    return PeerResult(runs, asdict(spent), asdict(read[0]), ray.__version__, how)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tfrbench.peers")
    parser.add_argument("peer", choices=list(PEERS))
    parser.add_argument("path")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    try:
        __import__(PEERS[args.peer])
    except ImportError as e:
        print(f"{PEERS[args.peer]} is not installed in {sys.executable} ({e})")
        return MISSING
    child = tfx_child if args.peer == "tfx-bsl" else ray_child
    emit(child(Path(args.path), args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
