"""The troubleshooting table of docs/errors.md: each message, caused as a user would cause it,
and the fix the table gives."""

from __future__ import annotations

import bz2
import gzip
import importlib.util
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pyspark
import pytest

import spark_tfrecord
from support import TESTS, child_env, module_command
from support.tfrecord_bytes import entry, example, feature, frame, int64_list_packed, write_records


def read_in_new_session(jars: list[str], formats: list[str], path: Path) -> list[dict[str, Any]]:
    """What reading `path` with each format gives, in one new session with these jars
    (`support.read_in_new_session`)."""
    done = subprocess.run(
        module_command("read_in_new_session", json.dumps([jars, formats, str(path)])),
        capture_output=True,
        text=True,
        timeout=600,
        env=child_env(PYSPARK_PYTHON=sys.executable),
    )
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-4000:]
    results: list[dict[str, Any]] = json.loads(lines[0][7:])
    return results


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("data") / "a.tfrecord"
    return write_records(path, [example(entry(b"x", feature("int64", int64_list_packed([7]))))])


def test_failed_to_find_the_data_source_without_the_jar(data: Path) -> None:
    # The fix, the jar on spark.jars, is how every other test's session reads. Where pyspark has
    # the Python data source API (Spark 4), the jar-less source (pyspark_tfrecord, which Spark
    # registers by itself) reads the file instead (issue 43).
    [result] = read_in_new_session([], ["tfrecord"], data)
    if importlib.util.find_spec("pyspark.sql.datasource") is not None:
        assert result == {"rows": [[7]]}, result
    else:
        assert "Failed to find the data source: tfrecord" in result["chain"][0], result


def test_multiple_sources_found_and_the_class_name_fix(data: Path, tmp_path: Path) -> None:
    source = TESTS / "support" / "java" / "fake" / "OtherTFRecord.java"
    spark_jars = Path(pyspark.__file__).resolve().parent / "jars" / "*"
    classes = tmp_path / "classes"
    subprocess.run(
        ["javac", "-cp", str(spark_jars), "-d", str(classes), str(source)], check=True, timeout=300
    )
    other = tmp_path / "other-tfrecord.jar"
    with zipfile.ZipFile(other, "w") as jar:
        jar.write(classes / "fake" / "OtherTFRecord.class", "fake/OtherTFRecord.class")
        jar.writestr(
            "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister",
            "fake.OtherTFRecord\n",
        )
    jars = [spark_tfrecord.jar_path(), str(other)]
    result, fixed = read_in_new_session(
        jars, ["tfrecord", "io.github.sparktfrecord.TFRecordFileFormat"], data
    )
    assert "Multiple sources found for tfrecord" in result["chain"][0], result
    assert fixed == {"rows": [[7]]}


def test_a_jar_for_another_scala_version(data: Path) -> None:
    wrong = (
        spark_tfrecord.jar_path("3.5.0", scala_version="2.13")
        if pyspark.__version__.startswith("3.")
        else spark_tfrecord.jar_path("3.5.0", scala_version="2.12")
    )
    [result] = read_in_new_session([wrong], ["tfrecord"], data)
    linkage = ("AbstractMethodError", "NoSuchMethodError", "NoClassDefFoundError: scala")
    assert any(kind in link for link in result["chain"] for kind in linkage), result


def test_a_renamed_compressed_file_and_the_compression_fix(spark: Any, tmp_path: Path) -> None:
    record = frame(example(entry(b"x", feature("int64", int64_list_packed([7])))))
    # GZIP (and ZLIB) are recognised by their first bytes: a renamed file reads as it is.
    renamed = tmp_path / "renamed.tfrecord"
    renamed.write_bytes(gzip.compress(record))
    for options in ({}, {"compression": "gzip"}):
        read = spark_tfrecord.read(spark, str(renamed), schema="x long", **options)
        assert [r.x for r in read.collect()] == [7]
    # Another codec fails, and its message names the fix that the table gives.
    other = tmp_path / "renamed-bzip2.tfrecord"
    other.write_bytes(bz2.compress(record))
    with pytest.raises(
        Exception,
        match=re.escape(
            "length checksum mismatch (the file's first bytes are bzip2's: set compression=bzip2 "
            "with allowNonTensorFlowCodec=true) at byte offset 0"
        ),
    ):
        spark_tfrecord.read(spark, str(other), schema="x long").collect()
    fixed = spark_tfrecord.read(
        spark, str(other), schema="x long", compression="bzip2", allowNonTensorFlowCodec="true"
    )
    assert [r.x for r in fixed.collect()] == [7]


def test_the_spark_3_5_jars_load_on_java_8_but_need_its_crc32c() -> None:
    # Class file major version 52 is Java 8: the classes load there and then miss CRC32C (Java 9+),
    # hence the table's "NoClassDefFoundError: java/util/zip/CRC32C"; 61 is Java 17.
    for spark_version, scala, major in (
        ("3.5.0", "2.12", 52),
        ("3.5.0", "2.13", 52),
        ("4.0.0", "2.13", 61),
    ):
        with zipfile.ZipFile(spark_tfrecord.jar_path(spark_version, scala_version=scala)) as jar:
            header = jar.read("io/github/sparktfrecord/TFRecordFileFormat.class")[:8]
            reader = jar.read("io/github/sparktfrecord/framing/TFRecordReader.class")
        assert header[:4] == b"\xca\xfe\xba\xbe" and int.from_bytes(header[6:8], "big") == major
        assert b"java/util/zip/CRC32C" in reader
