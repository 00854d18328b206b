"""What writing a TensorFlow Datasets dataset costs against a plain TFRecord write.

    python benchmarks/tfds.py [--rows 1000000] [--image-rows 20000] [--repeat 5]

The same cached DataFrame is written three ways: ``df.write.format("tfrecord")`` (plain),
``spark_tfrecord.write_tfds`` without ``num_shards`` (shards from the data's size; the counts
and ``dataset_info.json`` at job commit), and ``write_tfds`` with ``num_shards`` equal to the
DataFrame's partitions (a repartition, as a user asking for N shards gets). They are
interleaved in a rotating order, each output deleted once timed, and each figure is the median
of ``--repeat`` runs after a warm-up. Two shapes: narrow rows (an id, a label, 32 floats, a
short string) and image-sized ones (about 50 KB of bytes each), each in 2 partitions (the cores:
``write_tfds`` then writes as many files as the plain write, so the ratio is the cost of its
counts, renames and metadata) and in 8 (``write_tfds`` merges partitions into fewer shards while
they would be under 64 MiB, down to the cores). The table gives the seconds and the ratios;
every TFDS write is checked against its rows (``shardLengths``).
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
    parser = argparse.ArgumentParser(prog="benchmarks/tfds.py", description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--image-rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=str(ROOT / ".cache" / "bench-tfds"))
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    import pyspark

    from spark_tfrecord.testing import local_session

    spark = local_session(
        app_name="bench-tfds",
        conf={"spark.driver.memory": "6g", "spark.ui.showConsoleProgress": "false"},
    )
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)

    shapes = {
        "narrow": lambda partitions: spark.range(0, args.rows, 1, partitions).selectExpr(
            "id",
            "id % 10 as label",
            "transform(sequence(1, 32), i -> cast(i * id % 1000 as float) / 7) as x",
            "concat('row-', cast(id as string)) as name",
        ),
        "image-sized": lambda partitions: spark.range(0, args.image_rows, 1, partitions).selectExpr(
            "id", "id % 1000 as label", "unhex(repeat(lpad(hex(id), 16, '0'), 6400)) as image"
        ),
    }
    print(f"Spark {pyspark.__version__}, local[2]; median of {args.repeat} after a warm-up")
    print(
        "| shape | rows | partitions | plain (s) | write_tfds (s) | tfds/plain "
        "| num_shards=partitions (s) | /plain |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for shape, make in shapes.items():
        for partitions in (2, 8):
            df = make(partitions).cache()
            rows = df.count()
            med = measure(df, rows, out / shape, args.repeat)
            print(
                f"| {shape} | {rows:,} | {partitions} | {med['plain']:.3f} | {med['tfds']:.3f} | "
                f"{med['tfds'] / med['plain']:.2f} | {med['sharded']:.3f} | "
                f"{med['sharded'] / med['plain']:.2f} |"
            )
            df.unpersist()
            shutil.rmtree(out / shape, ignore_errors=True)
    spark.stop()
    return 0


def measure(df: Any, rows: int, out: Path, repeat: int) -> dict[str, float]:
    """The median seconds of each way to write ``df``, interleaved, after a warm-up of each."""
    import spark_tfrecord

    partitions = df.rdd.getNumPartitions()

    def plain() -> None:
        df.write.format("tfrecord").save(str(out / "plain"))

    def tfds() -> None:
        check(spark_tfrecord.write_tfds(df, str(out), "tfds", "train"), rows)

    def sharded() -> None:
        check(
            spark_tfrecord.write_tfds(df, str(out), "sharded", "train", num_shards=partitions), rows
        )

    actions: dict[str, Callable[[], None]] = {"plain": plain, "tfds": tfds, "sharded": sharded}
    # In a rotating order; each output deleted once timed, so that no write pays for flushing
    # an earlier one's pages to disk.
    runs, _ = interleaved(
        None, repeat, actions, warmup=1, rotate=True, after=lambda: shutil.rmtree(out, True)
    )
    return {name: statistics.median(times) for name, times in runs.items()}


def check(folder: str, rows: int) -> None:
    with open(os.path.join(folder, "dataset_info.json")) as f:
        info: dict[str, Any] = json.load(f)
    written = sum(int(n) for n in info["splits"][0]["shardLengths"])
    if written != rows:
        raise SystemExit(f"{folder}: shardLengths sum to {written}, not {rows}")


if __name__ == "__main__":
    sys.exit(main())
