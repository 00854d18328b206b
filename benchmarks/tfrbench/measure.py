"""The measurements in the main session (``local[2]``), the facts of the machine they ran on,
and how much it was shared."""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import subprocess
import time
from collections.abc import Sequence
from dataclasses import astuple
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .checks import check
from .data import (
    IMAGE_DDL,
    NARROW_DDL,
    WIDE1000_DDL,
    WIDE1000_SELECTED,
    conf,
    data_files,
    narrow,
)
from .sessions import LINKEDIN_PACKAGE, OURS, jvm, noop, sha256, short
from .timing import Bench, Usage

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


#: Timed rounds of the wide-1000 and image-sized reads, whatever ``--repeat`` says: reads of a
#: second or less, whose medians of three moved by a third between two runs of the same code.
SHORT_READ_ROUNDS = 7


def writer(df: DataFrame, fmt: str, path: Path) -> Callable[[], object]:
    return lambda: df.write.format(fmt).mode("overwrite").save(str(path))


def reader(bench: Bench, fmt: str, ddl: str, path: Path, *columns: str) -> Callable[[], object]:
    """A read of ``path`` with the schema ``ddl`` (of ``columns`` only, if any) to ``noop``."""
    if not columns:
        return lambda: noop(bench.read(fmt, ddl, path))
    return lambda: noop(bench.read(fmt, ddl, path).select(*columns))


def warm_up(bench: Bench, formats: Sequence[str]) -> None:
    """One small write, read and count per format, so the first timed run is not JIT start-up."""
    small = narrow(bench.spark, 20000, 2)
    for fmt in formats:
        path = bench.out / "warmup" / short(fmt)
        writer(small, fmt, path)()
        reader(bench, fmt, NARROW_DDL, path)()
        bench.read(fmt, NARROW_DDL, path).count()


def measure_narrow(bench: Bench, data: DataFrame, formats: Sequence[str]) -> dict[str, int]:
    """Write, full read and count(), the formats taking turns in each; both TFRecord readers
    read the files we wrote."""
    bench.compare(
        {("write", fmt): writer(data, fmt, bench.out / f"narrow-{short(fmt)}") for fmt in formats}
    )
    ours = bench.out / "narrow-ours"

    def path(fmt: str) -> Path:
        return bench.out / "narrow-parquet" if fmt == "parquet" else ours

    bench.compare(
        {("full read", fmt): reader(bench, fmt, NARROW_DDL, path(fmt)) for fmt in formats}
    )
    counts: dict[str, int] = {}
    bench.compare(
        {("count", fmt): counter(bench, fmt, ours, counts) for fmt in formats if fmt != "parquet"}
    )
    return counts


def counter(bench: Bench, fmt: str, path: Path, counts: dict[str, int]) -> Callable[[], object]:
    def count() -> None:
        counts[short(fmt)] = bench.read(fmt, NARROW_DDL, path).count()

    return count


def inferrer(bench: Bench, fmt: str, path: Path, schemas: dict[str, str]) -> Callable[[], object]:
    def infer() -> None:
        schemas[short(fmt)] = bench.read(fmt, None, path).schema.simpleString()

    return infer


def measure_floor(bench: Bench, rows: int) -> None:
    """``TFRecordInspector.countRecords`` over the narrow files we wrote, one after another."""
    files = [str(f) for f in data_files(bench.out / "narrow-ours") if f.suffix == ".tfrecord"]
    api = jvm(bench.spark).io.github.sparktfrecord.tools.TFRecordInspector
    totals: list[int] = []

    def count() -> None:
        totals[:] = [api.countRecords(f) for f in files]

    bench.time("floor", "ours", count)
    check(sum(totals) == rows, f"countRecords over {len(files)} files: {sum(totals)} records")


def measure_wide1000(bench: Bench, data: DataFrame) -> str:
    """The cache read alone; write (from the cache), full read and 10 of the 1,000 columns, by us
    and by Parquet, each reading its own files; our schema inference on our files. Returns the
    inferred schema."""
    formats = [OURS, "parquet"]
    # Part of both writes: Spark's cache of 1,000 columns, read row by row.
    bench.time("wide-1000 cache read", "noop", lambda: noop(data))
    bench.compare(
        {
            ("wide-1000 write", fmt): writer(data, fmt, bench.out / f"wide1000-{short(fmt)}")
            for fmt in formats
        }
    )
    # The full reads and the reads of 10 columns take turns too: their ratio is a goal.
    reads: dict[tuple[str, str], Callable[[], object]] = {}
    for fmt in formats:
        path = bench.out / f"wide1000-{short(fmt)}"
        reads[("wide-1000 full read", fmt)] = reader(bench, fmt, WIDE1000_DDL, path)
        reads[("wide-1000 10 columns", fmt)] = reader(
            bench, fmt, WIDE1000_DDL, path, *WIDE1000_SELECTED
        )
    # What bounds any read of these files, however few columns it wants: every record read,
    # checked and copied into a row of its bytes, nothing parsed (Spark's row floor).
    floor = bench.out / "wide1000-ours"
    reads[("wide-1000 as ByteArray", OURS)] = lambda: noop(
        bench.spark.read.format(OURS).option("recordType", "ByteArray").load(str(floor))
    )
    bench.compare(reads, at_least=SHORT_READ_ROUNDS)
    schemas: dict[str, str] = {}
    infer = inferrer(bench, OURS, bench.out / "wide1000-ours", schemas)
    bench.time("wide-1000 inference", OURS, infer)
    return schemas["ours"]


def measure_image(bench: Bench, data: DataFrame) -> None:
    """Write (from the cache) and full read, by us and by Parquet, each reading its own files."""
    formats = [OURS, "parquet"]
    bench.compare(
        {
            ("image write", fmt): writer(data, fmt, bench.out / f"image-{short(fmt)}")
            for fmt in formats
        }
    )
    bench.compare(
        {
            ("image full read", fmt): reader(
                bench, fmt, IMAGE_DDL, bench.out / f"image-{short(fmt)}"
            )
            for fmt in formats
        },
        at_least=SHORT_READ_ROUNDS,
    )


def machine_scaling(path: Path) -> tuple[float, str]:
    """The speed-up two cores give to two independent CPU-bound processes (``sha256sum`` of the
    single file): the ceiling for any 2-core speed-up measured here, and how it was measured.
    Also leaves the file in the page cache for the sessions that read it next."""
    (file,) = [str(f) for f in data_files(path)]

    def wall(processes: int) -> float:
        start = time.perf_counter()
        running = [
            subprocess.Popen(["sha256sum", file], stdout=subprocess.DEVNULL)
            for _ in range(processes)
        ]
        for process in running:
            process.wait()
        return time.perf_counter() - start

    wall(1)  # reads the file into the page cache
    one, two = wall(1), wall(2)
    return 2 * one / two, f"sha256sum: 1 process {one:.2f} s, 2 at once {two:.2f} s"


def contention(bench: Bench) -> dict[str, str]:
    """How much the timed runs shared the machine, and how much of them was GC."""
    total = Usage(*(sum(col) for col in zip(*(astuple(u) for u in bench.spent.values()))))
    (what, fmt), worst = max(bench.spent.items(), key=lambda item: item[1].others)
    return {
        "other processes during timed runs (cores)": (
            f"{total.others:.2f} on average, at most {worst.others:.2f} ({what}, {fmt})"
        ),
        "JVM GC during timed runs": f"{total.gc:.1f} s of {total.wall:.0f} s",
    }


# Narrow files (of 8) that toPandas() reads, by us and by Parquet.
TOPANDAS_FILES = 2


def measure_topandas(bench: Bench) -> tuple[int, int]:
    """``toPandas()`` with Arrow on of the first ``TOPANDAS_FILES`` narrow files, ours and
    Parquet's taking turns; checks that both give the same rows. Returns (rows, sum of ids)."""
    paths = {
        fmt: [
            str(f)
            for f in data_files(bench.out / f"narrow-{short(fmt)}")
            if f.suffix in (".tfrecord", ".parquet")
        ][:TOPANDAS_FILES]
        for fmt in (OURS, "parquet")
    }
    got: dict[str, tuple[int, int]] = {}

    def to_pandas(fmt: str) -> Callable[[], object]:
        def run() -> None:
            frame = bench.spark.read.format(fmt).schema(NARROW_DDL).load(paths[fmt]).toPandas()
            got[short(fmt)] = (len(frame), int(frame["id"].sum()))

        return run

    arrow = "spark.sql.execution.arrow.pyspark"
    with (
        conf(bench.spark, f"{arrow}.enabled", "true"),
        conf(bench.spark, f"{arrow}.fallback.enabled", "false"),
    ):
        bench.compare({("toPandas", fmt): to_pandas(fmt) for fmt in paths})
    check(
        got["ours"] == got["parquet"] and got["ours"][0] > 0,
        f"toPandas() of {TOPANDAS_FILES} narrow files: {got['ours'][0]} rows, ids summing to"
        f" {got['ours'][1]}, as Parquet's",
    )
    return got["ours"]


def facts(spark: SparkSession, args: argparse.Namespace) -> dict[str, str]:
    import pyspark

    meminfo = Path("/proc/meminfo").read_text().splitlines()
    mem_kb = next(int(x.split()[1]) for x in meminfo if x.startswith("MemTotal:"))
    cpu = next(
        (x.split(":", 1)[1].strip() for x in Path("/proc/cpuinfo").read_text().splitlines()
         if x.startswith("model name")),
        platform.processor(),
    )  # fmt: skip
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    jar = args.ours_jar
    mtime = dt.datetime.fromtimestamp(Path(jar).stat().st_mtime, dt.timezone.utc)
    built = mtime.strftime("%Y-%m-%d %H:%M UTC")
    if args.skip_linkedin:
        linkedin = "skipped (--skip-linkedin)"
    elif args.linkedin_jar:
        linkedin = f"`{Path(args.linkedin_jar).name}` (sha256 {sha256(args.linkedin_jar)})"
        linkedin += ", a local jar passed with --linkedin-jar"
    else:
        linkedin = f"`{LINKEDIN_PACKAGE}` from Maven Central (spark.jars.packages)"
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cores (nproc)": subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip(),
        "CPU": cpu,
        "memory (MemTotal)": f"{mem_kb / 1024 / 1024:.1f} GiB",
        "Java": java.strip().splitlines()[0] if java.strip() else "unknown",
        "Python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "Spark master": str(spark.sparkContext.master),
        "driver memory": args.driver_memory,
        "ours jar": f"`{Path(jar).name}`, built {built}",
        "ours jar sha256": sha256(jar),
        "linkedin": linkedin,
        "narrow rows": f"{args.rows:,}",
        "wide rows": f"{args.wide_rows:,}",
        "wide-1000 rows": f"{args.wide1000_rows:,}",
        "image-sized rows": f"{args.image_rows:,}",
        "repeat (median of)": str(args.repeat),
        "load average at start (1, 5, 15 min)": load_average(),
    }


def load_average() -> str:
    """Other work on the machine skews every figure: the 1, 5 and 15 minute load averages."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])
