"""The manifest every write leaves, `_tfrecord_manifest.json`: each data file with the records
TensorFlow reads from it and its bytes, through the life of a table (plain, partitioned, append,
overwrite, dynamic partition overwrite, sharded names), and two writes committing into one folder
at once. A failed write is in test_reliability.py, a killed executor's in test_cluster.py, a
Connect client's in test_connect.py and the object store's in test_s3.py."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import spark_tfrecord

MANIFEST = "_tfrecord_manifest.json"
LOCK = "_tfrecord_manifest.lock"
TF_COMPRESSION = {"none": "", "gzip": "GZIP", "deflate": "ZLIB"}


def data_files(folder: Path) -> dict[str, int]:
    """What a reader sees under `folder` (no hidden file or folder), with each file's bytes."""
    return {
        p.relative_to(folder).as_posix(): p.stat().st_size
        for p in folder.rglob("*")
        if p.is_file()
        and not any(part.startswith(("_", ".")) for part in p.relative_to(folder).parts)
    }


def checked(tf: Any, folder: Path) -> dict[str, Any]:
    """The folder's manifest, once it is shown to name exactly the data files there, with their
    bytes, each with the number of records TensorFlow reads from it."""
    manifest: dict[str, Any] = json.loads((folder / MANIFEST).read_text())
    assert manifest["format"] == "spark-tfrecord-manifest" and manifest["version"] == 1
    files = manifest["files"]
    assert [f["path"] for f in files] == sorted(f["path"] for f in files)
    assert {f["path"]: f["num_bytes"] for f in files} == data_files(folder)
    for f in files:
        dataset = tf.data.TFRecordDataset(
            str(folder / f["path"]), compression_type=TF_COMPRESSION[f["compression"]]
        )
        assert f["num_records"] == sum(1 for _ in dataset), f
    assert manifest["num_records"] == sum(f["num_records"] for f in files)
    assert manifest["num_bytes"] == sum(f["num_bytes"] for f in files)
    return manifest


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_a_write_counts_what_tensorflow_reads(spark, tf, out: Path, compression: str) -> None:
    rows = [
        (i, [i * 0.5, 1.0, -0.0], None if i % 4 == 0 else f"s{i}", list(range(i % 3)))
        for i in range(41)
    ]
    schema = "id long not null, x array<float>, s string, v array<long>"
    df = spark.createDataFrame(rows, schema).repartition(3)
    spark_tfrecord.write(df, str(out), compression=compression)
    manifest = checked(tf, out)
    assert manifest["num_records"] == 41 and len(manifest["files"]) == 3
    assert {f["compression"] for f in manifest["files"]} == {compression}
    assert manifest["record_type"] == "Example"
    assert manifest["schema"] == "id BIGINT NOT NULL,x ARRAY<FLOAT>,s STRING,v ARRAY<BIGINT>"
    assert [f["name"] for f in manifest["schema_json"]["fields"]] == ["id", "x", "s", "v"]
    assert manifest["partition_columns"] == []
    # A null string is a record without the feature: 0 values.
    assert manifest["features"] == {
        "id": {"min": 1, "max": 1},
        "x": {"min": 3, "max": 3},
        "s": {"min": 0, "max": 1},
        "v": {"min": 0, "max": 2},
    }
    assert "feature_lists" not in manifest


def test_the_life_of_a_partitioned_table(spark, tf, out: Path) -> None:
    def rows(ids: range, day: int) -> Any:
        return spark.range(ids.start, ids.stop, numPartitions=2).selectExpr(
            "id", f"{day} AS day", "array(id, id) AS pair"
        )

    def spark_count() -> int:
        return int(spark_tfrecord.read(spark, str(out)).count())

    spark_tfrecord.write(rows(range(0, 30), 1).union(rows(range(30, 50), 2)), str(out),
                         partition_by="day", compression="gzip")  # fmt: skip
    manifest = checked(tf, out)
    assert manifest["partition_columns"] == ["day"] and manifest["schema"] == (
        "id BIGINT NOT NULL,pair ARRAY<BIGINT> NOT NULL"
    )
    assert {f["path"].split("/")[0] for f in manifest["files"]} == {"day=1", "day=2"}
    assert manifest["num_records"] == 50 == spark_count()

    # An append adds its files (a new partition's and an existing one's) to the manifest.
    spark_tfrecord.write(rows(range(50, 60), 2).union(rows(range(60, 65), 3)), str(out),
                         partition_by="day", mode="append")  # fmt: skip
    manifest = checked(tf, out)
    assert manifest["num_records"] == 65 == spark_count()
    assert {f["compression"] for f in manifest["files"]} == {"gzip", "none"}

    # A dynamic partition overwrite replaces the files of the partitions it writes, only.
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        spark_tfrecord.write(rows(range(100, 103), 2), str(out), partition_by="day",
                             mode="overwrite")  # fmt: skip
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    manifest = checked(tf, out)
    by_day: dict[str, int] = {}
    for f in manifest["files"]:
        day = f["path"].split("/")[0]
        by_day[day] = by_day.get(day, 0) + f["num_records"]
    assert by_day == {"day=1": 30, "day=2": 3, "day=3": 5}
    assert manifest["num_records"] == 38 == spark_count()

    # An overwrite starts the manifest again.
    spark_tfrecord.write(rows(range(0, 7), 4), str(out), partition_by="day", mode="overwrite")
    manifest = checked(tf, out)
    assert manifest["num_records"] == 7 == spark_count()
    assert {f["path"].split("/")[0] for f in manifest["files"]} == {"day=4"}


def test_sharded_names_and_num_shards(spark, tf, out: Path) -> None:
    df = spark.range(0, 10, numPartitions=3)
    spark_tfrecord.write(df, str(out / "named"), shard_prefix="train", num_shards=5)
    manifest = checked(tf, out / "named")
    assert [f["path"] for f in manifest["files"]] == [f"train-0000{i}-of-00005" for i in range(5)]
    assert manifest["num_records"] == 10
    # numShards without shardPrefix: balanced (the session has the extensions), and with more
    # shards than rows the files of no record are added, and counted.
    df.write.format("tfrecord").option("numShards", 4).save(str(out / "plain"))
    manifest = checked(tf, out / "plain")
    assert sorted(f["num_records"] for f in manifest["files"]) == [2, 2, 3, 3]
    df.write.format("tfrecord").option("numShards", 12).save(str(out / "more"))
    manifest = checked(tf, out / "more")
    assert sorted(f["num_records"] for f in manifest["files"]) == [0, 0] + [1] * 10


def test_a_folder_with_files_it_did_not_count_keeps_no_manifest(spark, tf, out: Path) -> None:
    """Appending to files that another tool wrote: no manifest, rather than one missing them."""
    out.mkdir()
    with tf.io.TFRecordWriter(str(out / "tf-written.tfrecord")) as writer:
        writer.write(b"not an example, but a record")
    spark_tfrecord.write(spark.range(3), str(out), mode="append", record_type="Example")
    assert not (out / MANIFEST).exists()


def test_two_appends_at_once_are_both_counted(spark, tf, out: Path) -> None:
    spark_tfrecord.write(spark.range(0, 10, numPartitions=2), str(out))
    errors: list[BaseException] = []

    def append(start: int) -> None:
        try:
            df = spark.range(start, start + 500, numPartitions=3)
            spark_tfrecord.write(df, str(out), mode="append")
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=append, args=(s,)) for s in (1000, 2000)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    manifest = checked(tf, out)
    assert manifest["num_records"] == 1010 == spark_tfrecord.read(spark, str(out)).count()


def test_a_commit_waits_for_the_folder_lock_then_fails_clearly(spark, tf, out: Path) -> None:
    """While another commit holds the folder's lock, a write waits for it
    (`spark.tfrecord.manifest.lockWait` seconds), then fails naming the lock and leaves the folder
    as it was; once the lock is released, a waiting write commits and is counted."""
    spark_tfrecord.write(spark.range(0, 10, numPartitions=2), str(out))
    before = {name: (out / name).read_bytes() for name in [*data_files(out), MANIFEST]}
    (out / LOCK).write_text("another write")
    spark.conf.set("spark.tfrecord.manifest.lockWait", "1")
    try:
        with pytest.raises(Exception, match="Another write is committing into") as failure:
            spark_tfrecord.write(spark.range(10, 20), str(out), mode="append")
        assert LOCK in str(failure.value)
    finally:
        spark.conf.unset("spark.tfrecord.manifest.lockWait")
    assert {name: (out / name).read_bytes() for name in [*data_files(out), MANIFEST]} == before

    # The default wait: the lock goes while the write waits at its commit (its job done).
    done = threading.Event()
    errors: list[BaseException] = []

    def append() -> None:
        try:
            spark_tfrecord.write(spark.range(10, 20, numPartitions=2), str(out), mode="append")
        except BaseException as e:
            errors.append(e)
        finally:
            done.set()

    tracker = spark.sparkContext.statusTracker()
    group = "manifest-lock-wait"
    thread = threading.Thread(target=lambda: (spark.sparkContext.setJobGroup(group, group),
                                              append()))  # fmt: skip
    thread.start()
    # The write's job ran and ended; the write has not returned: it waits at its commit.
    while not (tracker.getJobIdsForGroup(group) and not tracker.getActiveJobsIds()):
        assert not done.wait(0.05), errors
    assert not done.is_set()
    (out / LOCK).unlink()
    thread.join()
    assert errors == []
    manifest = checked(tf, out)
    assert manifest["num_records"] == 20
    assert not (out / LOCK).exists()
