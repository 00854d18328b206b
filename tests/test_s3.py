"""Object stores: reads and writes through s3a:// against an S3-compatible server (moto's).

One moto server on 127.0.0.1 serves the module; one child Python process runs a Spark driver,
`support.s3_driver` (this process's session cannot take new jars), with the S3A connector that
matches pyspark's Hadoop. The scenarios that commit differently run twice: with Spark's default
commit protocol (FileOutputCommitter, which commits by renaming, i.e. copying, objects) and with
the S3A magic committer through spark-hadoop-cloud's PathOutputCommitProtocol (what production
S3 users should use); the read scenarios run once, on the default. Each test asserts one
scenario's values, read back by Spark and listed with boto3.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

from support import driver_result
from support.s3_server import (
    S3,
    hadoop_cloud_jar,
    hadoop_version,
    s3_bucket,
    s3a_conf,
    s3a_jars,
)
from support.tfrecord_oracle import Column, decode, read_records

pytestmark = pytest.mark.timeout(3600)  # the first test also waits for the downloads and the run

BUCKET = "tfrecord-test"
COMMITTERS = ["file", "magic"]
COMMITS = ["partitioned", "append", "overwrite", "failure", "tfds"]  # run with every committer
READS = ["split", "gzip", "inference", "statistics"]  # run with the default one
SPLIT_BYTES = 256 * 1024


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3]:
    with s3_bucket(tmp_path_factory.mktemp("s3") / "moto.log", BUCKET) as bucket:
        yield bucket


@pytest.fixture(scope="module")
def runs(s3: S3, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every scenario's result per committer, from one Spark driver in a child process."""
    jars = [*s3a_jars(hadoop_version()), hadoop_cloud_jar()]
    work = tmp_path_factory.mktemp("spark")
    conf = {
        # On the driver's class path, where local[2]'s executor finds them too: as spark.jars,
        # each suite's run copied the 0.3 to 0.7 GB SDK bundle into its local folder.
        "spark.driver.extraClassPath": os.pathsep.join(str(j) for j in jars),
        "spark.local.dir": str(work),
        **s3a_conf(s3.endpoint),
    }
    scenarios = {"file": COMMITS + READS, "magic": COMMITS}
    config = {"conf": conf, "bucket": BUCKET, "scenarios": scenarios, "split_bytes": SPLIT_BYTES}
    result: dict[str, dict[str, Any]]
    result, _ = driver_result("s3_driver", config, work / "driver.log", timeout=3000)
    return result


def outcome(runs: dict[str, dict[str, Any]], committer: str, scenario: str) -> dict[str, Any]:
    result = runs[committer][scenario]
    assert "failed" not in result, result.get("failed")
    return result


def part_files(objects: dict[str, bytes]) -> list[str]:
    return sorted(k for k in objects if k.rsplit("/", 1)[-1].startswith("part-"))


def by_job(parts: list[str]) -> list[list[str]]:
    """Part files grouped by the write job that made them (its UUID is in their names)."""
    jobs: dict[str, list[str]] = {}
    for p in parts:
        match = re.fullmatch(r"(?:.*/)?part-\d{5}-(.+)-c\d{3}\.tfrecord(?:\.gz)?", p)
        assert match, p
        jobs.setdefault(match.group(1), []).append(p)
    return sorted(jobs.values(), key=len)


def assert_committed_by(objects: dict[str, bytes], committer: str, job: list[str]) -> None:
    """_SUCCESS is empty from FileOutputCommitter; the S3A committers write a JSON manifest that
    names the committer and the files of the job that wrote it last."""
    success = objects["_SUCCESS"]
    if committer == "file":
        assert success == b"", success[:300]
    else:
        manifest = json.loads(success)
        assert manifest["committer"] == committer
        names = sorted(f.rsplit("/", 1)[-1] for f in manifest["filenames"])
        assert names == sorted(p.rsplit("/", 1)[-1] for p in job)


MANIFEST = "_tfrecord_manifest.json"


def assert_manifest(objects: dict[str, bytes], committer: str, parts: list[str], rows: int) -> None:
    """Under Spark's own commit protocol (FileOutputCommitter) the write leaves its manifest:
    every part file with its bytes as stored and, in all, the rows written. The S3A committers
    commit through a protocol the manifest cannot follow: there is none, rather than a wrong one."""
    if committer != "file":
        assert MANIFEST not in objects
        return
    manifest = json.loads(objects[MANIFEST])
    assert {f["path"]: f["num_bytes"] for f in manifest["files"]} == {
        p: len(objects[p]) for p in parts
    }
    assert manifest["num_records"] == rows == sum(f["num_records"] for f in manifest["files"])


def stored(objects: dict[str, bytes], committer: str) -> list[str]:
    """The objects but the manifest, which assert_manifest checks."""
    return sorted(k for k in objects if not (committer == "file" and k == MANIFEST))


@pytest.mark.parametrize("committer", COMMITTERS)
def test_partitioned_write_and_read(s3: S3, runs: dict[str, Any], committer: str) -> None:
    result = outcome(runs, committer, "partitioned")
    assert result["schema"] == "struct<id:bigint,s:string,p:int>"
    assert result["p1"] == list(range(1, 3000, 3))
    assert result["rows"] == [[i, i % 3, "x" * 30] for i in range(3000)]
    objects = s3.objects(f"{committer}/partitioned")
    parts = part_files(objects)
    assert_committed_by(objects, committer, parts)
    assert {p.split("/")[0] for p in parts} == {"p=0", "p=1", "p=2"}
    assert all(re.fullmatch(r"p=[012]/part-\d{5}-.+\.tfrecord", p) for p in parts), parts
    assert_manifest(objects, committer, parts, 3000)
    assert stored(objects, committer) == sorted([*parts, "_SUCCESS"])  # nothing left behind


@pytest.mark.parametrize("committer", COMMITTERS)
def test_append(s3: S3, runs: dict[str, Any], committer: str) -> None:
    assert outcome(runs, committer, "append")["ids"] == list(range(200))
    objects = s3.objects(f"{committer}/append")
    jobs = by_job(part_files(objects))
    assert [len(j) for j in jobs] == [2, 3]  # both jobs' files
    assert_committed_by(objects, committer, jobs[1])
    assert_manifest(objects, committer, jobs[0] + jobs[1], 200)
    assert stored(objects, committer) == sorted([*jobs[0], *jobs[1], "_SUCCESS"])


@pytest.mark.parametrize("committer", COMMITTERS)
def test_overwrite(s3: S3, runs: dict[str, Any], committer: str) -> None:
    assert outcome(runs, committer, "overwrite")["ids"] == list(range(1000, 1050))
    objects = s3.objects(f"{committer}/overwrite")
    parts = part_files(objects)
    assert [len(j) for j in by_job(parts)] == [2]  # only the second job's files
    assert_committed_by(objects, committer, parts)
    assert_manifest(objects, committer, parts, 50)
    assert stored(objects, committer) == sorted([*parts, "_SUCCESS"])


def test_big_file_read_in_ranged_splits(s3: S3, runs: dict[str, Any]) -> None:
    result = outcome(runs, "file", "split")
    objects = s3.objects("file/split")
    (part,) = part_files(objects)
    assert_committed_by(objects, "file", [part])
    size = s3.client.head_object(Bucket=BUCKET, Key=f"file/split/{part}")["ContentLength"]
    assert size > 4 * SPLIT_BYTES
    # One task per SPLIT_BYTES range of the one file ...
    assert result["block_starts"] == list(range(0, size, SPLIT_BYTES))
    # ... reading ranges of the object (206). The classic stream opens at least one per split;
    # Hadoop 3.5's default, the analytics stream, fetches a small object once and caches it.
    ranged = [r for r in s3.requests() if r == ("GET", f"file/split/{part}", 206)]
    classic = tuple(int(x) for x in hadoop_version().split(".")[:2]) < (3, 5)
    assert len(ranged) >= (len(result["block_starts"]) if classic else 1)
    # The reader opens its files for sequential reading, so a split costs a few requests: its
    # start's search seeks back. Opened plainly, S3A's adaptive policy turned random after that
    # seek and fetched the rest 64 KiB a request (one GET per 64 KiB; 16 for these 6 now).
    assert len(ranged) <= 4 * len(result["block_starts"])
    assert result["ids"] == list(range(30000))  # every record once, none lost at a boundary
    assert result["wrong_s"] == []


def test_gzip(s3: S3, runs: dict[str, Any]) -> None:
    expected = [[i, f"row {i}"] for i in range(2000)]
    assert outcome(runs, "file", "gzip")["rows"] == expected
    objects = s3.objects("file/gzip")
    parts = part_files(objects)
    assert len(parts) == 2 and all(p.endswith(".tfrecord.gz") for p in parts), parts
    assert_committed_by(objects, "file", parts)
    # What is stored is gzip of TFRecord framing, read here without Spark.
    columns = [Column("id", "long", "scalar"), Column("s", "binary", "scalar")]
    stored = []
    for p in parts:
        records, error = read_records(gzip.decompress(objects[p]))
        assert error is None
        stored += [decode(r.data, columns, sequence=False) for r in records]
    assert sorted([r["id"], r["s"].decode()] for r in stored) == expected


def test_schema_inference(runs: dict[str, Any]) -> None:
    result = outcome(runs, "file", "inference")
    # A one-element list is a scalar until a longer one is seen (here in the other file).
    assert result["schema"] == (
        "struct<id:bigint,f:float,s:string,b:string,ai:array<bigint>,as_:array<string>>"
    )
    assert result["rows"] == [
        [1, 0.5, "a", "ab", [1, 2], ["x"]],
        [2, -1.5, "b", "", [3], ["y", "z"]],
    ]


@pytest.mark.parametrize("committer", COMMITTERS)
def test_failed_write_leaves_nothing_visible(s3: S3, runs: dict[str, Any], committer: str) -> None:
    result = outcome(runs, committer, "failure")
    assert result["error"] is not None and "boom at 3999" in result["error"]
    # Tasks did write part files, and some committed (FileOutputCommitter: renamed their files
    # into _temporary/0/task_*; magic: saved a .pendingset), before the job failed; the
    # server's log of requests shows it ...
    puts = [k for m, k, _ in s3.requests() if m == "PUT" and k.startswith(f"{committer}/failure/")]
    uploaded = {m for k in puts for m in re.findall(r"part-\d{5}", k)}
    committed = {m for k in puts for m in re.findall(r"task_\w+_m_(\d+)(?:/|\.pendingset)", k)}
    assert len(uploaded) >= 2 and committed, puts
    # ... yet nothing is left under the destination, no upload is pending, and no row is read.
    assert s3.objects(f"{committer}/failure") == {}
    pending = s3.client.list_multipart_uploads(Bucket=BUCKET, Prefix=f"{committer}/failure/")
    assert pending.get("Uploads", []) == []
    assert result.get("rows") == [], result  # the destination exists, empty


def test_statistics_artifact(s3: S3, runs: dict[str, Any]) -> None:
    """TFRecordStatistics.write to s3a://: StatisticsGen's layout, the Python side's bytes, and
    no temporary object left behind."""
    result = outcome(runs, "file", "statistics")
    assert result["written"] == f"s3a://{BUCKET}/file/statistics/Split-train/FeatureStats.pb"
    objects = s3.objects("file/statistics")
    assert sorted(objects) == ["Split-train/FeatureStats.pb"]
    assert objects["Split-train/FeatureStats.pb"] == base64.b64decode(result["expected"])
    assert b"p/x" in objects["Split-train/FeatureStats.pb"]


@pytest.mark.parametrize("committer", COMMITTERS)
def test_tfds_dataset(s3: S3, runs: dict[str, Any], committer: str) -> None:
    result = outcome(runs, committer, "tfds")
    objects = s3.objects(f"{committer}/tfds/s3_ds/1.0.0")
    if committer == "magic":
        # Its commit protocol would skip the job committer that names and counts the shards.
        assert (
            "commit protocol org.apache.spark.internal.io.cloud.PathOutputCommitProtocol"
            in (result["error"])
        )
        assert "dataset_info.json" not in objects
        return
    assert result["folder"] == f"s3a://{BUCKET}/file/tfds/s3_ds/1.0.0"
    assert result["rows"] == [[i, f"t{i}"] for i in range(500)]
    shards = sorted(k for k in objects if ".tfrecord-" in k)
    assert shards == [f"s3_ds-train.tfrecord-{i:05d}-of-00004" for i in range(4)]
    info = json.loads(objects["dataset_info.json"])
    lengths = [int(n) for n in info["splits"][0]["shardLengths"]]
    assert lengths == [len(read_records(objects[s])[0]) for s in shards] and sum(lengths) == 500
    assert not [k for k in objects if k.startswith(("part-", "_count-", "_temporary"))]
