"""Whole-file GZIP and ZLIB, as TensorFlow writes and reads them. Other codecs are refused
in test_errors.py."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest

import spark_tfrecord
from support import tfrecord_files
from support.tfrecord_bytes import entry, example, feature, frame, int64_list_packed

RECORDS = [example(entry(b"id", feature("int64", int64_list_packed([i])))) for i in range(50)]


@pytest.mark.parametrize(
    "option,extension,tf_type",
    [
        ("gzip", ".tfrecord.gz", "GZIP"),
        ("deflate", ".tfrecord.deflate", "ZLIB"),
        ("zlib", ".tfrecord.deflate", "ZLIB"),
        ("none", ".tfrecord", ""),
    ],
)
def test_tensorflow_reads_our_compressed_files(
    spark, tf, out: Path, option, extension, tf_type
) -> None:
    df = spark.range(100).selectExpr("id", "cast(id as string) as s").repartition(2)
    spark_tfrecord.write(df, str(out), compression=option)
    files = tfrecord_files(out)
    assert len(files) == 2 and all(f.name.endswith(extension) for f in files)
    ids = sorted(
        tf.train.Example.FromString(r.numpy()).features.feature["id"].int64_list.value[0]
        for f in files
        for r in tf.data.TFRecordDataset(str(f), compression_type=tf_type)
    )
    assert ids == list(range(100))
    back = spark_tfrecord.read(spark, str(out))
    assert sorted((r.id, r.s) for r in back.collect()) == [(i, str(i)) for i in range(100)]


@pytest.mark.parametrize(
    "tf_type,name",
    [("GZIP", "a.tfrecord.gz"), ("ZLIB", "a.tfrecord.deflate"), ("ZLIB", "a.tfrecord.zlib")],
)
def test_we_read_tensorflow_compressed_files(spark, tf, tmp_path: Path, tf_type, name) -> None:
    path = tmp_path / name
    with tf.io.TFRecordWriter(str(path), options=tf_type) as w:
        for r in RECORDS:
            w.write(r)
    got = spark_tfrecord.read(spark, str(path), schema="id long").collect()
    assert [r.id for r in got] == list(range(50))


def test_option_forces_codec_for_files_without_extension(spark, tmp_path: Path) -> None:
    raw = b"".join(frame(r) for r in RECORDS)
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "data.tfrecord").write_bytes(gzip.compress(raw))
    (tmp_path / "z").mkdir()
    (tmp_path / "z" / "data").write_bytes(zlib.compress(raw))
    for sub, option in (("g", "gzip"), ("z", "zlib")):
        df = spark_tfrecord.read(spark, str(tmp_path / sub), compression=option, schema="id long")
        assert sorted(r.id for r in df.collect()) == list(range(50))
    # Without the option, their first bytes say it (test_compression_detection.py).
    for sub in ("g", "z"):
        df = spark_tfrecord.read(spark, str(tmp_path / sub), schema="id long")
        assert sorted(r.id for r in df.collect()) == list(range(50))


def test_linkedin_codec_option(spark, out: Path) -> None:
    df = spark.range(10)
    df.write.format("tfrecord").option("codec", "org.apache.hadoop.io.compress.GzipCodec").save(
        str(out)
    )
    assert all(f.name.endswith(".tfrecord.gz") for f in tfrecord_files(out))
    assert sorted(r.id for r in spark.read.format("tfrecord").load(str(out)).collect()) == list(
        range(10)
    )


def test_non_tensorflow_codec_when_asked_for(spark, out: Path) -> None:
    spark.range(20).write.format("tfrecord").option("compression", "bzip2").option(
        "allowNonTensorFlowCodec", "true"
    ).save(str(out))
    assert all(f.name.endswith(".tfrecord.bz2") for f in tfrecord_files(out))
    assert sorted(r.id for r in spark_tfrecord.read(spark, str(out)).collect()) == list(range(20))


@pytest.mark.parametrize("compression", ["none", "gzip", "deflate"])
def test_records_of_every_size_in_every_stream(spark, tmp_path: Path, compression: str) -> None:
    # In a compressed stream the record buffer grows as bytes arrive, in steps: records from
    # empty to several MiB, in an order that makes it grow, stay, and grow again, come back whole.
    import random

    rng = random.Random(11)
    sizes = [0, 1, 4095, 4097, 70_000, 3, 5_000_000, 65_536, 12_000_000, 0, 131_073]
    records = [rng.randbytes(n) for n in sizes]
    content = b"".join(frame(r) for r in records)
    packed = {"none": content, "gzip": gzip.compress(content), "deflate": zlib.compress(content)}
    extension = {"none": "", "gzip": ".gz", "deflate": ".deflate"}[compression]
    path = tmp_path / f"sizes.tfrecord{extension}"
    path.write_bytes(packed[compression])
    df = spark_tfrecord.read(spark, str(path), record_type="ByteArray", splitFiles=False)
    assert [bytes(r.byteArray) for r in df.collect()] == records
    assert df.count() == len(records)
