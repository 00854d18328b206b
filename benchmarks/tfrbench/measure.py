"""The measurements in the main session (``local[2]``), and what their runs come to: the lines
of the results table, the rates against the floor, and how much the machine was shared."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import astuple
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .checks import check
from .data import (
    IMAGE_BYTES,
    IMAGE_DDL,
    INFER_FILES,
    NARROW_DDL,
    SINGLE_COPIES,
    WIDE1000_DDL,
    WIDE1000_SELECTED,
    conf,
    data_files,
    narrow,
)
from .sessions import OURS, jvm, noop, short
from .splitting import EQUAL_SPLITS
from .timing import Bench, Row, Usage

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


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
    api = jvm(bench.spark).io.github.sparktfrecord.TFRecordInspector
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
    bench.compare(reads)
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
        }
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


# The two ways the single file is split.
LAYOUTS = ("default splits", f"{EQUAL_SPLITS} equal splits")


def two_cores(bench: Bench, layout: str) -> Row:
    """The single file read with 2 cores against 1: the 2-core speed-up."""
    one = bench.runs[(f"one file, {layout}", "local[1]")]
    two = bench.runs[(f"one file, {layout}", "local[2]")]
    name = f"full read, 1 file, {layout}, local[2]"
    return Row(name, statistics.median(two), "local[1]", statistics.median(one), two, one)


def table_rows(bench: Bench, rows: int, ray_records: int) -> list[Row]:
    """The lines of the results table, of what was measured; the Ray Data line's time is its
    time on ``ray_records`` records scaled to the ``rows`` of the narrow data set."""
    from .goals import TFX_LABEL

    measured = {fmt for _, fmt in bench.runs}
    narrow = "full read, narrow"
    lines = [
        bench.row("write, narrow", "write", "parquet"),
        bench.row(narrow, "full read", "parquet"),
        bench.row(f"{narrow}, local[1]", "full read, local[1]", "parquet"),
    ]
    if "tfx-bsl" in measured:
        one = bench.runs[("full read, local[1]", "ours")]
        decode = bench.runs[("decode", "tfx-bsl")]
        lines.append(
            Row(
                f"{narrow}, local[1]",
                statistics.median(one),
                TFX_LABEL,
                statistics.median(decode),
                one,
                decode,
            )
        )
    if "tf.data" in measured:
        lines.append(bench.row(narrow, "full read", "tf.data"))
    if "ray" in measured:
        ours = bench.runs[("full read", "ours")]
        scaled = [t * rows / ray_records for t in bench.runs[("read", "ray")]]
        lines.append(
            Row(narrow, statistics.median(ours), RAY_LABEL, statistics.median(scaled), ours, scaled)
        )
    if "linkedin" in measured:
        lines += [
            bench.row("write, narrow", "write", "linkedin"),
            bench.row(narrow, "full read", "linkedin"),
            bench.row("count(), narrow", "count", "linkedin"),
            bench.row("read 1 of 100 columns, wide", "wide", "linkedin"),
            bench.row(f"schema inference, {INFER_FILES} files", "inference", "linkedin"),
        ]
    lines.append(bench.row(f"toPandas(), narrow, {TOPANDAS_FILES} files", "toPandas", "parquet"))
    full = bench.runs[("wide-1000 full read", "ours")]
    some = bench.runs[("wide-1000 10 columns", "ours")]
    lines += [
        bench.row("write, wide-1000", "wide-1000 write", "parquet"),
        bench.row("full read, wide-1000", "wide-1000 full read", "parquet"),
        bench.row("read 10 of 1000 columns, wide-1000", "wide-1000 10 columns", "parquet"),
        Row(
            "read 10 of 1000 columns, wide-1000",
            statistics.median(some),
            "ours, all 1000",
            statistics.median(full),
            some,
            full,
        ),
        bench.row("write, image-sized", "image write", "parquet"),
        bench.row("full read, image-sized", "image full read", "parquet"),
    ]
    return lines + [two_cores(bench, layout) for layout in LAYOUTS]


# The label of the Ray Data line of the results, whose time is scaled from a subset.
RAY_LABEL = "Ray Data, 2 CPUs (scaled)"
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


def records(per_second: float) -> str:
    """Records per second, in millions unless that rounds to nothing (small test runs)."""
    if per_second >= 1e5:
        return f"{per_second / 1e6:.2f} M records/s"
    return f"{per_second / 1e3:.1f} k records/s"


def throughput(
    bench: Bench,
    sizes: dict[str, int],
    scaling: str,
    args: argparse.Namespace,
    counts: dict[str, int],
) -> dict[str, str]:
    """Records and bytes per second of our reads (and of linkedin, the peers and tf.data),
    against the floor; the 2-core speed-ups beside the machine's own; image bytes per second;
    the nested reads. ``counts`` holds the records of the Ray Data subset (``ray``) and the rows
    of toPandas() (``toPandas``)."""

    def rate(what: str, fmt: str, rows: int = args.rows, nbytes: int = sizes["narrow-ours"]) -> str:
        seconds = bench.median(what, fmt)
        mb = f", {nbytes / seconds / 1e6:.0f} MB/s" if nbytes else ""
        return f"{seconds:.2f} s: {records(rows / seconds)}{mb}"

    def images(what: str, fmt: str) -> str:
        seconds = bench.median(what, fmt)
        return f"{seconds:.2f} s: {args.image_rows * IMAGE_BYTES / seconds / 1e6:.0f} MB/s"

    floor = args.rows / bench.median("floor", "ours")
    per_core = args.rows / bench.median("full read", "ours") / 2
    one_core = args.rows / bench.median("full read, local[1]", "ours")
    rates = {
        "countRecords, 1 thread (the floor)": rate("floor", "ours"),
        "count(), local[2]": rate("count", "ours"),
        "full read, local[2]": rate("full read", "ours"),
        "full read, narrow, per core / floor": (
            f"{per_core / floor:.0%} ({records(per_core)} per core, the floor {records(floor)})"
        ),
        "full read, narrow, local[1]": rate("full read, local[1]", "ours"),
        "full read, narrow, local[1], per core / floor": (
            f"{one_core / floor:.0%} ({records(one_core)}, the floor {records(floor)})"
        ),
        "Parquet: full read, narrow, local[2]": rate("full read", "parquet"),
        "Parquet: full read, narrow, local[1]": rate("full read, local[1]", "parquet"),
        **{
            f"full read, 1 file, {layout}, local[{cores}]": rate(
                f"one file, {layout}",
                f"local[{cores}]",
                args.rows * SINGLE_COPIES,
                sizes["single-ours"],
            )
            for layout in LAYOUTS
            for cores in (1, 2)
        },
        **{
            f"full read, 1 file, {layout}, 2 cores / 1": f"{two_cores(bench, layout).ratio:.2f}x"
            for layout in LAYOUTS
        },
        "2-core scaling of the machine (the ceiling)": scaling,
        "read 1 of 100 columns, wide, local[2]": rate(
            "wide", "ours", args.wide_rows, sizes["wide-ours"]
        ),
        f"schema inference, {INFER_FILES} files": f"{bench.median('inference', 'ours'):.3f} s",
        "full read, wide-1000, local[2]": rate(
            "wide-1000 full read", "ours", args.wide1000_rows, sizes["wide1000-ours"]
        ),
        "read 10 of 1000 columns, wide-1000, local[2]": rate(
            "wide-1000 10 columns", "ours", args.wide1000_rows, sizes["wide1000-ours"]
        ),
        "wide-1000: the cache alone to noop (part of both writes)": (
            f"{bench.median('wide-1000 cache read', 'noop'):.2f} s"
        ),
        "schema inference, wide-1000 (1000 columns)": (
            f"{bench.median('wide-1000 inference', 'ours'):.3f} s"
        ),
        "write, image-sized, local[2]": images("image write", "ours"),
        "full read, image-sized, local[2]": images("image full read", "ours"),
        "Parquet: write, image-sized": images("image write", "parquet"),
        "Parquet: full read, image-sized": images("image full read", "parquet"),
    }
    pandas = counts["toPandas"]
    for fmt in ("ours", "parquet"):
        label = "toPandas(), Arrow on" if fmt == "ours" else "Parquet: toPandas(), Arrow on"
        rates[f"{label}, {TOPANDAS_FILES} narrow files"] = rate("toPandas", fmt, pandas, 0)
    measured = {fmt for _, fmt in bench.runs}
    if "tfx-bsl" in measured:
        rates["tfx-bsl decoder, narrow, 1 thread (decoding only)"] = rate("decode", "tfx-bsl")
    if "ray" in measured:
        rates[f"Ray Data read_tfrecords, {counts['ray']:,} narrow records, 2 CPUs"] = rate(
            "read", "ray", counts["ray"], 0
        )
    if "tf.data" in measured:
        rates["tf.data + parse_example, narrow, 2 threads"] = rate("full read", "tf.data")
    for what, fmt in bench.runs:
        if what.startswith("nested ") and fmt == "nested":
            nested, flat = bench.median(what, "nested"), bench.median(what, "flat")
            rates[f"nested, {what[len('nested ') :]}: flat / nested"] = (
                f"{flat / nested:.2f}x (nested {nested:.3f} s, flat {flat:.3f} s)"
            )
    if "linkedin" in measured:
        rates["linkedin: count(), local[2]"] = rate("count", "linkedin")
        rates["linkedin: full read, local[2]"] = rate("full read", "linkedin")
        rates["linkedin: read 1 of 100 columns, wide"] = rate(
            "wide", "linkedin", args.wide_rows, sizes["wide-ours"]
        )
    return rates
