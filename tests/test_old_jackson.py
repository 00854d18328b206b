"""Spark 3.5 with an older jackson-core in place of its own, first on the class path (issue 41).

A Maven build of a linkedin spark-tfrecord user resolves Spark 3.5's jackson-databind 2.15.2 with
the jackson-core 2.12.7 of its other dependencies, and no other jackson-core: databind 2.15's
`ObjectMapper` then fails on the classes core 2.12 lacks (`StreamConstraintsException`). The jar
reads and writes its own files (count files, manifest, lock, TFDS metadata) with its own JSON
code, never Jackson; what still reaches Jackson does so through Spark's API (`StructType.json`,
`DataType.fromJson`: json4s on Jackson, compiled against Spark's), which this class path must
run too. A child driver (support/old_jackson_child.py), on a Spark home whose jackson-core is
2.12.7 (support/spark_home.py) with that jar first on its class path, writes, appends, writes
partitioned and as a TFDS split, and reads back; the tests check the manifests against the
records each file holds, and that the old jackson-core really was the only one loaded. Spark 4's
suites do not collect this file (conftest.py): the class path of issue 41 is a Spark 3.5 one,
which linkedin's last release is built for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support import child_results, maven
from support.spark_home import spark_home_with

JACKSON_CORE = ("com.fasterxml.jackson.core", "jackson-core", "2.12.7")
MANIFEST = "_tfrecord_manifest.json"


def row(i: int) -> list[Any]:
    return [i, f"s{i}", [i / 4] * (i % 3)]


ROWS = [row(i) for i in range(30)]
COUNTS = {"id": {"min": 1, "max": 1}, "s": {"min": 1, "max": 1}, "v": {"min": 0, "max": 2}}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    core = maven.fetch(*JACKSON_CORE)
    # Maven's mediation keeps one version of an artifact: 2.12.7 is first on the class path, and
    # Spark's own jackson-core 2.15.2 is not on it at all (else the classes 2.12 lacks would be
    # found there, and the test would pass on the code of issue 41).
    home = spark_home_with(tmp_path_factory.mktemp("spark-home") / "home", {"jackson-core-": core})
    out = tmp_path_factory.mktemp("old-jackson")
    return child_results("old_jackson_child", str(out), str(core), SPARK_HOME=str(home))


def check_manifest(r: dict[str, Any], records: int, partition_columns: list[str]) -> None:
    """The manifest names every data file with the records and bytes it holds, and nothing of
    the write (count files, lock) is left beside it."""
    m = r["manifest"]
    assert (m["format"], m["version"], m["record_type"]) == (
        "spark-tfrecord-manifest",
        1,
        "Example",
    )
    assert m["partition_columns"] == partition_columns
    assert {f["path"]: f["num_records"] for f in m["files"]} == r["records"]
    assert {f["path"]: f["num_bytes"] for f in m["files"]} == r["bytes"]
    assert {f["compression"] for f in m["files"]} == {"none"}
    assert m["num_records"] == sum(r["records"].values()) == records
    assert m["num_bytes"] == sum(r["bytes"].values())
    assert m["features"] == COUNTS
    assert r["names"] == sorted([*r["records"], *partition_folders(r), "_SUCCESS", MANIFEST])


def partition_folders(r: dict[str, Any]) -> set[str]:
    return {str(Path(p).parent) for p in r["records"] if "/" in p}


def test_the_old_jackson_core_is_the_one_loaded(results: dict[str, dict[str, Any]]) -> None:
    jvm = results["jvm"]
    assert (jvm["core"], jvm["databind"]) == ("2.12.7", "2.15.2")
    assert str(jvm["core_jar"]).endswith("/jackson-core-2.12.7.jar")
    assert jvm["stream_constraints"] is None


def test_write(results: dict[str, dict[str, Any]]) -> None:
    r = results["write"]
    assert len(r["records"]) == 2 and all(n > 0 for n in r["records"].values())
    check_manifest(r, 30, [])
    # Spark's schema JSON, as PySpark's DataFrame has it.
    assert r["manifest"]["schema_json"] == r["schema_json"]
    assert [f["name"] for f in r["schema_json"]["fields"]] == ["id", "s", "v"]
    assert r["manifest"]["schema"] == "id BIGINT NOT NULL,s STRING NOT NULL,v ARRAY<FLOAT>"


def test_append(results: dict[str, dict[str, Any]]) -> None:
    r, before = results["append"], results["write"]
    assert len(r["records"]) == 3
    new = set(r["records"]) - set(before["records"])
    assert [r["records"][p] for p in new] == [15]
    check_manifest(r, 45, [])


def test_partitioned_write(results: dict[str, dict[str, Any]]) -> None:
    r = results["partitioned write"]
    assert partition_folders(r) == {"day=0", "day=1"}
    days = {p.split("/")[0]: 0 for p in r["records"]}
    for path, n in r["records"].items():
        days[path.split("/")[0]] += n
    assert days == {"day=0": 15, "day=1": 15}
    check_manifest(r, 30, ["day"])


def test_read(results: dict[str, dict[str, Any]]) -> None:
    r = results["read"]
    assert r["schema"] == "struct<id:bigint,s:string,v:array<float>>"
    assert r["rows"] == [row(i) for i in range(45)]
    assert r["count"] == 45
    assert r["partitioned_schema"] == "struct<id:bigint,s:string,v:array<float>,day:int>"
    assert r["partitioned"] == [[i, i % 2] for i in range(30)]
    fields = r["inferred_json"]["fields"]
    assert [(f["name"], f["type"]) for f in fields] == [
        ("id", "long"),
        ("s", "string"),
        ("v", {"type": "array", "elementType": "float", "containsNull": False}),
    ]


def test_tfds_split(results: dict[str, dict[str, Any]]) -> None:
    r = results["tfds"]
    assert r["shards"] == ["ds-train.tfrecord-00000-of-00002", "ds-train.tfrecord-00001-of-00002"]
    assert sum(r["shard_records"]) == 30
    info = r["info"]
    assert (info["name"], info["version"], info["fileFormat"]) == ("ds", "1.0.0", "tfrecord")
    (split,) = info["splits"]
    assert split["name"] == "train"
    assert split["shardLengths"] == [str(n) for n in r["shard_records"]]
    features = r["features"]["featuresDict"]["features"]
    assert {k: v["pythonClassName"].rsplit(".", 1)[1] for k, v in features.items()} == {
        "id": "Tensor",
        "s": "Text",
        "v": "Tensor",
    }
    assert features["v"]["tensor"] == {
        "shape": {"dimensions": ["-1"]},
        "dtype": "float32",
        "encoding": "none",
    }
    assert r["rows"] == ROWS
