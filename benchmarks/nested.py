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
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tfrbench.child import emit
from tfrbench.data import FLAT_EXPRS, NESTED_DDL, ROOT, nested
from tfrbench.sessions import package_session
from tfrbench.timing import interleaved

# What is measured: (nested columns, flat columns) read, None for the write and count().
MEASUREMENTS: dict[str, tuple[str, ...] | None] = {
    "write": None,
    "full read": (),
    "image.height": ("image.height", "`image/height`"),
    "objects.label": ("objects.label", "`objects/label`"),
    "count()": None,
}


def main() -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/nested.py", description=__doc__)
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / ".cache" / "bench-nested"))
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    spark = package_session("6g")
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    frames = {"nested": nested(spark, args.rows).cache()}
    frames["flat"] = frames["nested"].selectExpr(*FLAT_EXPRS).cache()
    ddl = {"nested": NESTED_DDL}
    ddl["flat"] = ", ".join(
        f"`{f.name}` {f.dataType.simpleString()}" for f in frames["flat"].schema.fields
    )
    print(f"{frames['nested'].count():,} rows, {frames['flat'].count():,} flat", flush=True)

    def action(what: str, name: str) -> Callable[[], object]:
        if what == "write":
            df: Any = frames[name]
            return lambda: df.write.format("tfrecord").mode("overwrite").save(str(out / name))
        loaded = spark.read.format("tfrecord").schema(ddl[name]).load(str(out / name))
        if what == "count()":
            return loaded.count
        columns = MEASUREMENTS[what] or ()
        chosen = loaded.select(columns[name == "flat"]) if columns else loaded
        return lambda: chosen.write.format("noop").mode("overwrite").save()

    medians: dict[str, tuple[float, float]] = {}
    for what in MEASUREMENTS:
        actions = {name: action(what, name) for name in ("nested", "flat")}
        runs, _ = interleaved(None, args.repeat, actions, warmup=1)
        medians[what] = (statistics.median(runs["nested"]), statistics.median(runs["flat"]))
        if what == "write":
            one, other = (sorted((out / n).glob("part-*")) for n in ("nested", "flat"))
            if len(one) != len(other) or not all(
                filecmp.cmp(a, b, shallow=False) for a, b in zip(one, other)
            ):
                raise SystemExit("the nested and the flat write differ")
    print(f"\nSpark {spark.version}, local[2], {args.rows:,} rows; nested and flat files the same")
    print("| measurement | nested (s) | flat (s) | nested/flat |\n|---|---:|---:|---:|")
    for what, (n, f) in medians.items():
        print(f"| {what} | {n:.3f} | {f:.3f} | {n / f:.2f} |")
    emit(medians)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
