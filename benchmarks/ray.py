"""``spark_tfrecord.ray`` against Ray Data's own ``read_tfrecords`` and ``write_tfrecords``, and
against the jar, on the same rows, in one run: how fast Ray reads and writes TFRecord folders
through the package's codec.

    .cache/venv/spark-4/bin/python benchmarks/ray.py [--data DIR] [--rows N] [--wide-rows N]

Spark (``local[2]``, the jar) writes ``run.py``'s data sets once under ``--data``, in
``--files`` files each (a later run with the same sizes reuses them): narrow (``NARROW_DDL``,
``--rows`` rows) and wide-1000 (``WIDE1000_DDL``, 1,000 scalar columns, ``--wide-rows`` rows),
and of each a slice in one file (``--slice`` and ``--wide-slice`` rows, the first by ``id``):
Ray's own reader parses every record with ``protobuf`` in Python, about a thousand records a
second, so it is timed on the slice only, and its speed is that slice's rows/s.

Then a child process with no JVM starts a local Ray cluster (``ray.init(num_cpus=2)``) and,
after an untimed round, runs ``--repeat`` rounds of these in turn (the order rotating):

- reads, each consumed whole as Arrow batches: ``ours`` (``spark_tfrecord.ray.read``, the
  schema inferred) and ``ours, DDL given`` on the whole set; ``ours, slice`` and ``ray, slice``
  (``ray.data.read_tfrecords``) on the slice;
- writes of rows already in Ray's object store (read, repartitioned into as many blocks as the
  jar wrote files, one for a slice, and materialized first): ``ours``
  (``spark_tfrecord.ray.write``) of the whole set, ``ours, slice`` and ``ray, slice``
  (``Dataset.write_tfrecords``) of the slice.

Before the timing, ours must hold the rows ``read_arrow`` gives (which the tests hold to the
jar's), and Ray's read the slice's row count. Last, a ``local[1]`` Spark session with the jar
reads each set into the ``noop`` sink and writes it (cached first), ``--repeat`` times each.

Prints each measurement's median seconds (fastest and slowest in brackets) and rows/s, and
ours' speed as a multiple of Ray's (rows/s against rows/s: ours on the whole set and on the
slice) and of the jar's on ``local[1]``.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tfrbench.child import emit, run, script
from tfrbench.data import NARROW_DDL, WIDE1000_DDL, narrow, wide1000
from tfrbench.timing import interleaved

# This file's name is Ray's: with its folder on the path, `import ray` would import it.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

#: The data sets: the DDL of their rows and the column to sort by.
SETS = {"narrow": (NARROW_DDL, "id"), "wide-1000": (WIDE1000_DDL, "w0000")}
READS = ("ours", "ours, DDL given", "ours, slice", "ray, slice")
WRITES = ("ours", "ours, slice", "ray, slice")


def _spark(cores: int) -> Any:
    from pyspark.sql import SparkSession

    import spark_tfrecord

    spark = spark_tfrecord.configure(
        SparkSession.builder.master(f"local[{cores}]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
    ).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def write(args: argparse.Namespace) -> dict[str, dict[str, int]]:
    """Writes the data sets and their slices unless an earlier run wrote them at these sizes;
    their row counts."""
    rows = {
        "narrow": {"all": args.rows, "slice": args.slice},
        "wide-1000": {"all": args.wide_rows, "slice": args.wide_slice},
    }
    root = Path(args.data)
    done = root / "sizes.json"
    if done.is_file() and json.loads(done.read_text()) == [rows, args.files]:
        return rows
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    spark = _spark(2)
    made = {
        "narrow": narrow(spark, args.rows, args.files),
        "wide-1000": wide1000(spark, args.wide_rows).repartition(args.files),
    }
    for name, df in made.items():
        key = SETS[name][1]
        df = df.cache()
        df.write.format("tfrecord").save(str(root / name / "all"))
        part = df.orderBy(key).limit(rows[name]["slice"]).coalesce(1)
        part.write.format("tfrecord").save(str(root / name / "slice"))
        df.unpersist()
    spark.stop()
    done.write_text(json.dumps([rows, args.files]))
    return rows


def _tf_schema(ddl: str) -> Any:
    """The ``tensorflow_metadata`` schema Ray's ``read_tfrecords`` takes (``tf_schema``) for the
    DDL's columns: without it Ray types a feature by each record's values, a list of one value
    as a scalar, and a read of ``ids array<bigint>`` fails combining its blocks ("Types
    mismatch: list<item: int64> != int64")."""
    from tensorflow_metadata.proto.v0 import schema_pb2

    from spark_tfrecord._format.columns.ddl import parse_ddl

    kinds = {"long": schema_pb2.INT, "float": schema_pb2.FLOAT, "string": schema_pb2.BYTES}
    schema = schema_pb2.Schema()
    for f in parse_ddl(ddl)["fields"]:
        t = f["type"]
        element = t["elementType"] if isinstance(t, dict) else t
        schema.feature.add(name=f["name"], type=kinds[element])
    return schema


def _consume(ds: Any) -> int:
    """Reads a dataset whole, as Arrow batches; its rows."""
    return sum(b.num_rows for b in ds.iter_batches(batch_size=None, batch_format="pyarrow"))


def _checked(data: Path) -> dict[str, Any]:
    """Ours' rows against ``read_arrow``'s, and Ray's row counts on the slices."""
    import pyarrow as pa
    import ray

    import spark_tfrecord.ray as tfr_ray
    from spark_tfrecord import read_arrow

    tables = {}
    for name, (ddl, _) in SETS.items():
        folder = str(data / name / "all")
        refs = tfr_ray.read(folder).to_arrow_refs()
        ours = pa.concat_tables([ray.get(r) for r in refs])
        # by every scalar column: a float column's values repeat among 50,000 rows
        order = [(f.name, "ascending") for f in ours.schema if not pa.types.is_nested(f.type)]
        ours = ours.sort_by(order)
        assert ours.equals(read_arrow(folder).read_all().sort_by(order)), name
        theirs = ray.data.read_tfrecords(str(data / name / "slice"), tf_schema=_tf_schema(ddl))
        theirs = len(theirs.take_all())
        assert theirs == read_arrow(str(data / name / "slice")).read_all().num_rows, name
        tables[name] = ours
    return tables


def _reads(data: Path, name: str) -> dict[str, Callable[[], object]]:
    import ray

    import spark_tfrecord.ray as tfr_ray

    ddl = SETS[name][0]
    whole, part = str(data / name / "all"), str(data / name / "slice")
    return {
        "ours": lambda: _consume(tfr_ray.read(whole)),
        "ours, DDL given": lambda: _consume(tfr_ray.read(whole, ddl)),
        "ours, slice": lambda: _consume(tfr_ray.read(part)),
        "ray, slice": lambda: _consume(ray.data.read_tfrecords(part, tf_schema=_tf_schema(ddl))),
    }


def _writes(data: Path, name: str, out: Path) -> dict[str, Callable[[], object]]:
    import ray

    import spark_tfrecord.ray as tfr_ray

    files = len(list((data / name / "all").glob("part-*")))
    whole = tfr_ray.read(str(data / name / "all")).repartition(files).materialize()
    ours_part = tfr_ray.read(str(data / name / "slice")).repartition(1).materialize()
    tf_schema = _tf_schema(SETS[name][0])
    theirs_part = ray.data.read_tfrecords(str(data / name / "slice"), tf_schema=tf_schema)
    theirs_part = theirs_part.repartition(1).materialize()
    return {
        "ours": lambda: tfr_ray.write(whole, out / "ours", mode="overwrite"),
        "ours, slice": lambda: tfr_ray.write(ours_part, out / "ours-slice", mode="overwrite"),
        "ray, slice": lambda: theirs_part.write_tfrecords(str(out / f"ray-{os.urandom(4).hex()}")),
    }


def child(data: Path, repeat: int) -> dict[str, Any]:
    """The child's side: a Ray cluster of 2 CPUs; each set read and written by each; the
    seconds of each run."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    results: dict[str, Any] = {"versions": {"ray": ray.__version__}, "runs": {}}
    _checked(data)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for name in SETS:
            reads, _ = interleaved(None, repeat, _reads(data, name), warmup=1, rotate=True)
            clean = functools.partial(_clean, out)
            writes, _ = interleaved(
                None, repeat, _writes(data, name, out), warmup=1, rotate=True, after=clean
            )
            results["runs"][name] = {"read": reads, "write": writes}
    ray.shutdown()
    return results


def _clean(out: Path) -> None:
    for p in out.iterdir():
        if p.name.startswith("ray-"):
            shutil.rmtree(p)


def jar(data: Path, repeat: int) -> dict[str, Any]:
    """The jar on ``local[1]``: each set read into ``noop`` and written (cached first)."""
    import pyspark

    spark = _spark(1)
    runs: dict[str, Any] = {"pyspark": pyspark.__version__}
    with tempfile.TemporaryDirectory() as tmp:
        for name in SETS:
            path = str(data / name / "all")
            df = spark.read.format("tfrecord").load(path).cache()
            df.count()
            actions: dict[str, Callable[[], object]] = {
                "read": lambda p=path: (
                    spark.read.format("tfrecord")
                    .load(p)
                    .write.format("noop")
                    .mode("overwrite")
                    .save()
                ),
                "write": lambda d=df: d.write.format("tfrecord").mode("overwrite").save(tmp),
            }
            runs[name], _ = interleaved(spark, repeat, actions, warmup=1)
            df.unpersist()
    spark.stop()
    return runs


def report(rows: dict[str, dict[str, int]], ray_runs: dict[str, Any], jar_runs: Any) -> list[str]:
    def cell(times: list[float]) -> str:
        return f"{statistics.median(times):.2f} ({min(times):.2f}-{max(times):.2f})"

    lines = [
        f"Ray {ray_runs['versions']['ray']}, pyspark {jar_runs['pyspark']}; {os.cpu_count()} "
        "cores, Ray with num_cpus=2, the jar on local[1]; seconds, median of the runs "
        "(fastest-slowest); Ray's own reader and writer on the slice only",
        "",
        "| data set | what | rows | seconds | rows/s |",
        "|---|---|---|---|---|",
    ]
    speeds: dict[tuple[str, str, str], float] = {}
    for name, both in ray_runs["runs"].items():
        for kind in ("read", "write"):
            for what, times in both[kind].items():
                n = rows[name]["slice" if "slice" in what else "all"]
                speeds[(name, kind, what)] = n / statistics.median(times)
                lines.append(
                    f"| {name} | {kind}, {what} | {n:,} | {cell(times)} | "
                    f"{speeds[(name, kind, what)]:,.0f} |"
                )
            times = jar_runs[name][kind]
            speeds[(name, kind, "jar")] = rows[name]["all"] / statistics.median(times)
            lines.append(
                f"| {name} | {kind}, jar local[1] | {rows[name]['all']:,} | {cell(times)} | "
                f"{speeds[(name, kind, 'jar')]:,.0f} |"
            )
    lines += ["", "| data set | what | ours / Ray's | ours on the slice / Ray's | ours / jar's |"]
    lines.append("|---|---|---|---|---|")
    for name in ray_runs["runs"]:
        for kind in ("read", "write"):
            ours, theirs = speeds[(name, kind, "ours")], speeds[(name, kind, "ray, slice")]
            same = speeds[(name, kind, "ours, slice")]
            lines.append(
                f"| {name} | {kind} | {ours / theirs:.1f}x | {same / theirs:.1f}x | "
                f"{ours / speeds[(name, kind, 'jar')]:.2f}x |"
            )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/ray.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", default=".cache/bench-ray", help="the data sets' folder")
    parser.add_argument("--rows", type=int, default=200_000, help="narrow rows")
    parser.add_argument("--wide-rows", type=int, default=2_000, help="wide-1000 rows")
    parser.add_argument("--slice", type=int, default=4_000, help="narrow rows Ray's reader reads")
    parser.add_argument("--wide-slice", type=int, default=100, help="wide-1000 rows of the slice")
    parser.add_argument("--files", type=int, default=4, help="files per data set")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per measurement")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        emit(child(Path(args.data), args.repeat))
        return 0
    args.data = str(Path(args.data).resolve())
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    rows = write(args)
    print("Ray Data, in a child process with no JVM:", flush=True)
    ray_runs = run(script("ray", "--child", "--data", args.data, "--repeat", str(args.repeat)))
    print("the jar, local[1]:", flush=True)
    jar_runs = jar(Path(args.data), args.repeat)
    print("\n".join(report(rows, ray_runs, jar_runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
