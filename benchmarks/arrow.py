"""``spark_tfrecord.read_arrow`` against ``pyarrow.parquet.read_table``, on the same rows, in one
run: how fast a trainer with no Spark gets a TFRecord folder into Arrow, beside Parquet.

    .cache/venv/spark-4/bin/python benchmarks/arrow.py [--data DIR] [--rows N]

Spark (``local[2]``, the jar) writes the rows of ``run.py``'s data sets once under ``--data``,
each as TFRecord (``format("tfrecord")``) and as Parquet (Spark's default, snappy), in
``--files`` files each; a later run with the same sizes reuses them:

- narrow: ``NARROW_DDL`` (two longs, four floats, 32 floats, up to 20 longs and a short string),
  ``--rows`` rows;
- wide-1000: ``WIDE1000_DDL`` (1,000 scalar columns), ``--wide-rows`` rows.

Then a child process with no JVM (as a trainer) reads each set whole into one ``pyarrow.Table``,
after an untimed round, ``--repeat`` rounds of the readers in turn:

- ``read_arrow``: ``read_arrow(DIR).read_all()``, the schema inferred from the records (one
  Python thread), and ``read_arrow, DDL given``: ``read_arrow(DIR, DDL)``, no inference;
- ``parquet``: ``pyarrow.parquet.read_table(DIR)`` with its threads (``use_threads=True``, the
  default), and ``parquet, 1 thread`` (``use_threads=False``).

The tables must hold the same rows: sorted by ``id`` (``w0000`` for wide-1000), every column
equal, once per set before the timing. Prints each reader's median seconds (fastest and slowest
in brackets), rows/s, and ``read_arrow``'s speed (inferred, and with the DDL given) as a share
of each Parquet reader's.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tfrbench.child import emit, run, script
from tfrbench.data import NARROW_DDL, WIDE1000_DDL, narrow, wide1000
from tfrbench.timing import interleaved

#: The data sets: the DDL of their rows and the column to sort by.
SETS = {"narrow": (NARROW_DDL, "id"), "wide-1000": (WIDE1000_DDL, "w0000")}
READERS = ("read_arrow", "read_arrow, DDL given", "parquet", "parquet, 1 thread")


def write(args: argparse.Namespace) -> dict[str, int]:
    """Writes the data sets (TFRecord and Parquet) unless an earlier run wrote them at these
    sizes; their row counts."""
    from pyspark.sql import SparkSession

    import spark_tfrecord

    rows = {"narrow": args.rows, "wide-1000": args.wide_rows}
    root = Path(args.data)
    done = root / "sizes.json"
    if done.is_file() and json.loads(done.read_text()) == rows:
        return rows
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    spark = spark_tfrecord.configure(
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
    ).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    made = {
        "narrow": narrow(spark, args.rows, args.files),
        "wide-1000": wide1000(spark, args.wide_rows).repartition(args.files),
    }
    for name, df in made.items():
        df = df.cache()
        df.write.format("tfrecord").save(str(root / name / "tfrecord"))
        df.write.parquet(str(root / name / "parquet"))
        df.unpersist()
    spark.stop()
    done.write_text(json.dumps(rows))
    return rows


def child(data: Path, repeat: int) -> dict[str, Any]:
    """The child's side: each set read by each reader; the seconds of each run."""
    import pyarrow
    import pyarrow.parquet as pq

    from spark_tfrecord import read_arrow

    results: dict[str, Any] = {"versions": {"pyarrow": pyarrow.__version__}, "runs": {}}
    for name, (ddl, key) in SETS.items():
        tfrecord, parquet = str(data / name / "tfrecord"), str(data / name / "parquet")
        readers: dict[str, Callable[[], Any]] = {
            "read_arrow": functools.partial(lambda p: read_arrow(p).read_all(), tfrecord),
            "read_arrow, DDL given": functools.partial(
                lambda p, ddl: read_arrow(p, ddl).read_all(), tfrecord, ddl
            ),
            "parquet": functools.partial(pq.read_table, parquet),
            "parquet, 1 thread": functools.partial(pq.read_table, parquet, use_threads=False),
        }
        parquet_table = readers["parquet"]()
        same(readers["read_arrow"](), parquet_table, key)
        same(readers["read_arrow, DDL given"](), parquet_table, key)
        runs, _ = interleaved(None, repeat, readers, warmup=1, rotate=True)
        results["runs"][name] = runs
    return results


def same(ours: Any, parquet: Any, key: str) -> None:
    """The two tables hold the same rows: the same columns, equal value for value once sorted
    by ``key`` (Parquet's column cast to ours' type: Spark's Parquet names a list's items
    ``element`` too, but keeps no nullability of theirs)."""
    assert ours.column_names == parquet.column_names, (ours.column_names, parquet.column_names)
    assert ours.num_rows == parquet.num_rows, (ours.num_rows, parquet.num_rows)
    ours, parquet = ours.sort_by(key), parquet.sort_by(key)
    for name in ours.column_names:
        a, b = ours.column(name), parquet.column(name)
        assert a.equals(b.cast(a.type)), f"column {name} differs"


def report(rows: dict[str, int], measured: dict[str, Any]) -> list[str]:
    def cell(times: list[float]) -> str:
        return f"{statistics.median(times):.2f} ({min(times):.2f}-{max(times):.2f})"

    lines = [
        f"pyarrow {measured['versions']['pyarrow']}; {os.cpu_count()} cores; seconds, median of "
        "the runs (fastest-slowest); speed as a share of each Parquet reader's",
        "",
        "| data set | reader | seconds | rows/s | read_arrow's speed | with the DDL given |",
        "|---|---|---|---|---|---|",
    ]
    for name, runs in measured["runs"].items():
        ours = statistics.median(runs["read_arrow"])
        given = statistics.median(runs["read_arrow, DDL given"])
        for reader in READERS:
            median = statistics.median(runs[reader])
            ratios = (
                " | "
                if reader.startswith("read_arrow")
                else (f"{median / ours:.2f}x | {median / given:.2f}x")
            )
            lines.append(
                f"| {name} ({rows[name]:,} rows) | {reader} | {cell(runs[reader])} | "
                f"{rows[name] / median:,.0f} | {ratios} |"
            )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/arrow.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", default=".cache/bench-arrow", help="the data sets' folder")
    parser.add_argument("--rows", type=int, default=1_000_000, help="narrow rows")
    parser.add_argument("--wide-rows", type=int, default=20_000, help="wide-1000 rows")
    parser.add_argument("--files", type=int, default=4, help="files per data set and format")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per reader")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        emit(child(Path(args.data), args.repeat))
        return 0
    args.data = str(Path(args.data).resolve())
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    rows = write(args)
    print("the readers, in a child process with no JVM:", flush=True)
    measured = run(script("arrow", "--child", "--data", args.data, "--repeat", str(args.repeat)))
    print("\n".join(report(rows, measured)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
