"""The data sets, written by Spark under ``--data`` (kept for the next run when their sizes
match), and what every epoch of them must give."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: Files per data set (Spark partitions), each with its index ``_<name>.idx``.
FILES = 4
#: Narrow: an id, a float label, a fixed list of 32 floats (an embedding, a feature vector) and
#: a short string (a user's name, 10 bytes: the tfrecord package's default collate stacks
#: bytes of one length only).
NARROW_DDL = "id bigint, label float, x array<float>, name string"
NARROW_SIZE = 32
#: Image-sized: an id, a float label, and 3 KB to 100 KB of random, incompressible bytes.
IMAGE_DDL = "id bigint, label float, image binary"
IMAGE_BYTES = (3_000, 100_000)
SETS = ("narrow", "image")


@dataclass(frozen=True)
class DataSet:
    """A folder written by Spark, and what one epoch of it must give: every id in
    ``range(records)`` once, and ``total`` (`batches.total` summed over the batches)."""

    name: str
    path: str
    records: int
    total: float


def narrow(spark: SparkSession, records: int) -> DataFrame:
    """Values are hashes of (id, a seed): the same rows however Spark partitions them."""
    floats = ", ".join(
        f"CAST(pmod(xxhash64(id, 20, {i}), 2000001) / 1e6 - 1.0 AS FLOAT)"
        for i in range(NARROW_SIZE)
    )
    return spark.range(0, records, 1, FILES).selectExpr(
        "id",
        "CAST(pmod(xxhash64(id, 1), 2) AS FLOAT) AS label",
        f"array({floats}) AS x",
        "concat('user-', lpad(CAST(pmod(id, 100000) AS STRING), 5, '0')) AS name",
    )


def images(spark: SparkSession, records: int) -> DataFrame:
    """Row ``i`` holds ``Random(i)``'s bytes, of a length between IMAGE_BYTES."""
    low, high = IMAGE_BYTES

    def row(i: int) -> tuple[int, float, bytes]:
        from random import Random

        r = Random(i)
        return i, float(i % 10), r.randbytes(r.randint(low, high))

    ids = spark.sparkContext.parallelize(range(records), FILES)
    return spark.createDataFrame(ids.map(row), IMAGE_DDL)


def total(df: DataFrame, name: str) -> float:
    """What `batches.total` sums to over one epoch, computed by Spark: the labels plus the
    floats and the names' lengths (narrow), or plus each image's length and first and last
    bytes (image)."""
    if name == "narrow":
        expr = "sum(label + aggregate(x, 0D, (acc, v) -> acc + v) + length(name))"
    else:
        byte = "CAST(conv(hex(substr(image, {}, 1)), 16, 10) AS INT)"
        expr = f"sum(label + length(image) + {byte.format(1)} + {byte.format(-1)})"
    return float(df.selectExpr(f"CAST({expr} AS DOUBLE) AS t").collect()[0]["t"])


def write(spark: SparkSession, root: Path, sizes: dict[str, int]) -> dict[str, DataSet]:
    """Each set under ``root/<name>`` (TFRecord, with index files); a set already there with
    the same number of records is kept. The DataFrames are kept in ``frames`` for peers that
    write their own copy (Petastorm)."""
    import spark_tfrecord

    found = {}
    for name in SETS:
        folder = root / name
        described = root / f"{name}.json"
        if described.is_file():
            known = DataSet(**json.loads(described.read_text()))
            if known.records == sizes[name] and folder.is_dir():
                found[name] = known
                continue
        shutil.rmtree(folder, ignore_errors=True)
        df = frame(spark, name, sizes[name])
        print(f"  writing {sizes[name]:,} {name} records to {folder}", flush=True)
        spark_tfrecord.write(df, str(folder), write_index=True)
        found[name] = DataSet(name, str(folder), sizes[name], total(df, name))
        described.write_text(json.dumps(asdict(found[name])))
    return found


def frame(spark: SparkSession, name: str, records: int) -> DataFrame:
    return narrow(spark, records) if name == "narrow" else images(spark, records)


def described(sets: dict[str, DataSet]) -> dict[str, Any]:
    return {name: asdict(s) for name, s in sets.items()}
