"""The route with no jar (the Spark 4 Python data source of issue 43) against the jar, on the
same files: how much of the jar's speed a user keeps where no jar can go.

    .cache/venv/spark-4/bin/python benchmarks/no_jar.py [--quick] [--profile]

The data sets of ``run.py`` (narrow, wide-1000, image-sized, nested: a struct and an array of
structs) and lists of lists are written once by the jar. Then
each round starts, per route (the order alternating between rounds) and per cores (``local[1]``,
``local[2]``), a fresh session: the jar's (``spark.jars``), or one with no jar whose Python
workers are this Python with this checkout's package, so that ``format("tfrecord")`` is the
Python data source. Each session runs every measurement once untimed, then ``--repeat`` rounds
of all of them in turn: full reads of each data set into the ``noop`` sink, and writes of the
narrow and image-sized rows (made and cached first, so that a write measures the writer). What
each read returns (row count and a hash of every value) must be the same for both routes, and so
must what each write wrote, read back.

A read of a one-record folder gives each route's fixed cost of a query. The Python route's
sessions then read each data set through ``tfrecord_held`` (tfrbench/held_source.py), whose
workers yield again the Arrow batches they decoded in a first read: Spark's hand-over of the
same batches alone, the bound of that route's speed on those rows.

Prints, per measurement and cores, each route's median seconds (fastest and slowest in
brackets) and the Python route's speed as a share of the jar's, against issues 43's and 57's
goals: reads at least 1/2 of the jar's on narrow records and on image-sized ones, 1/3 on
wide-1000, nested and lists of lists; writes at least 1/3.

``--profile`` then shows where a Python task's time goes: the narrow files read by the source's
own reader in this process, with no Spark (planning, framing, decoding, Arrow batches: what a
Python worker does), as records/s beside the Spark read's, so that what is left is Spark's
hand-over (the worker's process, Arrow to the JVM); and the functions that take the most time in
it (cProfile).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tfrbench.checks import fingerprint
from tfrbench.child import emit, run, script
from tfrbench.data import (
    IMAGE_DDL,
    NARROW_DDL,
    NESTED_DDL,
    PARTITIONS,
    ROOT,
    WIDE1000_DDL,
    image,
    narrow,
    nested,
    no_whole_stage_codegen,
    uncompressed_cache,
    wide1000,
)
from tfrbench.rounds import alternate
from tfrbench.sessions import OURS, load, noop, session, snapshot_jar
from tfrbench.timing import Usage, interleaved

#: Lists of lists (written ragged): 0 to 3 lists of 1 to 4 bigints, and of as many strings.
LISTS_DDL = "id bigint, ll array<array<bigint>>, ss array<array<string>>"
LISTS_EXPRS = [
    "id",
    "transform(sequence(0, cast(id % 4 as int) - 1), i -> sequence(id, id + i)) as ll",
    "transform(sequence(0, cast(id % 3 as int) - 1), "
    "i -> transform(sequence(0, i), j -> concat('s', id + j))) as ss",
]
#: The data sets: their folder, schema and the rows option that sizes them.
DATA = {
    "narrow": ("narrow", NARROW_DDL),
    "wide-1000": ("wide1000", WIDE1000_DDL),
    "image-sized": ("image", IMAGE_DDL),
    "nested": ("nested", NESTED_DDL),
    "lists of lists": ("lists", LISTS_DDL),
    # a query's fixed cost (planning, tasks, a Python worker), beside the reads it is part of
    "one record": ("one", NARROW_DDL),
}
#: The writes: of the rows of these data sets.
WRITES = ("narrow", "image-sized")
#: Issues 43's and 57's goals: the Python route's speed as a share of the jar's (on
#: ``local[1]``, issue 57 says), by measurement.
GOALS = {"read, narrow": 1 / 2, "read, image-sized": 1 / 2, "read, wide-1000": 1 / 3,
         "write, narrow": 1 / 3, "write, image-sized": 1 / 3, "read, nested": 1 / 3,
         "read, lists of lists": 1 / 3}  # fmt: skip
CORES = (1, 2)
QUICK = {"rows": 100_000, "wide1000_rows": 2_000, "image_rows": 300, "nested_rows": 50_000,
         "rounds": 2, "repeat": 2}  # fmt: skip
PYTHON_ROUTE = "tfrecord"  # what format("tfrecord") is in a session with no jar


def generate(args: argparse.Namespace) -> None:
    """Writes the data sets with the jar, those an earlier run did not write."""
    data = Path(args.data)
    spark = session(ours=args.jar, cores=2, memory=args.driver_memory, linkedin=None,
                    linkedin_jar=None)  # fmt: skip
    lists = spark.range(0, args.nested_rows, 1, PARTITIONS).selectExpr(*LISTS_EXPRS)
    writes: dict[str, Callable[[], Any]] = {
        "narrow": lambda: narrow(spark, args.rows, PARTITIONS),
        "wide1000": lambda: wide1000(spark, args.wide1000_rows),
        "image": lambda: image(spark, args.image_rows),
        "nested": lambda: nested(spark, args.nested_rows),
        "lists": lambda: lists,
        "one": lambda: narrow(spark, 1, 1),
    }
    for folder in missing(data):
        shutil.rmtree(data / folder, ignore_errors=True)
        with no_whole_stage_codegen(spark), uncompressed_cache(spark):
            writes[folder]().write.format(OURS).save(str(data / folder))
    spark.stop()
    emit({})


def missing(data: Path) -> list[str]:
    """The data sets' folders not (wholly) written in ``data``."""
    return [folder for folder, _ in DATA.values() if not (data / folder / "_SUCCESS").exists()]


def jarless_session(cores: int, memory: str) -> Any:
    """A local session with no jar, whose Python workers import this checkout's package (and
    its top-level ``pyspark_tfrecord``, which Spark registers as ``tfrecord``)."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName("spark-tfrecord-benchmarks-no-jar")
        .config("spark.driver.memory", memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(PARTITIONS))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    jvm: Any = spark._jvm
    try:
        jvm.java.lang.Class.forName("io.github.sparktfrecord.TFRecordFileFormat")
    except Exception:
        return spark
    raise SystemExit("the session with no jar has the jar on its class path")


def child(args: argparse.Namespace) -> None:
    """One session of one route: its measurements, and what each read and write returned."""
    if args.route == "jar":
        spark = session(ours=args.jar, cores=args.cores, memory=args.driver_memory,
                        linkedin=None, linkedin_jar=None)  # fmt: skip
        fmt = OURS
    else:
        spark = jarless_session(args.cores, args.driver_memory)
        fmt = PYTHON_ROUTE
    data = Path(args.data)
    reads = {
        f"read, {name}": load(spark, fmt, ddl, data / folder)
        for name, (folder, ddl) in DATA.items()
    }
    actions: dict[str, Callable[[], object]] = {
        what: (lambda df=df: noop(df)) for what, df in reads.items()
    }
    seen: dict[str, Any] = {what: fingerprint(df) for what, df in reads.items()}
    written = data / f"written-{os.getpid()}"
    # The rows to write, made (not read: a cached read would serve the timed reads of the same
    # files from memory) and cached first, as run.py's writes are.
    cached = {
        "narrow": narrow(spark, args.rows, PARTITIONS).cache(),
        "image-sized": image(spark, args.image_rows).cache(),
    }
    for df in cached.values():
        df.count()
    for name, df in cached.items():
        target = str(written / DATA[name][0])
        actions[f"write, {name}"] = lambda df=df, target=target: (
            df.write.format(fmt).mode("overwrite").save(target)
        )
    runs, spent = interleaved(spark, args.repeat, actions, warmup=1)
    handover = held_reads(spark, data, args.repeat) if args.route == "python" else []
    for name in WRITES:
        folder, ddl = DATA[name]
        seen[f"write, {name}"] = fingerprint(load(spark, fmt, ddl, written / folder))
    shutil.rmtree(written, ignore_errors=True)
    spark.stop()
    total = sum(spent.values(), Usage(0, 0, 0, 0))
    where = f", local[{args.cores}]"  # the names unique across the cores of a side
    runs = {what + where: times for what, times in runs.items()}
    seen = {what + where: value for what, value in seen.items()}
    emit({"runs": runs, "seen": seen, "others": total.others, "handover": handover})


def held_reads(spark: Any, data: Path, repeat: int) -> list[tuple[str, float]]:
    """(data set, seconds) of reads of each data set's files whose Arrow batches each Python
    worker decoded in a first read and holds (``tfrecord_held``): Spark's hand-over of the
    batches alone."""
    from tfrbench.held_source import HeldSource

    spark.dataSource.register(HeldSource)
    times = []
    for name, (folder, ddl) in DATA.items():
        if name == "one record":
            continue
        df = load(spark, "tfrecord_held", ddl, data / folder)
        noop(df)  # decodes, and holds the batches
        for _ in range(repeat):
            start = time.perf_counter()
            noop(df)
            times.append((name, time.perf_counter() - start))
    return times


def profile(args: argparse.Namespace) -> None:
    """The narrow files read by the Python source's reader in this process, with no Spark:
    records/s, and the functions that took the most time (cProfile)."""
    from pyspark.sql.types import StructType

    from spark_tfrecord._format.columns.ddl import parse_ddl
    from spark_tfrecord._source.reader import TFRecordReader

    path = str(Path(args.data) / "narrow")
    schema = StructType.fromJson(parse_ddl(NARROW_DDL))

    def read_all() -> int:
        reader = TFRecordReader({"path": path}, schema)
        return sum(b.num_rows for p in reader.partitions() for b in reader.read(p))

    rows = read_all()  # untimed: the files in the page cache, the modules imported
    start = time.perf_counter()
    read_all()
    seconds = time.perf_counter() - start
    profiler = cProfile.Profile()
    profiler.enable()
    read_all()
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(12)
    emit({"rows": rows, "seconds": seconds, "profile": text.getvalue()})


def table(runs: dict[str, dict[str, list[float]]], rows: dict[str, int]) -> str:
    """Each route's medians, and the Python route's speed as a share of the jar's."""
    import pyspark

    def cell(times: list[float]) -> str:
        return f"{statistics.median(times):.2f} ({min(times):.2f}-{max(times):.2f})"

    lines = [
        f"pyspark {pyspark.__version__}, {rows['narrow']:,} narrow rows, "
        f"{rows['wide1000']:,} wide-1000, {rows['image']:,} image-sized, {rows['nested']:,} "
        "nested and lists of lists; seconds, median of "
        "each route's runs (fastest-slowest)",
        "",
        "| measurement | jar | no jar | no jar / jar speed | goal |",
        "|---|---|---|---|---|",
    ]
    for what in runs["jar"]:
        jar, python = runs["jar"][what], runs["python"][what]
        share = statistics.median(jar) / statistics.median(python)
        base = what.rsplit(", local[", 1)[0]
        goal = GOALS.get(base)
        met = "" if goal is None else f"{goal:.2f}: {'met' if share >= goal else 'not met'}"
        lines.append(f"| {what} | {cell(jar)} | {cell(python)} | {share:.2f}x | {met} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/no_jar.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--jar", help="our jar, or a folder of jars (the installed wheel's)")
    parser.add_argument("--rows", type=int, default=300_000, help="narrow rows (300000)")
    parser.add_argument("--wide1000-rows", type=int, default=5_000, help="wide-1000 rows (5000)")
    parser.add_argument("--image-rows", type=int, default=1_000, help="image-sized rows (1000)")
    parser.add_argument(
        "--nested-rows", type=int, default=200_000, help="nested and lists-of-lists rows (200000)"
    )
    parser.add_argument("--rounds", type=int, default=2, help="sessions per route and cores (2)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per session (3)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a try: " + ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in QUICK.items()),
    )
    parser.add_argument("--profile", action="store_true", help="where a Python task's time goes")
    parser.add_argument("--driver-memory", default="4g", help="spark.driver.memory (4g)")
    parser.add_argument("--data", help="data directory (.cache/bench-no-jar-SIZES)")
    parser.add_argument("--route", choices=("jar", "python"), help=argparse.SUPPRESS)
    parser.add_argument("--cores", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--generate", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--profile-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:  # what the command line gives wins
        given = {a.split("=")[0].lstrip("-").replace("-", "_") for a in sys.argv[1:]}
        vars(args).update({k: v for k, v in QUICK.items() if k not in given})
    name = f"bench-no-jar-{args.rows}-{args.wide1000_rows}-{args.image_rows}-{args.nested_rows}"
    args.data = args.data or str(ROOT / ".cache" / name)
    # The Python workers (of both routes) are this Python, with this checkout's package first.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    python_dir = str(ROOT / "python")
    # (and benchmarks/, for tfrbench.held_source in the workers)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (python_dir, str(ROOT / "benchmarks"), os.environ.get("PYTHONPATH")) if p
    )
    sys.path.insert(0, python_dir)
    if args.generate:
        generate(args)
        return 0
    if args.profile_child:
        profile(args)
        return 0
    if args.route:
        child(args)
        return 0
    data = Path(args.data)
    jar = snapshot_jar(data, args.jar)
    sizes = ["--rows", str(args.rows), "--wide1000-rows", str(args.wide1000_rows)]
    sizes += ["--image-rows", str(args.image_rows), "--driver-memory", args.driver_memory]
    sizes += ["--nested-rows", str(args.nested_rows)]
    sizes += ["--data", args.data, "--jar", jar]
    if missing(data):
        print(f"writing the data sets {missing(data)} to {data} with the jar", flush=True)
        run(script("no_jar", "--generate", *sizes))

    def command(route: str, cores: int) -> list[str]:
        cmd = ["--route", route, "--cores", str(cores), "--repeat", str(args.repeat)]
        return script("no_jar", *cmd, *sizes)

    done = alternate(args.rounds, ("jar", "python"), CORES, command)
    differ = done.differ()
    if differ:
        raise SystemExit(f"the routes read or wrote different rows in: {differ}\n{done.seen}")
    runs, seen, others = done.runs, done.seen, done.others
    print(f"ok: both routes read and wrote the same rows ({len(seen['jar'])} checks)")
    counts = {"narrow": args.rows, "wide1000": args.wide1000_rows, "image": args.image_rows,
              "nested": args.nested_rows}  # fmt: skip
    print(table(runs, counts))
    print(
        "\nSpark's hand-over alone: each data set's Arrow batches decoded before and held by the "
        "Python worker (the bound of the route's speed: no reader through this API is faster "
        "than the jar's time over the hand-over's)\n"
    )
    print("| read | hand-over, s | share of the no-jar read | jar / hand-over (bound) | goal |")
    print("|---|---|---|---|---|")
    for cores, pairs in done.extra("handover").items():
        for name in dict(pairs):
            what = f"read, {name}, local[{cores}]"
            read = statistics.median(runs["python"][what])
            jar = statistics.median(runs["jar"][what])
            held = statistics.median(t for n, t in pairs if n == name)
            goal = GOALS.get(f"read, {name}")
            print(
                f"| {name}, local[{cores}] | {held:.2f} | {held / read:.0%} of {read:.2f} s | "
                f"{jar / held:.2f}x | {'' if goal is None else f'{goal:.2f}'} |"
            )
    one = {route: statistics.median(runs[route]["read, one record, local[1]"]) for route in runs}
    print(
        f"a query's fixed cost (one record read, local[1]): jar {one['jar']:.2f} s, no jar "
        f"{one['python']:.2f} s"
    )
    print(f"other processes during the timed runs: {statistics.mean(others):.2f} cores on average")
    if args.profile:
        found = run(script("no_jar", "--profile-child", *sizes))
        spark_seconds = statistics.median(runs["python"]["read, narrow, local[1]"])
        print(
            f"\nThe narrow files read by the source's reader with no Spark, one process: "
            f"{found['rows'] / found['seconds']:,.0f} records/s ({found['seconds']:.2f} s); "
            f"through Spark, local[1]: {args.rows / spark_seconds:,.0f} records/s "
            f"({spark_seconds:.2f} s): the reader's work is "
            f"{found['seconds'] / spark_seconds:.0%} of the Spark read's time.\n"
        )
        print(found["profile"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
