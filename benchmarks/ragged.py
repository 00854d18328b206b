"""What a list of lists costs to read: an ``array<array<long>>`` column written ragged (an
Example's ``x/ragged_flat_values`` and ``x/ragged_row_lengths_0``) against Parquet's read of the
same column.

    python benchmarks/ragged.py [--rows 1000000] [--repeat 5]

Each row holds 1 to 7 inner lists of 1 to 5 longs (about 12 values a row), beside an ``id``.
The DataFrame is written once as TFRecord (the installed package's jar) and once as Parquet;
each read selects ``x`` and writes it to Spark's ``noop`` sink, so that every value is decoded
into the row. Each measurement is the median of ``--repeat`` runs after a warm-up, TFRecord and
Parquet taking turns in each round; the table gives Parquet/TFRecord, the goal being 1 or more
(issue 32). Both reads must give the same rows.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tfrbench.child import emit
from tfrbench.data import ROOT
from tfrbench.timing import interleaved

DDL = "id long, x array<array<long>>"
# 1 to 7 inner lists of 1 to 5 values each, from the row's id.
LISTS = (
    "transform(sequence(0, cast(id % 7 as int)), i -> "
    "transform(sequence(0, cast((id + i) % 5 as int)), j -> id * 31 + i * 7 + j)) as x"
)


def main() -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/ragged.py", description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=str(ROOT / ".cache" / "bench-ragged"))
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    from pyspark.sql import SparkSession

    import spark_tfrecord

    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", "4g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
    )
    spark = spark_tfrecord.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    df = spark.range(args.rows).selectExpr("id", LISTS).coalesce(2)
    df.write.format("tfrecord").save(str(out / "tfrecord"))
    df.write.parquet(str(out / "parquet"))
    loaded = {
        "tfrecord": spark.read.format("tfrecord").schema(DDL).load(str(out / "tfrecord")),
        "parquet": spark.read.schema(DDL).parquet(str(out / "parquet")),
    }
    if loaded["tfrecord"].exceptAll(loaded["parquet"]).count() != 0:
        raise SystemExit("the TFRecord and the Parquet reads differ")

    def read(name: str) -> Callable[[], object]:
        chosen = loaded[name].select("x")
        return lambda: chosen.write.format("noop").mode("overwrite").save()

    runs, _ = interleaved(None, args.repeat, {n: read(n) for n in loaded}, warmup=2)
    medians = {name: statistics.median(seconds) for name, seconds in runs.items()}
    ratio = medians["parquet"] / medians["tfrecord"]
    print(
        f"\nSpark {spark.version}, local[2], {args.rows:,} rows; the two reads give the same rows"
    )
    print("| read of x array<array<long>> | TFRecord (s) | Parquet (s) | Parquet/TFRecord |")
    print("|---|---:|---:|---:|")
    print(f"| all values | {medians['tfrecord']:.3f} | {medians['parquet']:.3f} | {ratio:.2f} |")
    emit({"tfrecord": medians["tfrecord"], "parquet": medians["parquet"], "ratio": ratio})
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
