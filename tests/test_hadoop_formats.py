"""TFRecordInputFormat / TFRecordOutputFormat for RDD and MapReduce users, from PySpark."""

from __future__ import annotations

from pathlib import Path

import spark_tfrecord
from support import tfrecord_files
from support.tfrecord_bytes import index_lines, write_records

INPUT = "io.github.sparktfrecord.TFRecordInputFormat"
OUTPUT = "io.github.sparktfrecord.TFRecordOutputFormat"
BYTES = "org.apache.hadoop.io.BytesWritable"
NULL = "org.apache.hadoop.io.NullWritable"


def test_rdd_round_trip_and_data_source_agree(spark, tf, out: Path) -> None:
    records = [bytes([i]) * i for i in range(200)]
    rdd = spark.sparkContext.parallelize([(bytearray(r), None) for r in records], 3)
    rdd.saveAsNewAPIHadoopFile(str(out), OUTPUT, keyClass=BYTES, valueClass=NULL)
    files = tfrecord_files(out)
    assert len(files) == 3 and all(f.name.endswith(".tfrecord") for f in files)

    back = spark.sparkContext.newAPIHadoopFile(str(out), INPUT, BYTES, NULL)
    assert sorted(bytes(k) for k, _ in back.collect()) == records
    via_source = spark_tfrecord.read(spark, str(out), record_type="ByteArray")
    assert sorted(bytes(r.byteArray) for r in via_source.collect()) == records
    by_tf = [r.numpy() for f in files for r in tf.data.TFRecordDataset(str(f))]
    assert sorted(by_tf) == records


def test_input_format_splits_like_the_data_source(spark, tmp_path: Path) -> None:
    records = [bytes([i % 251]) * (i * 53 % 3000) for i in range(150)]
    path = write_records(tmp_path / "big.tfrecord", records)
    conf = {"mapreduce.input.fileinputformat.split.maxsize": "4096"}
    rdd = spark.sparkContext.newAPIHadoopFile(str(path), INPUT, BYTES, NULL, conf=conf)
    assert rdd.getNumPartitions() == -(-path.stat().st_size // 4096)
    assert sorted(bytes(k) for k, _ in rdd.collect()) == sorted(records)


def test_output_format_compression(spark, tf, out: Path) -> None:
    rdd = spark.sparkContext.parallelize([(bytearray(b"abc"), None), (bytearray(b""), None)], 1)
    rdd.saveAsNewAPIHadoopFile(
        str(out), OUTPUT, keyClass=BYTES, valueClass=NULL, conf={"tfrecord.compression": "gzip"}
    )
    (path,) = tfrecord_files(out)
    assert path.name.endswith(".tfrecord.gz")
    read = [r.numpy() for r in tf.data.TFRecordDataset(str(path), compression_type="GZIP")]
    assert read == [b"abc", b""]
    back = spark.sparkContext.newAPIHadoopFile(str(out), INPUT, BYTES, NULL)
    assert sorted(bytes(k) for k, _ in back.collect()) == [b"", b"abc"]


def test_output_format_writes_indexes(spark, out: Path) -> None:
    records = [(bytearray(b"x" * n), None) for n in (0, 3, 200)]
    rdd = spark.sparkContext.parallelize(records, 1)
    rdd.saveAsNewAPIHadoopFile(
        str(out), OUTPUT, keyClass=BYTES, valueClass=NULL, conf={"tfrecord.writeIndex": "true"}
    )
    (path,) = tfrecord_files(out)
    index = path.parent / f"_{path.name}.idx"
    assert index.read_text() == "0 16\n16 19\n35 216\n" == index_lines(path.read_bytes())


def test_input_format_reads_a_partitioned_folder(spark, tmp_path: Path) -> None:
    """The files under subdirectories too (Hadoop's default would fail on the directories),
    unless the job says otherwise."""
    folder = tmp_path / "partitioned"
    df = spark.createDataFrame([(i, f"p{i % 2}") for i in range(6)], "id long, p string")
    spark_tfrecord.write(df, str(folder), partition_by="p")
    write_records(folder / "top.tfrecord", [b"top"])
    every = spark.sparkContext.newAPIHadoopFile(str(folder), INPUT, BYTES, NULL)
    by_source = spark_tfrecord.read(spark, str(folder / "p=*"), record_type="ByteArray")
    assert sorted(bytes(k) for k, _ in every.collect()) == sorted(
        [b"top"] + [bytes(r.byteArray) for r in by_source.collect()]
    )
    assert every.count() == 7
    conf = {"mapreduce.input.fileinputformat.input.dir.nonrecursive.ignore.subdirs": "true"}
    top = spark.sparkContext.newAPIHadoopFile(str(folder), INPUT, BYTES, NULL, conf=conf)
    assert [bytes(k) for k, _ in top.collect()] == [b"top"]
