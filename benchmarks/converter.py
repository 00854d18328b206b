"""make_converter against Petastorm's make_spark_converter, on the same DataFrame, in one run.

    python benchmarks/converter.py [--rows 200000] [--size 32] [--batch 256] [--rounds 5]

Needs a Python with pyspark, TensorFlow and ``petastorm`` (an optional peer, never a dependency
of spark-tfrecord: install it into an environment of your own). For each converter, in one local
Spark session (``local[2]``), on a DataFrame of ``--rows`` records (an id, ``--size`` floats, a
double label):

- ``first call``: the converter made from the DataFrame (the write);
- ``first batch``: from asking for the ``tf.data`` dataset to its first batch (the median of
  the epochs below);
- ``records/s``: the median of ``--rounds`` epochs of batches of ``--batch`` into a loop that
  touches each batch (every record checked to be there once), each epoch from a dataset made
  anew, the two converters' epochs taking turns (ours first in odd rounds, Petastorm's first in
  even ones), after both converters are made: one epoch right after a write measured the JVM's
  work after the write as much as the reader (162k records/s there against 340k to 380k for the
  same dataset's next epochs, 2026-11-29);
- ``second call``: the converter made again from an equal DataFrame built separately.

Petastorm: ``make_tf_dataset(batch_size=B, num_epochs=1)`` (its reader's defaults: 4 worker
threads), as its docs show. spark-tfrecord: ``converter.tf_dataset(batch_size=B)``. One run:
the figures and their ratios are of this machine, at this moment; every epoch's records/s is
printed with them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

#: Issue 45's goal: ours at least this many times Petastorm's records/s into tf.data.
GOAL = 1.2


def frame(spark: Any, rows: int, size: int) -> Any:
    values = ", ".join(f"cast(id % {k + 7} as float) / {k + 1}" for k in range(size))
    return spark.range(0, rows, 1, 4).selectExpr(
        "id", f"array({values}) AS x", "cast(id % 2 as double) AS label"
    )


def epoch(batches: Any, ids_of: Callable[[Any], Any]) -> tuple[float, float, int]:
    """(seconds to the first batch, records/s after it, records) of one pass."""
    started = time.perf_counter()
    seen = 0
    first = None
    for batch in batches:
        if first is None:
            first = time.perf_counter() - started
            after_first = time.perf_counter()
        seen += int(ids_of(batch).shape[0])
    assert first is not None
    rest = time.perf_counter() - after_first
    return first, seen / rest if rest > 0 else float("inf"), seen


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def main() -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/converter.py", description=__doc__)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from petastorm.spark import SparkDatasetConverter, make_spark_converter
    from pyspark.sql import SparkSession

    import spark_tfrecord

    spark = spark_tfrecord.configure(
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "2g")
    ).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    work = Path(tempfile.mkdtemp(prefix="converter-bench-"))
    spark.conf.set(SparkDatasetConverter.PARENT_CACHE_DIR_URL_CONF, (work / "petastorm").as_uri())
    results: dict[str, dict[str, float]] = {}
    try:
        # Warm-up, not timed: the JVM's first jobs, a write of each format, TensorFlow's import.
        small = frame(spark, 1000, args.size)
        spark_tfrecord.write(small, str(work / "warm-tfrecord"))
        small.write.parquet(str(work / "warm-parquet"))
        import tensorflow  # noqa: F401

        first, conv = timed(lambda: spark_tfrecord.make_converter(
            frame(spark, args.rows, args.size), str(work / "tfrecord")))  # fmt: skip
        again, _ = timed(lambda: spark_tfrecord.make_converter(
            frame(spark, args.rows, args.size), str(work / "tfrecord")))  # fmt: skip
        pfirst, pconv = timed(lambda: make_spark_converter(frame(spark, args.rows, args.size)))
        pagain, _ = timed(lambda: make_spark_converter(frame(spark, args.rows, args.size)))

        def ours_epoch() -> tuple[float, float, int]:
            return epoch(conv.tf_dataset(batch_size=args.batch), lambda b: b["id"])

        def petastorm_epoch() -> tuple[float, float, int]:
            with pconv.make_tf_dataset(batch_size=args.batch, num_epochs=1) as ds:
                return epoch(ds, lambda b: b.id)

        runs: dict[str, list[tuple[float, float, int]]] = {"ours": [], "petastorm": []}
        for round_ in range(args.rounds):
            order = ["ours", "petastorm"] if round_ % 2 == 0 else ["petastorm", "ours"]
            for who in order:
                result = ours_epoch() if who == "ours" else petastorm_epoch()
                assert result[2] == args.rows, (who, result)
                runs[who].append(result)
        for who, made, remade in (("ours", first, again), ("petastorm", pfirst, pagain)):
            results["spark-tfrecord" if who == "ours" else who] = {
                "first call s": made,
                "first batch s": statistics.median(r[0] for r in runs[who]),
                "records/s": statistics.median(r[1] for r in runs[who]),
                "second call s": remade,
            }
            rates = ", ".join(f"{r[1]:,.0f}" for r in runs[who])
            print(f"{who}: records/s of each epoch: {rates}")
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)

    ours, theirs = results["spark-tfrecord"], results["petastorm"]
    print(f"{args.rows} records of {args.size} floats, batches of {args.batch}")
    print(f"{'':16}{'spark-tfrecord':>16}{'petastorm':>12}{'ratio':>8}")
    for key in ours:
        ratio = theirs[key] / ours[key] if key.split()[-1] == "s" else ours[key] / theirs[key]
        print(f"{key:16}{ours[key]:16.3f}{theirs[key]:12.3f}{ratio:7.2f}x")
    print("ratio: how many times better spark-tfrecord is (time: petastorm's / ours; rate: ours /")
    print("petastorm's)")
    rate = ours["records/s"] / theirs["records/s"]
    met = "met" if rate >= GOAL else "NOT met"
    print(f"records/s, ours / petastorm: {rate:.2f}x (goal >= {GOAL:g}x: {met})")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
