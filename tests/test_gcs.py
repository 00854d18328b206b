"""Google Cloud Storage: Spark writes and reads gs:// through Google's gcs-connector, and the
trainer reads the same folder through gcsfs, against a local server (fake-gcs-server).

One server on 127.0.0.1 serves the module (`support.gcs_server`); one child Python process runs
a Spark driver, `support.gcs_driver` (this process's session cannot take new jars), with the
shaded connector and the settings docs/deployment.md gives. The trainer side reads the folders
that driver wrote in this process, with ``STORAGE_EMULATOR_HOST`` pointing gcsfs at the server,
as Google's own clients take it. Collected on Spark 3.5 (Hadoop 3.3.4, where the connector's
``openFile`` does not link and the data source reads with ``open``) and on the 4.x after 4.0
(Hadoop 3.4 and 3.5, whose own fs.gs settings the connector cannot parse): tests/conftest.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import spark_tfrecord
from support import driver_result
from support.gcs_server import GCS, gcs_bucket, gcs_conf, gcs_jar
from support.loader_records import digest, plain

pytestmark = pytest.mark.timeout(1800)  # the first test also waits for the downloads and the run

BUCKET = "tfrecord-gcs"
ROWS = 3000
BLOCK = 64 << 10


@pytest.fixture(scope="module")
def gcs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GCS]:
    with gcs_bucket(tmp_path_factory.mktemp("gcs") / "server.log", BUCKET) as bucket:
        yield bucket


@pytest.fixture(scope="module")
def runs(gcs: GCS, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every scenario's result, from one Spark driver in a child process, and its log."""
    work = tmp_path_factory.mktemp("spark")
    conf = {
        "spark.jars": str(gcs_jar()),
        "spark.local.dir": str(work),  # Spark copies spark.jars here for its local executor
        **gcs_conf(gcs.endpoint),
    }
    config = {"conf": conf, "bucket": BUCKET}
    result, log = driver_result("gcs_driver", config, work / "driver.log", timeout=1500)
    result["log"] = log
    return result


def outcome(runs: dict[str, Any], scenario: str) -> dict[str, Any]:
    result: dict[str, Any] = runs[scenario]
    assert "failed" not in result, result.get("failed")
    return result


def expected_rows() -> list[list[Any]]:
    """What gcs_driver.frame holds: id, p, label, name, tags."""
    tags = ["a", "bb", "ccc"]
    return [[i, i % 3, (i % 10) / 4, f"row {i}", tags[: i % 4]] for i in range(ROWS)]


def test_partitioned_write_reads_back_equal(runs: dict[str, Any]) -> None:
    result = outcome(runs, "partitioned")
    assert result["schema"] == "struct<id:bigint,label:float,name:string,tags:array<string>,p:int>"
    assert result["rows"] == expected_rows()
    assert result["p1_names"] == sorted(f"row {i}" for i in range(1, ROWS, 3))


def test_gzip_append_overwrite(runs: dict[str, Any]) -> None:
    result = outcome(runs, "modes")
    assert result["appended"] == list(range(150))
    assert result["overwritten"] == list(range(1000, 1010))


def test_the_read_falls_back_to_open_where_the_connector_cannot_open_files(
    runs: dict[str, Any],
) -> None:
    """Spark 3.5's Hadoop 3.3.4 lacks the class the connector's openFile links to; the data
    source then opens files with open(path), and says so once. Later Hadoops link it."""
    import pyspark

    warned = "GoogleHadoopFileSystem.openFile cannot run in this JVM" in runs["log"]
    assert warned == pyspark.__version__.startswith("3."), runs["log"][-3000:]


def test_spark_names_a_missing_bucket_and_object(runs: dict[str, Any]) -> None:
    for what, error in outcome(runs, "missing").items():
        assert error["error"] is not None, what
        assert "PATH_NOT_FOUND" in error["error"] and error["url"] in error["error"], error


@pytest.fixture
def emulator(gcs: GCS, monkeypatch: pytest.MonkeyPatch) -> str:
    """gcsfs pointed at the server, as Google's clients are, without credentials."""
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs.endpoint)
    return gcs.endpoint


def test_the_trainer_reads_what_spark_wrote(
    runs: dict[str, Any], gcs: GCS, emulator: str, tmp_path: Path
) -> None:
    """dataset_info, grain_source and torch_dataset on the gs:// folder the connector wrote
    (with its folders' placeholder objects, ``partitioned/`` and ``partitioned/p=0/``) read what
    Spark reads, and the same records, bit for bit, as from a local copy of the folder."""
    outcome(runs, "partitioned")
    url = f"gs://{BUCKET}/partitioned"
    from gcsfs.core import GCSFileSystem

    fs = GCSFileSystem(token="anon", skip_instance_cache=True)
    placeholders = [k for k in fs.find(url, withdirs=False) if k.endswith("/")]
    assert f"{BUCKET}/partitioned/p=0/" in placeholders, placeholders
    local = tmp_path / "partitioned"
    for key in fs.find(url):
        if not key.endswith("/"):
            target = local / key[len(f"{BUCKET}/partitioned/") :]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(fs.cat_file(key))

    info = spark_tfrecord.dataset_info(url)
    assert (info.source, info.num_records) == ("manifest", ROWS)
    copied = spark_tfrecord.dataset_info(str(local))
    assert [(f.path[len(url) :], f.num_records, f.num_bytes) for f in info.files] == [
        (f.path[len(str(local)) :], f.num_records, f.num_bytes) for f in copied.files
    ]
    assert info == replace(copied, path=url, files=info.files)

    # An epoch in order reads each block of each file once, plus one request a file (the
    # folder's files are one block each); the records cached, a second epoch asks for nothing.
    remote = spark_tfrecord.grain_source(url, block_size=BLOCK)
    before = len(gcs.requests())
    records = [remote[i] for i in range(len(remote))]
    first = len(gcs.requests()) - before
    assert first <= sum(2 * math.ceil(f.num_bytes / BLOCK) for f in info.files), first
    again = [remote[i] for i in range(ROWS)]
    assert (len(gcs.requests()) - before, digest(again)) == (first, digest(records))
    copy = spark_tfrecord.grain_source(str(local))
    assert digest(records) == digest(copy[i] for i in range(ROWS))
    rows = sorted(
        [int(r["id"]), int(r["p"]), float(r["label"]), r["name"], list(r["tags"])] for r in records
    )
    assert rows == expected_rows(), plain(records[0])

    # torch_dataset, on a column subset: the same records, in the same order.
    torch_remote = spark_tfrecord.torch_dataset(url, ["id", "name"])
    torch_local = spark_tfrecord.torch_dataset(str(local), ["id", "name"])
    assert len(torch_remote) == ROWS
    assert digest(torch_remote[i] for i in range(ROWS)) == digest(
        torch_local[i] for i in range(ROWS)
    )
    assert [sorted(torch_remote[i]) for i in (0, ROWS - 1)] == [["id", "name"]] * 2


def test_a_failed_append_leaves_the_folder_as_it_was(runs: dict[str, Any], emulator: str) -> None:
    """Renames on Cloud Storage go one object at a time, but a job that fails before its commit
    leaves its files under _temporary: Spark and the manifest still give the earlier write."""
    result = outcome(runs, "failed_append")
    assert result["error"] is not None and "boom at 4099" in result["error"]
    assert result["ids"] == list(range(100))
    info = spark_tfrecord.dataset_info(f"gs://{BUCKET}/failed_append")
    assert (info.source, info.num_records, len(info.files)) == ("manifest", 100, 2)


def test_the_trainer_names_a_missing_bucket_and_object(emulator: str) -> None:
    for url in (f"gs://no-such-{BUCKET}/t", f"gs://{BUCKET}/no-such-folder"):
        with pytest.raises(FileNotFoundError, match=url):
            spark_tfrecord.dataset_info(url)
