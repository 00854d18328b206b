"""Large uncompressed files split between tasks; every record is read exactly once."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import spark_tfrecord
from support import tfrecord_files
from support.tfrecord_bytes import frame, write_records


@pytest.fixture
def small_splits(spark):
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    yield
    spark.conf.unset("spark.sql.files.maxPartitionBytes")
    spark.conf.unset("spark.sql.files.openCostInBytes")


def test_every_record_once_across_splits(spark, out: Path, small_splits) -> None:
    rng = random.Random(7)
    # Small records, records straddling split boundaries, and records larger than a split.
    sizes = [rng.choice([0, 3, 50, 700, 5000, 13000]) for _ in range(300)]
    rows = [(i, bytes(rng.getrandbits(8) for _ in range(n))) for i, n in enumerate(sizes)]
    df = spark.createDataFrame(rows, "id long, payload binary").coalesce(1)
    spark_tfrecord.write(df, str(out))
    (path,) = tfrecord_files(out)
    back = spark_tfrecord.read(spark, str(out), schema="id long, payload binary")
    assert back.rdd.getNumPartitions() > path.stat().st_size // 4096 // 2
    got = sorted((r.id, bytes(r.payload)) for r in back.collect())
    assert got == rows
    assert back.count() == len(rows)
    assert spark_tfrecord.read(spark, str(out), schema="id long").count() == len(rows)


def test_byte_array_records_that_look_like_headers(spark, tmp_path: Path, small_splits) -> None:
    # Payloads full of zero bytes and of 0x00..0xff patterns; each split must find real headers.
    records = [bytes([i % 256]) * (i * 37 % 9000) for i in range(120)]
    path = write_records(tmp_path / "a.tfrecord", records)
    assert path.stat().st_size > 40 * 4096
    df = spark_tfrecord.read(spark, str(tmp_path), record_type="ByteArray")
    assert df.rdd.getNumPartitions() > 10
    assert sorted(bytes(r.byteArray) for r in df.collect()) == sorted(records)


def test_split_boundaries_at_every_offset_of_a_record(spark, tmp_path: Path) -> None:
    # A split may start anywhere: on a header, inside one, inside the data or the footer.
    records = [bytes([i]) * 40 for i in range(30)]
    path = write_records(tmp_path / "a.tfrecord", records)
    size = path.stat().st_size
    record_size = len(frame(records[0]))
    for split in range(record_size - 3, record_size + 5):
        spark.conf.set("spark.sql.files.maxPartitionBytes", str(split))
        spark.conf.set("spark.sql.files.openCostInBytes", "0")
        try:
            df = spark_tfrecord.read(spark, str(path), record_type="ByteArray")
            assert df.rdd.getNumPartitions() == -(-size // split)
            assert sorted(bytes(r.byteArray) for r in df.collect()) == records
        finally:
            spark.conf.unset("spark.sql.files.maxPartitionBytes")
            spark.conf.unset("spark.sql.files.openCostInBytes")


def test_compressed_files_and_split_files_false_stay_whole(spark, out: Path, small_splits) -> None:
    df = spark.range(3000).selectExpr("id", "repeat('x', 20) as s").coalesce(1)
    spark_tfrecord.write(df, str(out / "gz"), compression="gzip")
    spark_tfrecord.write(df, str(out / "plain"))
    assert spark_tfrecord.read(spark, str(out / "gz")).rdd.getNumPartitions() == 1
    assert spark_tfrecord.read(spark, str(out / "plain")).rdd.getNumPartitions() > 1
    whole = spark_tfrecord.read(spark, str(out / "plain"), splitFiles=False)
    assert whole.rdd.getNumPartitions() == 1
    assert sorted(r.id for r in whole.collect()) == list(range(3000))
