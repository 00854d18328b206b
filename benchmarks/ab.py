"""Before against after: two builds of our jars, measured on the same files in fresh sessions
that alternate, so that a slow spell of the machine falls on both: is a change slower?

    # the "before" jars, built from a commit in a worktree of their own; the "after" jars here
    git worktree add /tmp/before 4955d65
    (cd /tmp/before && ci/sbt stageJars)
    ci/sbt stageJars
    .cache/venv/spark-4/bin/python benchmarks/ab.py \\
        --before /tmp/before/python/spark_tfrecord/jars --after python/spark_tfrecord/jars
    .cache/venv/spark-4/bin/python benchmarks/ab.py --before A --after B --quick  # a try

``--before`` and ``--after`` each take a jar, or a folder of jars (as ``ci/sbt stageJars``
leaves them) of which the one for this Python's pyspark is used; both are copied first, so a
rebuild during the run changes nothing. The data sets of ``run.py`` are written once by the
``--before`` jar: narrow (also as 128 files, for inference), wide-1000, image-sized and
``nested.py``'s nested one. Then each round starts, per jar (the order alternating between
rounds), a fresh ``local[1]`` session that times the narrow full read and a fresh ``local[2]``
session that times everything else; each session runs every measurement once untimed, then
``--repeat`` rounds of all of them in turn. Reads go to the ``noop`` sink; the writes are of the
narrow data set and of the image-sized one, each generated and cached first (not read: a cached
read of the files would serve their timed read from memory). What each read returns (row count
and a hash of every value) must be the same for both jars. Prints the median of every run of
each jar, the fastest and slowest in brackets, and after/before (below 1: faster after): a
Markdown table for a closing note, with how busy other processes kept the machine meanwhile.
"""

from __future__ import annotations

import argparse
import os
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
    INFER_FILES,
    NARROW_DDL,
    NESTED_DDL,
    PARTITIONS,
    ROOT,
    WIDE1000_DDL,
    WIDE1000_SELECTED,
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

# The measurements, by the cores of the session that times them.
MEASUREMENTS = {
    1: ["full read, narrow, local[1]"],
    2: [
        "full read, narrow, local[2]",
        "count(), narrow",
        "write, narrow",
        f"schema inference, {INFER_FILES} files",
        "full read, wide-1000",
        "read 10 of 1000 columns, wide-1000",
        "full read, image-sized",
        "write, image-sized",
        "full read, nested",
        "read objects.label, nested",
    ],
}
# The session extension that prunes nested columns (what spark_tfrecord.configure enables).
EXTENSIONS = {"spark.sql.extensions": "io.github.sparktfrecord.TFRecordExtensions"}
QUICK = {"rows": 100_000, "wide1000_rows": 5_000, "image_rows": 500, "rounds": 2, "repeat": 2}


def generate(args: argparse.Namespace) -> None:
    """Writes the data sets with the ``--before`` jar, unless written by an earlier run."""
    data = Path(args.data)
    spark = session(ours=args.jar, cores=2, memory=args.driver_memory, linkedin=None,
                    linkedin_jar=None)  # fmt: skip
    with no_whole_stage_codegen(spark):
        narrow(spark, args.rows, PARTITIONS).write.format(OURS).save(str(data / "narrow"))
        narrow(spark, args.rows, INFER_FILES).write.format(OURS).save(str(data / "infer"))
        with uncompressed_cache(spark):
            wide1000(spark, args.wide1000_rows).write.format(OURS).save(str(data / "wide1000"))
        nested(spark, max(1, args.rows // 4)).write.format(OURS).save(str(data / "nested"))
    image(spark, args.image_rows).write.format(OURS).save(str(data / "image"))
    spark.stop()
    emit({})


def child(args: argparse.Namespace) -> None:
    """One session with one jar: the measurements of its cores, and what each read returned."""
    spark = session(ours=args.jar, cores=args.cores, memory=args.driver_memory, linkedin=None,
                    linkedin_jar=None, conf=EXTENSIONS)  # fmt: skip
    data = Path(args.data)
    reads = {
        "full read, narrow, local[1]": load(spark, OURS, NARROW_DDL, data / "narrow"),
        "full read, narrow, local[2]": load(spark, OURS, NARROW_DDL, data / "narrow"),
        "full read, wide-1000": load(spark, OURS, WIDE1000_DDL, data / "wide1000"),
        "read 10 of 1000 columns, wide-1000": load(
            spark, OURS, WIDE1000_DDL, data / "wide1000"
        ).select(*WIDE1000_SELECTED),
        "full read, image-sized": load(spark, OURS, IMAGE_DDL, data / "image"),
        "full read, nested": load(spark, OURS, NESTED_DDL, data / "nested"),
        "read objects.label, nested": load(spark, OURS, NESTED_DDL, data / "nested").select(
            "objects.label"
        ),
    }
    wanted = MEASUREMENTS[args.cores]
    actions: dict[str, Callable[[], object]] = {
        what: (lambda df=df: noop(df)) for what, df in reads.items() if what in wanted
    }
    seen: dict[str, Any] = {what: fingerprint(reads[what]) for what in actions}
    written = data / f"written-{os.getpid()}"
    if args.cores == 2:
        narrow_df = reads["full read, narrow, local[2]"]
        # Cached first, so that the writes measure the writer, as run.py's do.
        generated = narrow(spark, args.rows, PARTITIONS).cache()
        images = image(spark, args.image_rows).cache()
        generated.count(), images.count()
        schema: list[str] = []

        def infer() -> None:
            schema[:] = [load(spark, OURS, None, data / "infer").schema.simpleString()]

        actions["count(), narrow"] = narrow_df.count
        actions["write, narrow"] = lambda: (
            generated.write.format(OURS).mode("overwrite").save(str(written / "narrow"))
        )
        actions["write, image-sized"] = lambda: (
            images.write.format(OURS).mode("overwrite").save(str(written / "image"))
        )
        actions[f"schema inference, {INFER_FILES} files"] = infer
        seen["count(), narrow"] = narrow_df.count()
        infer()
        seen[f"schema inference, {INFER_FILES} files"] = schema[0]
    runs, spent = interleaved(spark, args.repeat, actions, warmup=1)
    if args.cores == 2:
        seen["write, narrow"] = fingerprint(load(spark, OURS, NARROW_DDL, written / "narrow"))
        seen["write, image-sized"] = fingerprint(load(spark, OURS, IMAGE_DDL, written / "image"))
        shutil.rmtree(written, ignore_errors=True)
    spark.stop()
    total = sum(spent.values(), Usage(0, 0, 0, 0))
    emit({"runs": runs, "seen": seen, "others": total.others})


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/ab.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--before", help="the jar, or folder of jars, before the change")
    parser.add_argument("--after", help="the jar, or folder of jars, after the change")
    parser.add_argument("--rows", type=int, default=2_000_000, help="narrow rows (2000000)")
    parser.add_argument(
        "--wide1000-rows", type=int, default=100_000, help="wide-1000 rows (100000)"
    )
    parser.add_argument("--image-rows", type=int, default=10_000, help="image-sized rows (10000)")
    parser.add_argument("--rounds", type=int, default=3, help="sessions per jar and cores (3)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per session (3)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a try: "
        + ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in QUICK.items())
        + " (says little about a few percent)",
    )
    parser.add_argument("--driver-memory", default="6g", help="spark.driver.memory (6g)")
    parser.add_argument("--data", help="data directory (.cache/bench-ab-SIZES)")
    parser.add_argument("--jar", help=argparse.SUPPRESS)
    parser.add_argument("--cores", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--generate", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        vars(args).update(QUICK)
    name = f"bench-ab-{args.rows}-{args.wide1000_rows}-{args.image_rows}"
    args.data = args.data or str(ROOT / ".cache" / name)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if args.jar:
        (generate if args.generate else child)(args)
        return 0
    if not (args.before and args.after):
        parser.error("--before and --after are required")
    data = Path(args.data)
    jars = {
        which: snapshot_jar(data / which, getattr(args, which)) for which in ("before", "after")
    }
    sizes = ["--rows", str(args.rows), "--wide1000-rows", str(args.wide1000_rows)]
    sizes += ["--image-rows", str(args.image_rows), "--driver-memory", args.driver_memory]
    sizes += ["--data", args.data]
    if not (data / "_DONE").exists():
        print(f"writing the data sets to {data} with the before jar", flush=True)
        for folder in ("narrow", "infer", "wide1000", "nested", "image"):
            shutil.rmtree(data / folder, ignore_errors=True)
        run(script("ab", "--generate", "--jar", jars["before"], *sizes))
        (data / "_DONE").write_text("")
    started = time.perf_counter()

    def command(which: str, cores: int) -> list[str]:
        cmd = ["--jar", jars[which], "--cores", str(cores), "--repeat", str(args.repeat)]
        return script("ab", *cmd, *sizes)

    done = alternate(args.rounds, ("before", "after"), list(MEASUREMENTS), command)
    differ = done.differ()
    if differ:
        raise SystemExit(f"the jars read different rows in: {differ}\n{done.seen}")
    runs, others = done.runs, done.others
    print(table(runs, args, time.perf_counter() - started))
    print(f"other processes during the timed runs: {statistics.mean(others):.2f} cores on average")
    return 0


def table(runs: dict[str, dict[str, list[float]]], args: argparse.Namespace, took: float) -> str:
    """The medians of each jar, their fastest and slowest run, and after/before."""
    import pyspark

    def cell(times: list[float]) -> str:
        return f"{statistics.median(times):.3f} ({min(times):.3f}-{max(times):.3f})"

    lines = [
        f"\nSpark {pyspark.__version__}; per jar, the median of {args.rounds} sessions x"
        f" {args.repeat} runs; {args.rows:,} narrow, {args.wide1000_rows:,} wide-1000,"
        f" {args.image_rows:,} image-sized and {max(1, args.rows // 4):,} nested rows;"
        f" {took:.0f} s\n",
        "| measurement | before (s) | after (s) | after/before |",
        "|---|---:|---:|---:|",
    ]
    for what in (w for ws in MEASUREMENTS.values() for w in ws):
        before, after = runs["before"][what], runs["after"][what]
        ratio = statistics.median(after) / statistics.median(before)
        lines.append(f"| {what} | {cell(before)} | {cell(after)} | {ratio:.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
