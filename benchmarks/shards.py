"""What balanced shards (``num_shards``) and shuffled ones (``shuffle_seed``) cost against a
plain TFRecord write.

    python benchmarks/shards.py [--rows 1000000] [--image-rows 20000] [--shards 4] [--repeat 5]

The same cached DataFrame (8 partitions, one holding half the rows) is written four ways:
``df.write.format("tfrecord")`` (plain: one file per partition), ``df.repartition(N)`` then a
plain write (N files, Spark's round-robin: what ``write`` did before, counts not balanced),
``spark_tfrecord.write(df, num_shards=N)`` (a counting job, then a shuffle: counts within one)
and the same with ``shuffle_seed`` (a counting job, a window's shuffle and sort, then the
shuffle). They are interleaved in a rotating order, each output deleted once timed, and each
figure is the median of ``--repeat`` runs after a warm-up. The table gives the seconds, the
ratios to the plain write and the spread of the N files' record counts (largest - smallest,
from the write's manifest); every write is checked against its rows.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tfrbench.data import ROOT
from tfrbench.timing import interleaved


def main() -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/shards.py", description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--image-rows", type=int, default=20_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=str(ROOT / ".cache" / "bench-shards"))
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    import pyspark

    from spark_tfrecord.testing import local_session

    spark = local_session(
        app_name="bench-shards",
        conf={"spark.driver.memory": "6g", "spark.ui.showConsoleProgress": "false"},
    )
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)

    def skewed(rows: int) -> Any:
        """Rows 0..rows-1 in 8 partitions, the first holding half of them."""
        half = rows // 2
        return spark.range(0, half, 1, 1).union(spark.range(half, rows, 1, 7))

    shapes = {
        "narrow": lambda: skewed(args.rows).selectExpr(
            "id",
            "id % 10 as label",
            "transform(sequence(1, 32), i -> cast(i * id % 1000 as float) / 7) as x",
            "concat('row-', cast(id as string)) as name",
        ),
        "image-sized": lambda: skewed(args.image_rows).selectExpr(
            "id", "id % 1000 as label", "unhex(repeat(lpad(hex(id), 16, '0'), 6400)) as image"
        ),
    }
    n = args.shards
    print(f"Spark {pyspark.__version__}, local[2]; median of {args.repeat} after a warm-up; "
          f"{n} shards from 8 partitions (one holding half the rows)")  # fmt: skip
    print(
        "| shape | rows | plain (s) | repartition(N) (s) | /plain | spread "
        "| num_shards (s) | /plain | spread | + shuffle_seed (s) | /plain | spread |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for shape, make in shapes.items():
        df = make().cache()
        rows = df.count()
        med, spread = measure(df, rows, n, out / shape, args.repeat)
        plain = med["plain"]
        cells = [f"{shape} | {rows:,} | {plain:.3f}"]
        for way in ("repartition", "balanced", "shuffled"):
            cells.append(f"{med[way]:.3f} | {med[way] / plain:.2f} | {spread[way]}")
        print("| " + " | ".join(cells) + " |")
        df.unpersist()
        shutil.rmtree(out / shape, ignore_errors=True)
    spark.stop()
    return 0


def measure(
    df: Any, rows: int, n: int, out: Path, repeat: int
) -> tuple[dict[str, float], dict[str, int]]:
    """The median seconds of each way to write ``df``, interleaved after a warm-up of each, and
    the spread of each N-file way's record counts."""
    import spark_tfrecord

    spread: dict[str, int] = {}

    def counted(way: str, folder: Path, files: int | None) -> None:
        spread[way] = check(folder, rows, files)

    def plain() -> None:
        df.write.format("tfrecord").save(str(out / "plain"))
        counted("plain", out / "plain", None)

    def repartition() -> None:
        df.repartition(n).write.format("tfrecord").save(str(out / "repartition"))
        counted("repartition", out / "repartition", n)

    def balanced() -> None:
        spark_tfrecord.write(df, str(out / "balanced"), num_shards=n)
        counted("balanced", out / "balanced", n)

    def shuffled() -> None:
        spark_tfrecord.write(df, str(out / "shuffled"), num_shards=n, shuffle_seed=7)
        counted("shuffled", out / "shuffled", n)

    actions: dict[str, Callable[[], None]] = {
        "plain": plain, "repartition": repartition, "balanced": balanced, "shuffled": shuffled,
    }  # fmt: skip
    # In a rotating order; each output deleted once timed, so that no write pays for flushing
    # an earlier one's pages to disk.
    runs, _ = interleaved(
        None, repeat, actions, warmup=1, rotate=True, after=lambda: shutil.rmtree(out, True)
    )
    return {name: statistics.median(times) for name, times in runs.items()}, spread


def check(folder: Path, rows: int, files: int | None) -> int:
    """The spread of the write's file record counts (its manifest), after checking the total
    and, when given, the number of files."""
    with open(folder / "_tfrecord_manifest.json") as f:
        counts = [int(e["num_records"]) for e in json.load(f)["files"]]
    if sum(counts) != rows or (files is not None and len(counts) != files):
        raise SystemExit(f"{folder}: {len(counts)} files of {sum(counts)} records, not {rows}")
    return max(counts) - min(counts)


if __name__ == "__main__":
    sys.exit(main())
