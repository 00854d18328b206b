"""Spark with an older hadoop-common ahead of its own Hadoop client on the class path.

A Maven build that depends on tensorflow-hadoop (as linkedin spark-tfrecord's users' builds do)
puts hadoop-common 2.6.0 ahead of Spark's hadoop-client-api, so the JVM loads Hadoop 2.6's
`FileSystem`, which has no `openFile` (Hadoop 3.3). Spark 3.5 runs there; Spark 4's own file
listing needs Hadoop 3.0 (`FileStatus.hasAcl`), so on Spark 4 the oldest Hadoop that can run it
is used, 3.0.0. A child driver (support/old_hadoop_child.py) writes and reads through every path
that opens files, and the tests check its values, and that the old Hadoop really was the one
loaded.
"""

from __future__ import annotations

import os

import pyspark
import pytest

from support import child_results, maven

HADOOP = "org.apache.hadoop"
SPARK_3 = pyspark.__version__.startswith("3.")


@pytest.fixture(scope="module")
def old_hadoop() -> tuple[str, list[tuple[str, str, str]]]:
    """The Hadoop version put first on this Spark line, and its jars (group, artifact, version)."""
    if SPARK_3:
        # What a Maven build with tensorflow-hadoop 1.15.0 puts first: its hadoop-common and
        # hadoop-mapreduce-client-core (the version its pom names), and of their dependencies
        # the one Spark 3.5 lacks and Hadoop needs to start (commons-configuration, metrics).
        version = maven.pom_property(
            "org.tensorflow", "tensorflow-hadoop", "1.15.0", "hadoop.version"
        )
        return version, [
            (HADOOP, "hadoop-common", version),
            (HADOOP, "hadoop-mapreduce-client-core", version),
            ("commons-configuration", "commons-configuration", "1.6"),
        ]
    # Hadoop 3.0.0 and the dependencies Spark 4 lacks, at the versions hadoop-project 3.0.0 names.
    return "3.0.0", [
        (HADOOP, "hadoop-common", "3.0.0"),
        (HADOOP, "hadoop-mapreduce-client-core", "3.0.0"),
        ("org.apache.commons", "commons-configuration2", "2.1.1"),
        ("com.fasterxml.woodstox", "woodstox-core", "5.0.3"),
        ("org.codehaus.woodstox", "stax2-api", "3.1.4"),
        ("org.apache.htrace", "htrace-core4", "4.1.0-incubating"),
        ("com.google.re2j", "re2j", "1.1"),
        ("commons-collections", "commons-collections", "3.2.2"),  # not in Spark 4.3's jars
    ]


ROWS = [[i, f"s{i}", [i / 4, -0.5]] for i in range(30)]


@pytest.fixture(scope="module")
def results(
    tmp_path_factory: pytest.TempPathFactory, old_hadoop: tuple[str, list[tuple[str, str, str]]]
) -> dict[str, dict[str, object]]:
    class_path = os.pathsep.join(str(maven.fetch(*jar)) for jar in old_hadoop[1])
    out = tmp_path_factory.mktemp("old-hadoop")
    return child_results("old_hadoop_child", str(out), class_path)


def test_the_old_hadoop_is_the_one_loaded(
    results: dict[str, dict[str, object]], old_hadoop: tuple[str, list[tuple[str, str, str]]]
) -> None:
    jvm, version = results["jvm"], old_hadoop[0]
    assert version == ("2.6.0" if SPARK_3 else "3.0.0")
    assert jvm["hadoop"] == version
    assert str(jvm["file_system_jar"]).endswith(f"/hadoop-common-{version}.jar")
    assert jvm["has_open_file"] is False


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_write_then_read(results: dict[str, dict[str, object]], compression: str) -> None:
    r = results[f"write and read, {compression}"]
    extension = ".tfrecord" + (".gz" if compression == "gzip" else "")
    assert r["files"] == [f"part-00000{extension}", f"part-00001{extension}"]
    assert r["schema"] == "struct<id:bigint,s:string,v:array<float>>"
    assert r["rows"] == ROWS
    assert r["count"] == 30
    assert r["inspect"] == 30


def test_split_read(results: dict[str, dict[str, object]]) -> None:
    r = results["split read"]
    assert isinstance(r["partitions"], int) and r["partitions"] > 4
    assert r["rows"] == ROWS


def test_sharded_write(results: dict[str, dict[str, object]]) -> None:
    r = results["sharded write"]
    assert r["files"] == [f"data-0000{i}-of-00003" for i in range(3)]
    assert r["rows"] == ROWS


def test_hadoop_output_format(results: dict[str, dict[str, object]]) -> None:
    r = results["hadoop output format"]
    assert r["files"] == ["part-r-00000.tfrecord.gz", "part-r-00001.tfrecord.gz"]
    assert r["records"] == [f"record {i}" for i in range(5)]
