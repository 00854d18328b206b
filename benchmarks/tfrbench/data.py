"""The data sets: their schemas, their generators (Spark SQL; Python for the image bytes), and the
files written from them."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

ROOT = Path(__file__).resolve().parents[2]


def in_repository(text: str) -> str:
    """A path (or a command-line word holding one, ``--x=/abs/path``) as the page shows it:
    relative to the repository when it is in it, so that a page names no machine's folders."""
    prefix, sep, value = text.rpartition("=") if text.startswith("--") else ("", "", text)
    # by the path as given, not resolved: a virtual environment's python links out of the
    # repository
    under = Path(os.path.normpath(value))
    if under.is_absolute() and under.is_relative_to(ROOT):
        value = str(under.relative_to(ROOT))
    return prefix + sep + value


#: Rows of the narrow, wide-1000 and image-sized data sets unless the arguments say otherwise.
DEFAULT_ROWS = {"rows": 2_000_000, "wide1000_rows": 100_000, "image_rows": 10_000}
#: Partitions (so output files) of the narrow and wide data sets, and files for inference.
PARTITIONS = 8
INFER_FILES = 128
WIDE_COLUMN = "c050"
# The single file holds the narrow files this many times over (an odd number: see the check).
SINGLE_COPIES = 3

NARROW_DDL = (
    "id bigint, label bigint, f0 float, f1 float, f2 float, f3 float, "
    "emb array<float>, ids array<bigint>, s string"
)
# Every value is a hash of (id, a fixed seed): the same rows whatever the partitioning. Arrays are
# built with array() and slice(), which Spark compiles, not transform(), which it interprets.
NARROW_EXPRS = [
    "id",
    "pmod(xxhash64(id, 1), 2) AS label",
    *[
        f"CAST(pmod(xxhash64(id, {10 + k}), 2000001) / 1e6 - 1.0 AS FLOAT) AS f{k}"
        for k in range(4)
    ],
    "array("
    + ", ".join(
        f"CAST(pmod(xxhash64(id, 20, {i}), 2000001) / 1e6 - 1.0 AS FLOAT)" for i in range(32)
    )
    + ") AS emb",
    # 0 to 20 values, so some lists are empty.
    "slice(array("
    + ", ".join(f"pmod(xxhash64(id, 22, {i}), 1000000)" for i in range(20))
    + "), 1, CAST(pmod(xxhash64(id, 21), 21) AS INT)) AS ids",
    # 5 to 15 hex digits.
    "substr(concat(hex(xxhash64(id, 23)), hex(xxhash64(id, 24))), 1, "
    "5 + CAST(pmod(xxhash64(id, 25), 11) AS INT)) AS s",
]
# Wide columns by index modulo 10: five float, three bigint, one int, one string.
WIDE_KINDS = ["float"] * 5 + ["bigint"] * 3 + ["int", "string"]


def wide_expr(i: int) -> str:
    value = f"pmod(xxhash64(id, {100 + i}), 1000000007)"
    kind = WIDE_KINDS[i % 10]
    if kind == "float":
        return f"CAST({value} / 1e3 AS FLOAT) AS c{i:03d}"
    if kind == "int":
        return f"CAST(pmod({value}, 100000) AS INT) AS c{i:03d}"
    if kind == "string":
        return f"hex(pmod({value}, 16777216)) AS c{i:03d}"
    return f"{value} AS c{i:03d}"


WIDE_DDL = ", ".join(f"c{i:03d} {WIDE_KINDS[i % 10]}" for i in range(100))


# wide-1000: 1,000 scalar columns, even ones float and odd ones bigint; 10 of them are read.
WIDE1000_COLUMNS = [f"w{i:04d}" for i in range(1000)]
WIDE1000_DDL = ", ".join(
    f"{name} {'float' if i % 2 == 0 else 'bigint'}" for i, name in enumerate(WIDE1000_COLUMNS)
)
WIDE1000_SELECTED = WIDE1000_COLUMNS[::100]


def wide1000_expr(i: int) -> str:
    """Column ``i``: one hash of (id, column) and one cheap operation. Spark plans and generates
    code for 1,000 expressions in every task, which costs more than evaluating them: the wide
    data set's pmod and divide per column made that more than twice as slow. The bigint values
    keep 30 bits: 5-byte varints, like the wide data set's."""
    value = f"xxhash64(id, {1000 + i})"
    if i % 2 == 0:
        return f"CAST({value} AS FLOAT) AS {WIDE1000_COLUMNS[i]}"
    return f"{value} & 1073741823 AS {WIDE1000_COLUMNS[i]}"


# nested: Object-Detection-like, ``image`` a struct (with 256 random bytes) and ``objects`` 0 to 7
# boxes; the flat data set holds the same features as columns named by their paths.
NESTED_DDL = (
    "id bigint, image struct<height:bigint,width:bigint,encoded:binary>, "
    "objects array<struct<xmin:float,ymin:float,xmax:float,ymax:float,label:bigint>>"
)
NESTED_EXPRS = [
    "id",
    "named_struct('height', 200 + id % 400, 'width', 300 + id % 500, "
    "'encoded', unhex(sha2(cast(id as string), 256) || repeat('ab', 224))) as image",
    "slice(transform(sequence(0, 6), i -> named_struct("
    "'xmin', cast(i / 10.0 as float), 'ymin', cast(id % 97 / 100.0 as float), "
    "'xmax', cast(i / 10.0 + 0.05 as float), 'ymax', cast(0.99 as float), "
    "'label', id % 90 + i)), 1, cast(id % 8 as int)) as objects",
]
FLAT_EXPRS = [
    "id",
    *[f"image.{f} as `image/{f}`" for f in ("height", "width", "encoded")],
    *[f"objects.{f} as `objects/{f}`" for f in ("xmin", "ymin", "xmax", "ymax", "label")],
]

# image-sized: an id and about 100 KB of random, incompressible bytes per record.
IMAGE_DDL = "id bigint, image binary"
IMAGE_BYTES = 100_000


def narrow(spark: SparkSession, rows: int, partitions: int) -> DataFrame:
    return spark.range(0, rows, 1, partitions).selectExpr(*NARROW_EXPRS)


def wide(spark: SparkSession, rows: int) -> DataFrame:
    return spark.range(0, rows, 1, PARTITIONS).selectExpr(*[wide_expr(i) for i in range(100)])


def wide1000(spark: SparkSession, rows: int) -> DataFrame:
    return spark.range(0, rows, 1, PARTITIONS).selectExpr(
        *[wide1000_expr(i) for i in range(len(WIDE1000_COLUMNS))]
    )


def nested(spark: SparkSession, rows: int) -> DataFrame:
    return spark.range(0, rows, 1, PARTITIONS).selectExpr(*NESTED_EXPRS)


def image(spark: SparkSession, rows: int) -> DataFrame:
    """Row ``id`` holds ``Random(id).randbytes(IMAGE_BYTES)``: the same bytes on every run and
    in any partitioning, and as incompressible as random bytes are. Made by Python workers."""
    from random import Random

    size = IMAGE_BYTES  # the lambda is pickled by value: no reference to this module
    ids = spark.sparkContext.range(0, rows, numSlices=PARTITIONS)
    return spark.createDataFrame(ids.map(lambda i: (i, Random(i).randbytes(size))), IMAGE_DDL)


@contextmanager
def conf(spark: SparkSession, key: str, value: str) -> Iterator[None]:
    """The session's setting ``key`` is ``value`` inside the block only."""
    before = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


@contextmanager
def no_whole_stage_codegen(spark: SparkSession) -> Iterator[None]:
    """For generating the data only: fused into one method, its 50-odd hash expressions are too
    big for the JIT to compile, and generation would take four times as long."""
    with conf(spark, "spark.sql.codegen.wholeStage", "false"):
        yield


@contextmanager
def uncompressed_cache(spark: SparkSession) -> Iterator[None]:
    """For caching the wide-1000 data only (the setting is taken when ``cache()`` is called):
    trying the cache's encodings on 1,000 columns more than doubles the time of caching."""
    with conf(spark, "spark.sql.inMemoryColumnarStorage.compressed", "false"):
        yield


def data_files(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_")))


def size_of(path: Path) -> int:
    return sum(p.stat().st_size for p in data_files(path))


def concatenate(files: list[Path], target: Path) -> None:
    """One TFRecord file holding the records of ``files`` in order: the framing of each record
    stands alone, so TFRecord files concatenate byte for byte."""
    if target.parent.exists():
        shutil.rmtree(target.parent)
    target.parent.mkdir(parents=True)
    with target.open("wb") as out:
        for f in files:
            with f.open("rb") as part:
                shutil.copyfileobj(part, out, 1 << 20)
