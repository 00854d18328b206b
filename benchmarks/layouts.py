"""What the sparse and ragged layouts cost (issue 32, "Measured"): against Parquet, one run.

    python benchmarks/layouts.py [--rows 1000000] [--ragged-rows 12000000] [--repeat 3]

1. Sparse vectors. ``--rows`` rows of ``id`` and ``tf``, ``HashingTF(numFeatures=2**20)``
   over 50 tokens a row drawn from a vocabulary of a million (so about 50 distinct tokens, and
   about 50 non-zeros, per row; every token a hash of the row id and a fixed seed), cached. Written
   with ``vector_layout="sparse"`` (TFRecord's default codec, none; and, for information,
   gzip) and as Parquet (Spark's default codec, ``spark.sql.parquet.compression.codec``:
   snappy), by turns: bytes on disk (the ``part-*`` files) and write time; then each one's
   read of its own files, in full (the ``noop`` sink) and ``count()``, for information. The
   goal: TFRecord (default codec) within 1.5x Parquet's bytes. For scale, the first
   ``--dense-rows`` rows (1,000: about 4 GB of TFRecord) written with
   ``vector_layout="dense"`` against ``sparse``, once each; the dense files are deleted
   after, and skipped if the disk lacks room for them.
2. Ragged lists. ``--ragged-rows`` rows of ``id`` and ``x array<array<bigint>>`` (0 to 8 inner
   lists of 0 to 16 values each, empty ones included; values below a million, hashes of the
   row id and a fixed seed), written straight from the generator (too big to cache), untimed,
   as TFRecord ``Example`` records in TFDS's ragged layout (``x/ragged_flat_values``,
   ``x/ragged_row_lengths_0``) and as Parquet. Timed, by turns: each format's full read of its
   own files, ``id`` and ``x`` to the ``noop`` sink (which forces full decoding in both: our
   reader decodes every value into the rows, Parquet's vectorized reader every page of ``x``
   into its column vectors), and ``count()``. The goal: Parquet's full read time over ours at
   least 1. A jar without the ragged layout refuses the write: part 2 then says so, measures
   nothing, and the exit status is 3.

Every figure is the median of ``--repeat`` runs after one untimed round (the dense write: one
run, no warm-up), in one ``local[2]`` session with the jar of the installed package (or of
``PYTHONPATH``'s); ratios are Parquet's time over ours (above 1: we are faster) and our bytes
over Parquet's. Checked before any read is timed: each format's files read back give the
generated rows (the row count and the XOR of a hash of each row). Prints each measurement's
runs as they end (with the driver's CPU seconds a run and the cores other processes took: on a
shared machine, CPU seconds say what wall times cannot), the tables, and last the runs'
seconds and the bytes as JSON on one line.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tfrbench.child import MISSING, emit
from tfrbench.data import PARTITIONS, ROOT
from tfrbench.sessions import package_session
from tfrbench.timing import interleaved

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

NUM_FEATURES = 2**20
TOKENS = 50
VOCABULARY = 1_000_000
# Ragged rows: up to this many inner lists of up to this many values.
OUTER, INNER = 8, 16
# Part 1's writers, and their names in the tables.
SPARSE_FORMATS = {
    "tfrecord": "TFRecord sparse",
    "tfrecord gzip": "TFRecord sparse, gzip",
    "parquet": "Parquet",
}


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/layouts.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rows", type=int, default=1_000_000, help="sparse vector rows")
    parser.add_argument(
        "--dense-rows", type=int, default=1_000, help="of those, written dense (0: none)"
    )
    parser.add_argument("--ragged-rows", type=int, default=12_000_000, help="ragged rows")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each")
    parser.add_argument(
        "--part", choices=("sparse", "ragged", "both"), default="both", help="what to measure"
    )
    parser.add_argument(
        "--out",
        default=str(ROOT / ".cache" / "bench-layouts"),
        help="where the files go (emptied first, deleted after)",
    )
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    import spark_tfrecord

    spark = package_session("8g")
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    codec = spark.conf.get("spark.sql.parquet.compression.codec")
    print(
        f"Spark {spark.version}, local[2], jar {Path(spark_tfrecord.jar_path()).name}; "
        f"median of {args.repeat} after a warm-up; TFRecord uncompressed, Parquet {codec}",
        flush=True,
    )
    results: dict[str, Any] = {"spark": spark.version, "parquet codec": codec}
    status = 0
    if args.part in ("sparse", "both"):
        results["sparse"] = sparse(spark, args, out / "sparse")
    if args.part in ("ragged", "both"):
        ragged_results = ragged(spark, args, out / "ragged")
        if ragged_results is None:
            status = MISSING
        else:
            results["ragged"] = ragged_results
    emit(results)
    spark.stop()
    return status


def sparse(spark: SparkSession, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """Part 1: the sparse layout's bytes and write time against Parquet's, its reads, and the
    dense layout on the first rows."""
    from pyspark.ml.feature import HashingTF

    import spark_tfrecord

    tokens = ", ".join(
        f"concat('w', CAST(pmod(xxhash64(id, 30, {i}), {VOCABULARY}) AS STRING))"
        for i in range(TOKENS)
    )
    words = spark.range(0, args.rows, 1, PARTITIONS).selectExpr("id", f"array({tokens}) AS words")
    hashing = HashingTF(numFeatures=NUM_FEATURES, inputCol="words", outputCol="tf")
    df = hashing.transform(words).select("id", "tf").cache()
    rows = df.count()
    print(f"\n1. sparse vectors: {rows:,} rows", flush=True)

    paths = {name: out / name.replace(" ", "-") for name in SPARSE_FORMATS}
    writes: dict[str, Callable[[], object]] = {
        "tfrecord": lambda: spark_tfrecord.write(
            df, str(paths["tfrecord"]), mode="overwrite", vector_layout="sparse"
        ),
        "tfrecord gzip": lambda: spark_tfrecord.write(
            df,
            str(paths["tfrecord gzip"]),
            mode="overwrite",
            vector_layout="sparse",
            compression="gzip",
        ),
        "parquet": lambda: df.write.mode("overwrite").parquet(str(paths["parquet"])),
    }
    write_runs = turns(spark, args.repeat, writes, "write")
    size = {name: files_bytes(path) for name, path in paths.items()}
    loaded = {
        name: spark.read.format("tfrecord").schema(df.schema).load(str(path))
        for name, path in paths.items()
        if name != "parquet"
    }
    loaded["parquet"] = spark.read.parquet(str(paths["parquet"]))
    check(df, loaded, "xxhash64(id, tf)")
    # The non-zeros, read as the plain feature they are written as.
    nonzeros = (
        spark.read.format("tfrecord")
        .schema("`tf/indices` array<bigint>")
        .load(str(paths["tfrecord"]))
        .selectExpr("avg(size(`tf/indices`))")
        .first()[0]
    )
    print(f"{nonzeros:.2f} non-zeros a row", flush=True)
    full_runs = turns(spark, args.repeat, noop_reads(loaded), "full read")
    count_runs = turns(spark, args.repeat, counts(loaded), "count()")
    medians = {"write": med(write_runs), "full read": med(full_runs), "count()": med(count_runs)}
    print("| | " + " | ".join(SPARSE_FORMATS.values()) + " |\n|---|---:|---:|---:|")
    print("| bytes | " + " | ".join(f"{size[n]:,}" for n in SPARSE_FORMATS) + " |")
    print("| bytes a row | " + " | ".join(f"{size[n] / rows:.1f}" for n in SPARSE_FORMATS) + " |")
    print(
        "| bytes / Parquet's | "
        + " | ".join(f"{size[n] / size['parquet']:.2f}" for n in SPARSE_FORMATS)
        + " |"
    )
    for what, m in medians.items():
        print(f"| {what} (s) | " + " | ".join(f"{m[n]:.3f}" for n in SPARSE_FORMATS) + " |")
        print(
            f"| {what}: Parquet's time / ours | "
            + " | ".join(f"{m['parquet'] / m[n]:.2f}" for n in SPARSE_FORMATS)
            + " |"
        )
    result: dict[str, Any] = {
        "rows": rows,
        "nonzeros a row": nonzeros,
        "bytes": size,
        "runs": {"write": write_runs, "full read": full_runs, "count()": count_runs},
    }
    shutil.rmtree(out, ignore_errors=True)
    if args.dense_rows > 0:
        result["dense"] = dense(spark, df.where(f"id < {args.dense_rows}"), out / "dense")
    df.unpersist()
    return result


def dense(spark: SparkSession, first: DataFrame, out: Path) -> dict[str, Any] | None:
    """The first rows written dense and sparse, once each, for scale; the files deleted after."""
    import spark_tfrecord

    rows = first.count()
    # A dense row is 2^20 floats (4 MiB) and a few bytes of framing.
    need = rows * (NUM_FEATURES * 4 + 64)
    out.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(out).free
    if free < need + 2**31:
        print(f"\ndense: skipped, {need:,} bytes needed and {free:,} free (2 GiB kept)")
        return None
    paths = {layout: out / layout for layout in ("dense", "sparse")}
    writes = {
        layout: (
            lambda layout=layout: spark_tfrecord.write(
                first, str(paths[layout]), mode="overwrite", vector_layout=layout
            )
        )
        for layout in paths
    }
    try:
        runs, _ = interleaved(spark, 1, writes)
        size = {layout: files_bytes(path) for layout, path in paths.items()}
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print(f"\nthe first {rows:,} rows, for scale (one write each; the dense files deleted)")
    print("| | TFRecord dense | TFRecord sparse | dense/sparse |\n|---|---:|---:|---:|")
    print(
        f"| bytes | {size['dense']:,} | {size['sparse']:,} | "
        f"{size['dense'] / size['sparse']:,.0f} |"
    )
    print(
        f"| write (s) | {runs['dense'][0]:.3f} | {runs['sparse'][0]:.3f} | "
        f"{runs['dense'][0] / runs['sparse'][0]:,.1f} |"
    )
    return {"rows": rows, "bytes": size, "runs": runs}


def ragged_expr() -> str:
    """``x``: 0 to ``OUTER`` inner lists of 0 to ``INNER`` values, each value a hash of the row
    id and a fixed seed. ``transform`` (interpreted) rather than ``array`` of every value and
    ``slice`` (compiled): 128 values' code makes a method too large for the JIT to compile, 40
    times slower."""
    lengths = f"CAST(pmod(xxhash64(id, 41, j), {INNER + 1}) AS INT)"
    inner = (
        f"transform(slice(sequence(1, {INNER}), 1, {lengths}), "
        "k -> pmod(xxhash64(id, 42, j, k), 1000000))"
    )
    count = f"CAST(pmod(xxhash64(id, 40), {OUTER + 1}) AS INT)"
    return f"transform(slice(sequence(1, {OUTER}), 1, {count}), j -> {inner})"


def ragged(spark: SparkSession, args: argparse.Namespace, out: Path) -> dict[str, Any] | None:
    """Part 2: the ragged layout's full read and ``count()`` against Parquet's; None (and a
    message) if the jar refuses to write the layout."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    # Not cached (it would not fit in memory): written from the generator, checked against it.
    df = spark.range(0, args.ragged_rows, 1, PARTITIONS).selectExpr("id", f"{ragged_expr()} AS x")
    paths = {"tfrecord": out / "tfrecord", "parquet": out / "parquet"}
    print("\n2. ragged lists", flush=True)
    try:
        df.write.format("tfrecord").mode("overwrite").save(str(paths["tfrecord"]))
    except (Py4JJavaError, PySparkException) as e:
        first_line = str(e).strip().splitlines()[0]
        print(
            "part 2 not measured: this jar does not write array<array<bigint>> in Example "
            "records (the ragged layout, branch i32-ragged). It said:\n  " + first_line[:500]
        )
        shutil.rmtree(out, ignore_errors=True)
        return None
    df.write.mode("overwrite").parquet(str(paths["parquet"]))
    size = {name: files_bytes(path) for name, path in paths.items()}
    loaded = {
        "tfrecord": spark.read.format("tfrecord").schema(df.schema).load(str(paths["tfrecord"])),
        "parquet": spark.read.parquet(str(paths["parquet"])),
    }
    check(df, loaded, "xxhash64(id, x)")
    stats = (
        loaded["parquet"]
        .selectExpr("count(*) AS rows", "sum(size(x)) AS lists", "sum(size(flatten(x))) AS values")
        .first()
    )
    print(
        f"{stats['rows']:,} rows, {stats['lists']:,} inner lists, {stats['values']:,} values",
        flush=True,
    )
    full_runs = turns(spark, args.repeat, noop_reads(loaded), "full read")
    count_runs = turns(spark, args.repeat, counts(loaded), "count()")
    medians = {"full read": med(full_runs), "count()": med(count_runs)}
    print("| | TFRecord | Parquet | Parquet's / ours |\n|---|---:|---:|---:|")
    print(
        f"| bytes | {size['tfrecord']:,} | {size['parquet']:,} | "
        f"{size['tfrecord'] / size['parquet']:.2f} (ours / Parquet's) |"
    )
    for what, m in medians.items():
        goal = " (goal: at least 1)" if what == "full read" else ""
        print(
            f"| {what} (s) | {m['tfrecord']:.3f} | {m['parquet']:.3f} | "
            f"{m['parquet'] / m['tfrecord']:.2f}{goal} |"
        )
    shutil.rmtree(out, ignore_errors=True)
    return {
        "rows": stats["rows"],
        "lists": stats["lists"],
        "values": stats["values"],
        "bytes": size,
        "runs": {"full read": full_runs, "count()": count_runs},
    }


def turns(
    spark: SparkSession, repeat: int, actions: dict[str, Callable[[], object]], what: str
) -> dict[str, list[float]]:
    """The seconds of ``repeat`` runs of each action, by turns after an untimed round; logs
    each one's runs, this driver's CPU seconds a run and the cores other processes took."""
    runs, spent = interleaved(spark, repeat, actions, warmup=1)
    for name, times in runs.items():
        listed = ", ".join(f"{t:.2f}" for t in times)
        print(
            f"  {what}, {name}: {listed} s; CPU {spent[name].driver / repeat:.2f} s a run, "
            f"other processes {spent[name].others:.2f} cores",
            flush=True,
        )
    return runs


def noop_reads(loaded: dict[str, DataFrame]) -> dict[str, Callable[[], object]]:
    return {
        name: (lambda df=df: df.write.format("noop").mode("overwrite").save())
        for name, df in loaded.items()
    }


def counts(loaded: dict[str, DataFrame]) -> dict[str, Callable[[], object]]:
    return {name: df.count for name, df in loaded.items()}


def check(df: DataFrame, loaded: dict[str, DataFrame], row_hash: str) -> None:
    """Each format's files give the cached rows: their count and the XOR of a hash of each."""
    expected = df.selectExpr("count(*)", f"bit_xor({row_hash})").first()
    for name, back in loaded.items():
        got = back.selectExpr("count(*)", f"bit_xor({row_hash})").first()
        if tuple(got) != tuple(expected):
            raise SystemExit(f"{name} read back {tuple(got)}, not {tuple(expected)} (rows, hash)")


def files_bytes(path: Path) -> int:
    """Bytes of the data files Spark wrote under ``path`` (not ``_SUCCESS`` nor ``.crc``)."""
    return sum(f.stat().st_size for f in path.rglob("part-*"))


def med(runs: dict[str, list[float]]) -> dict[str, float]:
    return {name: statistics.median(times) for name, times in runs.items()}


if __name__ == "__main__":
    sys.exit(main())
