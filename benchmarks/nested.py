"""What nesting costs: a nested DataFrame against the same features as flat columns.

    python benchmarks/nested.py [--rows 500000] [--repeat 3]

The nested data is Object-Detection-like: ``image struct<height, width, encoded (256 random
bytes)>`` and ``objects array<struct<xmin, ymin, xmax, ymax float, label bigint>>`` (0 to 7
per row). The flat DataFrame holds the same features as columns named by their paths
(``image/height``, ``objects/xmin array<float>``, ...). Both are cached, then written with the
installed package's jar (``configure()``: the nested pruning extension on); the files must be
byte for byte the same. Each measurement is the median of ``--repeat`` runs after a warm-up,
nested and flat taking turns in each round, and the table gives nested/flat: the write, a full
read, one struct field (``image.height`` against ``image/height``), one field of the array of
structs (``objects.label`` against ``objects/label``), and ``count()``.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent

NESTED = (
    "id bigint, image struct<height:bigint,width:bigint,encoded:binary>, "
    "objects array<struct<xmin:float,ymin:float,xmax:float,ymax:float,label:bigint>>"
)
FLAT_EXPRS = [
    "id",
    "image.height as `image/height`",
    "image.width as `image/width`",
    "image.encoded as `image/encoded`",
    *[f"objects.{f} as `objects/{f}`" for f in ("xmin", "ymin", "xmax", "ymax", "label")],
]


def timed(
    repeat: int, nested: Callable[[], object], flat: Callable[[], object]
) -> tuple[float, float]:
    """The median seconds of ``nested`` and of ``flat``: one untimed run of each, then
    ``repeat`` rounds of one run of each in turn."""
    nested()
    flat()
    runs: list[list[float]] = [[], []]
    for _ in range(repeat):
        for runs_of, action in zip(runs, (nested, flat)):
            started = time.perf_counter()
            action()
            runs_of.append(time.perf_counter() - started)
    return statistics.median(runs[0]), statistics.median(runs[1])


def main() -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/nested.py", description=__doc__)
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / ".cache" / "bench-nested"))
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    from pyspark.sql import SparkSession

    import spark_tfrecord

    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", "6g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
    )
    spark = spark_tfrecord.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)

    nested = (
        spark.range(0, args.rows, 1, 8)
        .selectExpr(
            "id",
            "named_struct('height', 200 + id % 400, 'width', 300 + id % 500, "
            "'encoded', unhex(sha2(cast(id as string), 256) || repeat('ab', 224))) as image",
            "slice(transform(sequence(0, 6), i -> named_struct("
            "'xmin', cast(i / 10.0 as float), 'ymin', cast(id % 97 / 100.0 as float), "
            "'xmax', cast(i / 10.0 + 0.05 as float), 'ymax', cast(0.99 as float), "
            "'label', id % 90 + i)), 1, cast(id % 8 as int)) as objects",
        )
        .cache()
    )
    flat = nested.selectExpr(*FLAT_EXPRS).cache()
    print(f"{nested.count():,} rows, {flat.count():,} flat", flush=True)

    def write(df: object, name: str) -> Callable[[], object]:
        return lambda: df.write.format("tfrecord").mode("overwrite").save(str(out / name))  # type: ignore[attr-defined]

    def read(name: str, ddl: str, *columns: str) -> Callable[[], object]:
        def run() -> None:
            df = spark.read.format("tfrecord").schema(ddl).load(str(out / name))
            (df.select(*columns) if columns else df).write.format("noop").mode("overwrite").save()

        return run

    flat_ddl = ", ".join(f"`{f.name}` {f.dataType.simpleString()}" for f in flat.schema.fields)
    results: list[tuple[str, float, float]] = []
    results.append(("write", *timed(args.repeat, write(nested, "nested"), write(flat, "flat"))))
    one = sorted(p for p in (out / "nested").glob("part-*"))
    other = sorted(p for p in (out / "flat").glob("part-*"))
    same = len(one) == len(other) and all(
        filecmp.cmp(a, b, shallow=False) for a, b in zip(one, other)
    )
    if not same:
        raise SystemExit("the nested and the flat write differ")
    for label, nested_cols, flat_cols in (
        ("full read", (), ()),
        ("image.height", ("image.height",), ("`image/height`",)),
        ("objects.label", ("objects.label",), ("`objects/label`",)),
    ):
        nested_read = read("nested", NESTED, *nested_cols)
        results.append(
            (label, *timed(args.repeat, nested_read, read("flat", flat_ddl, *flat_cols)))
        )

    def count(name: str, ddl: str) -> Callable[[], object]:
        return lambda: spark.read.format("tfrecord").schema(ddl).load(str(out / name)).count()

    results.append(
        ("count()", *timed(args.repeat, count("nested", NESTED), count("flat", flat_ddl)))
    )
    print(f"\nSpark {spark.version}, local[2], {args.rows:,} rows, files byte-identical: {same}")
    print("| measurement | nested (s) | flat (s) | nested/flat |\n|---|---:|---:|---:|")
    for label, n, f in results:
        print(f"| {label} | {n:.3f} | {f:.3f} | {n / f:.2f} |")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
