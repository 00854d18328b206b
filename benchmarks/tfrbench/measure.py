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
from .data import INFER_FILES, NARROW_DDL, SINGLE_COPIES, data_files, narrow
from .sessions import jvm, noop, short
from .splitting import EQUAL_SPLITS
from .timing import Bench, Row, Usage

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def writer(df: DataFrame, fmt: str, path: Path) -> Callable[[], object]:
    return lambda: df.write.format(fmt).mode("overwrite").save(str(path))


def reader(
    bench: Bench, fmt: str, ddl: str, path: Path, column: str | None = None
) -> Callable[[], object]:
    if column is None:
        return lambda: noop(bench.read(fmt, ddl, path))
    return lambda: noop(bench.read(fmt, ddl, path).select(column))


def warm_up(bench: Bench, formats: Sequence[str]) -> None:
    """One small write, read and count per format, so the first timed run is not JIT start-up."""
    small = narrow(bench.spark, 20000, 2)
    for fmt in formats:
        path = bench.out / "warmup" / short(fmt)
        writer(small, fmt, path)()
        reader(bench, fmt, NARROW_DDL, path)()
        bench.read(fmt, NARROW_DDL, path).count()


def measure_narrow(bench: Bench, data: DataFrame, formats: Sequence[str]) -> dict[str, int]:
    """Write, full read and count(); both TFRecord readers read the files we wrote."""
    for fmt in formats:
        bench.time("write", fmt, writer(data, fmt, bench.out / f"narrow-{short(fmt)}"), warm=False)
    ours = bench.out / "narrow-ours"
    for fmt in formats:
        path = bench.out / "narrow-parquet" if fmt == "parquet" else ours
        bench.time("full read", fmt, reader(bench, fmt, NARROW_DDL, path))
    counts: dict[str, int] = {}
    for fmt in formats:
        if fmt != "parquet":
            bench.time("count", fmt, counter(bench, fmt, ours, counts))
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


def machine_scaling(path: Path) -> str:
    """The speed-up two cores give to two independent CPU-bound processes (``sha256sum`` of the
    single file): the ceiling for any 2-core speed-up measured here. Also leaves the file in the
    page cache for the sessions that read it next."""
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
    return f"{2 * one / two:.2f}x (sha256sum: 1 process {one:.2f} s, 2 at once {two:.2f} s)"


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


def table_rows(bench: Bench, linkedin: bool) -> list[Row]:
    rows = [
        bench.row("write, narrow", "write", "parquet"),
        bench.row("full read, narrow", "full read", "parquet"),
    ]
    if linkedin:
        rows += [
            bench.row("write, narrow", "write", "linkedin"),
            bench.row("full read, narrow", "full read", "linkedin"),
            bench.row("count(), narrow", "count", "linkedin"),
            bench.row("read 1 of 100 columns, wide", "wide", "linkedin"),
            bench.row(f"schema inference, {INFER_FILES} files", "inference", "linkedin"),
        ]
    for layout in ("default splits", f"{EQUAL_SPLITS} equal splits"):
        one = bench.runs[(f"one file, {layout}", "local[1]")]
        two = bench.runs[(f"one file, {layout}", "local[2]")]
        name = f"full read, 1 file, {layout}, local[2]"
        rows.append(Row(name, statistics.median(two), "local[1]", statistics.median(one), two, one))
    return rows


def throughput(bench: Bench, sizes: dict[str, int], args: argparse.Namespace) -> dict[str, str]:
    """Records and bytes per second of our reads (and linkedin's), against the floor."""

    def rate(what: str, fmt: str, rows: int = args.rows, nbytes: int = sizes["narrow-ours"]) -> str:
        seconds = bench.median(what, fmt)
        per_s = f"{rows / seconds / 1e6:.2f} M records/s, {nbytes / seconds / 1e6:.0f} MB/s"
        return f"{seconds:.2f} s: {per_s}"

    rates = {
        "countRecords, 1 thread (the floor)": rate("floor", "ours"),
        "count(), local[2]": rate("count", "ours"),
        "full read, local[2]": rate("full read", "ours"),
        **{
            f"full read, 1 file, {layout}, local[{cores}]": rate(
                f"one file, {layout}",
                f"local[{cores}]",
                args.rows * SINGLE_COPIES,
                sizes["single-ours"],
            )
            for layout in ("default splits", f"{EQUAL_SPLITS} equal splits")
            for cores in (1, 2)
        },
        "read 1 of 100 columns, wide, local[2]": rate(
            "wide", "ours", args.wide_rows, sizes["wide-ours"]
        ),
        f"schema inference, {INFER_FILES} files": f"{bench.median('inference', 'ours'):.2f} s",
    }
    if not args.skip_linkedin:
        rates["linkedin: count(), local[2]"] = rate("count", "linkedin")
        rates["linkedin: full read, local[2]"] = rate("full read", "linkedin")
        rates["linkedin: read 1 of 100 columns, wide"] = rate(
            "wide", "linkedin", args.wide_rows, sizes["wide-ours"]
        )
    return rates
