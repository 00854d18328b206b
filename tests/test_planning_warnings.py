"""The warnings a query logs on the driver while it is planned: an option the format does not
know (naming the close match), and schema columns that no sampled record holds. Each once per
query, read from the driver's log."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import spark_tfrecord

LOGGER = "io.github.sparktfrecord.TFRecordFileFormat"


@contextmanager
def driver_log(spark: Any) -> Iterator[list[str]]:
    """The lines our logger writes on the driver while the block runs (WARN and above), through
    a log4j appender of the test's own (the session logs at ERROR)."""
    jvm = spark._jvm
    core = jvm.org.apache.logging.log4j.core
    writer = jvm.java.io.StringWriter()
    layout = core.layout.PatternLayout.newBuilder().withPattern("%p %m%n").build()
    appender = (
        core.appender.WriterAppender.newBuilder()
        .setName(f"test-{uuid.uuid4()}")
        .setTarget(writer)
        .setLayout(layout)
        .build()
    )
    appender.start()
    logger = jvm.org.apache.logging.log4j.LogManager.getLogger(LOGGER)
    level = logger.getLevel()
    # In this order: adding the first appender makes the logger a config of its own, at the
    # level of its parent.
    logger.addAppender(appender)
    logger.setLevel(jvm.org.apache.logging.log4j.Level.WARN)
    lines: list[str] = []
    try:
        yield lines
    finally:
        logger.removeAppender(appender)
        logger.setLevel(level)
        appender.stop()
        lines.extend(str(writer.toString()).splitlines())


@pytest.fixture(scope="module")
def data(spark, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("warnings") / "data"
    df = spark.range(20).selectExpr("id", "named_struct('h', id * 2, 'w', id) as image")
    spark_tfrecord.write(df.repartition(2), str(path))
    return str(path)


def test_a_misspelt_option_warns_once_naming_the_close_match(spark, data: str, out: Path) -> None:
    expected = (
        "WARN Unknown tfrecord option 'compresion' (ignored); did you mean 'compression'? "
        "Valid options: allowNonTensorFlowCodec, codec, columnNameOfCorruptRecord, "
    )
    with driver_log(spark) as log:
        df = spark.range(5).repartition(3)
        df.write.format("tfrecord").option("compresion", "gzip").save(str(out))
    assert len(log) == 1 and log[0].startswith(expected), log
    assert "and Spark's file-source options (pathGlobFilter, " in log[0]
    # The files are as if the option were not there: uncompressed.
    assert sorted(p.name.endswith(".tfrecord") for p in out.glob("part-*")) == [True] * 3
    with driver_log(spark) as log:
        rows = spark.read.format("tfrecord").option("RECORDTYP", "Example").load(data).collect()
    assert len(rows) == 20
    assert len(log) == 1, log
    assert log[0].startswith(
        "WARN Unknown tfrecord option 'RECORDTYP' (ignored); did you mean 'recordType'?"
    ), log


def test_valid_options_and_spark_s_own_do_not_warn(spark, data: str, out: Path) -> None:
    with driver_log(spark) as log:
        df = spark.range(6).selectExpr("id", "id % 2 as day")
        (
            df.write.format("tfrecord")
            .option("Compression", "gzip")
            .option("recordType", "Example")
            .option("maxRecordsPerFile", "2")
            .option("writeLocality", "local")
            .partitionBy("day")
            .save(str(out))
        )
        back = (
            spark.read.format("tfrecord")
            .option("compression", "gzip")
            .option("recursiveFileLookup", "false")
            .option("pathGlobFilter", "*.gz")
            .option("fs.file.impl.disable.cache", "true")
            .option("mergeSchema", "false")
            .load(str(out))
        )
        assert sorted((r.id, r.day) for r in back.collect()) == [(i, i % 2) for i in range(6)]
        spark.read.format("tfrecord").schema("id long, image struct<h long>").load(data).count()
    assert log == []


def test_a_column_no_record_holds_warns_once_naming_it(spark, data: str) -> None:
    with driver_log(spark) as log:
        df = spark.read.format("tfrecord").schema("id long, nope long, image struct<h long>")
        rows = df.load(data).collect()
    assert sorted(r.id for r in rows) == list(range(20)) and {r.nope for r in rows} == {None}
    assert log == [
        "WARN No sampled TFRecord record holds the feature of column(s) 'nope': they read as "
        f"null. Check the names against the files' features (spark-tfrecord inspect {data}); "
        "the sample is the one schema inference reads (inferSchemaMaxFiles, "
        "inferSchemaMaxRecords)."
    ]


def test_struct_leaves_are_checked_by_their_feature_names(spark, data: str) -> None:
    with driver_log(spark) as log:
        schema = "id long, image struct<h long, depth long>"
        spark.read.format("tfrecord").schema(schema).load(data).collect()
    assert len(log) == 1, log
    assert "column(s) 'image.depth' (feature 'image/depth'): they read as null" in log[0]


def test_no_warning_when_every_column_is_held_or_not_checked(spark, data: str) -> None:
    with driver_log(spark) as log:
        spark.read.format("tfrecord").schema("id long, image struct<w long>").load(data).collect()
        spark.read.format("tfrecord").load(data).collect()  # inferred: always held
        spark.read.format("tfrecord").option("recordType", "ByteArray").load(data).collect()
        # Partition columns are not features.
        spark.read.format("tfrecord").schema("id long").load(data).select("id").collect()
    assert log == []
