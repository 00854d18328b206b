"""``spark_tfrecord.statistics`` against TensorFlow Data Validation's
``generate_statistics_from_tfrecord`` (Apache Beam's DirectRunner, as TFDV runs by default) and
against our own read of the same files, in one run (issue 59).

    .cache/venv/spark-4/bin/python benchmarks/tfdv_stats.py [--data DIR] [--rows N]
        [--tfdv-python PATH] [--tfdv-rows N] [--repeat K] [--warmup W]

Spark (``local[2]``, the jar) writes ``run.py``'s narrow rows (``NARROW_DDL``: two integers,
four floats, a list of floats, a list of integers, a string; ``--rows`` rows) once under
``--data``, in ``--files`` files, and a slice of the first ``--tfdv-rows`` rows in one folder
of its own (a later run with the same sizes reuses them). Then, on ``local[2]``, ``--warmup``
untimed rounds and ``--repeat`` timed ones of, in turn: ``count`` (``read(...).count()``: the
records framed, not decoded), ``read`` (every column decoded, into Spark's ``noop`` sink),
``uniques`` (the exact number of unique values of the string column alone: a bound of the
statistics' time), ``sql`` (``spark_tfrecord.statistics(read(...), engine="sql")``: the read and
the statistics' query in Spark SQL alone), ``arrow`` (the same with ``engine="arrow"``, its
workers this python), and ``jar`` (with ``engine="jar"``, the default in a classic session with
the jar: aggregated in the JVM). The file is not named ``statistics.py``: run as a script, it
would be the standard library's ``statistics`` for every module that imports that. Last, TFDV
in its own environment (``--tfdv-python``, default ``$SPARK_TFRECORD_TFDV_PYTHON``) computes
the statistics of the slice once, timed in its process (imports excluded).

Prints each measurement's median seconds (fastest and slowest in brackets) and rows/s, and
ratios of rows/s: ours against TFDV's (TFDV's rows/s on its slice: it is slow enough that the
whole set would take most of an hour), and each engine's time against ``count`` and ``read``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tfrbench.data import narrow

TFDV_SCRIPT = """
import json, sys, time
import tensorflow_data_validation as tfdv
start = time.perf_counter()
result = tfdv.generate_statistics_from_tfrecord(sys.argv[1])
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "rows": result.datasets[0].num_examples}))
"""


def _spark() -> Any:
    from pyspark.sql import SparkSession

    import spark_tfrecord

    # engine="arrow"'s workers need pyarrow and spark_tfrecord: this python's.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = spark_tfrecord.configure(
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
    ).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def write(spark: Any, args: argparse.Namespace) -> tuple[str, str]:
    """The data set and its slice, written unless an earlier run wrote them at these sizes."""
    import spark_tfrecord

    whole = Path(args.data) / f"narrow-{args.rows}-{args.files}"
    part = Path(args.data) / f"narrow-slice-{args.tfdv_rows}"
    if not (whole / "_SUCCESS").exists():
        df = narrow(spark, args.rows, args.files)
        spark_tfrecord.write(df, str(whole), mode="overwrite")
    if not (part / "_SUCCESS").exists():
        df = narrow(spark, args.tfdv_rows, 1).where(f"id < {args.tfdv_rows}")
        spark_tfrecord.write(df.coalesce(1), str(part), mode="overwrite")
    return str(whole), str(part)


def rounds(spark: Any, path: str, repeat: int, warmup: int) -> dict[str, list[float]]:
    """Seconds of each measurement, ``repeat`` rounds in turn after ``warmup`` untimed ones.

    Every measurement but ``jar`` reads the files through the same scan, so a round warms the
    read's code five times and the jar engine's once: its first runs are still the JIT's (JFR,
    Spark 4.3.0: the compilers' threads took 4.0 and 1.4 CPU seconds during the first two
    ``jar`` runs; through its eighth, C2 still compiled methods it reaches, such as Java
    serialization's ``writeClassDesc``, 0.5 s at once, and its histograms' loop, by OSR; the
    2 cores are shared). Five untimed rounds (the default) time each at its own pace, as a
    session that computes statistics more than once runs them.
    """
    from pyspark.sql.functions import count_distinct

    import spark_tfrecord

    runs = {
        "count": lambda: spark_tfrecord.read(spark, path).count(),
        "read": lambda: (
            spark_tfrecord.read(spark, path).write.format("noop").mode("overwrite").save()
        ),
        # a bound: the exact unique count of the string column alone, which TFDV's default
        # generator (TopKUniquesStatsGenerator, not the sketch) computes, as the statistics do
        "uniques": lambda: spark_tfrecord.read(spark, path).agg(count_distinct("s")).collect(),
        "sql": lambda: spark_tfrecord.statistics(spark_tfrecord.read(spark, path), engine="sql"),
        "arrow": lambda: spark_tfrecord.statistics(
            spark_tfrecord.read(spark, path), engine="arrow"
        ),
        # the default engine in a classic session with the jar
        "jar": lambda: spark_tfrecord.statistics(spark_tfrecord.read(spark, path), engine="jar"),
    }
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for k in range(warmup + repeat):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            if k >= warmup:
                seconds[name].append(time.perf_counter() - start)
    return seconds


def tfdv(python: str, path: str) -> dict[str, float]:
    done = subprocess.run(
        [python, "-c", TFDV_SCRIPT, path + "/part-*"],
        capture_output=True,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    if done.returncode:
        sys.exit(f"TFDV failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=".cache/bench-statistics")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--tfdv-rows", type=int, default=100_000)
    parser.add_argument("--tfdv-python", default=os.environ.get("SPARK_TFRECORD_TFDV_PYTHON"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    if not args.tfdv_python:
        sys.exit("give --tfdv-python (or SPARK_TFRECORD_TFDV_PYTHON): TFDV's environment")
    spark = _spark()
    whole, part = write(spark, args)
    seconds = rounds(spark, whole, args.repeat, args.warmup)
    spark.stop()
    theirs = tfdv(args.tfdv_python, part)
    if theirs["rows"] != args.tfdv_rows:
        sys.exit(f"TFDV counted {theirs['rows']} rows of {args.tfdv_rows}")
    speed = {}
    for name, s in seconds.items():
        median = sorted(s)[len(s) // 2]
        speed[name] = args.rows / median
        print(
            f"{name:>10}: {median:7.2f} s [{min(s):.2f}, {max(s):.2f}]  {speed[name]:,.0f} rows/s"
        )
    tfdv_speed = theirs["rows"] / theirs["seconds"]
    print(
        f"{'TFDV':>10}: {theirs['seconds']:7.2f} s on {theirs['rows']:,} rows  "
        f"{tfdv_speed:,.0f} rows/s"
    )
    print(f"uniques (a bound): time against count(): {speed['count'] / speed['uniques']:.2f}x")
    for name in ("sql", "arrow", "jar"):
        print(f"{name}: speed against TFDV's: {speed[name] / tfdv_speed:.1f}x")
        print(f"{name}: time against count(): {speed['count'] / speed[name]:.2f}x")
        print(f"{name}: time against a full read: {speed['read'] / speed[name]:.2f}x")


if __name__ == "__main__":
    main()
