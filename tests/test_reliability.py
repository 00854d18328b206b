"""Writes that lose nothing: a failed write (a dynamic partition overwrite included) leaves no
partial output, and concurrent writes, a failing one among them, keep to their own files. What a
read does with bad input is in test_errors_modes.py."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import spark_tfrecord


def failing_at_700(spark, n: int = 1000, partitions: int = 2):  # type: ignore[no-untyped-def]
    """`id` 0..n-1 over several tasks, one of which fails when it reaches id 700."""
    from pyspark.sql.functions import udf

    @udf("long", useArrow=False)
    def explode_at_700(x):  # type: ignore[no-untyped-def]
        if x == 700:
            raise ValueError("boom on purpose")
        return x

    return spark.range(0, n, numPartitions=partitions).select(explode_at_700("id").alias("id"))


def data_files(path: Path) -> list[str]:
    """Every file a reader would see (not hidden, not _SUCCESS), relative to `path`."""
    found = []
    for parent, dirs, files in os.walk(path):
        # Readers skip hidden folders (a staging `.spark-staging-*`, Hadoop's `_temporary`): not
        # walked, as a task still aborting may remove its attempt's folder meanwhile.
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        here = Path(parent).relative_to(path)
        found += [str(here / f) for f in files if not f.startswith((".", "_"))]
    return sorted(found)


def fails_then_settles(spark, write: Callable[[], object]) -> None:  # type: ignore[no-untyped-def]
    """Runs a write that fails with "boom on purpose", then waits until its job's tasks have all
    ended: Spark fails a job at its first failed task without waiting for the others, which may
    go on writing into Hadoop's `_temporary` for a while, and would race with a next write into
    the same directory (its overwrite deleting the directory, for one)."""
    sc = spark.sparkContext
    group = f"failing-write-{time.monotonic_ns()}"
    sc.setJobGroup(group, group)
    try:
        with pytest.raises(Exception, match="boom on purpose"):
            write()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    # The tracker reads what Spark's status listener has stored, which lags: a stage's count of
    # active tasks is stored at most every 100 ms, so it may still be the 0 of its submission.
    # The failed stage's completion, which stores its true count, was posted before the write
    # raised: once the listener bus is drained, the count only falls, to a 0 that is stored.
    sc._jsc.sc().listenerBus().waitUntilEmpty()
    tracker = sc.statusTracker()

    def running_tasks() -> int:
        jobs = [tracker.getJobInfo(j) for j in tracker.getJobIdsForGroup(group)]
        stages = [tracker.getStageInfo(s) for job in jobs if job for s in job.stageIds]
        assert stages, "the failed write's stages are not known to the status tracker"
        return sum(stage.numActiveTasks for stage in stages if stage)

    deadline = time.monotonic() + 600
    while running_tasks():
        assert time.monotonic() < deadline, "the failed write's tasks still run after 600 s"
        time.sleep(0.1)


def test_failed_write_leaves_no_partial_output(spark, out: Path) -> None:
    """A failed job commits nothing: no `_SUCCESS`, no file a reader sees, no row; a failed
    append keeps what was there. Spark does not wait for a task that is still running when the
    job fails: it may write its attempt's files into Hadoop's `_temporary` after the job's abort
    removed it, and readers skip that directory, so what is asserted is what readers see."""
    df = failing_at_700(spark)
    fails_then_settles(spark, lambda: spark_tfrecord.write(df, str(out)))
    assert not (out / "_SUCCESS").exists()
    assert not out.exists() or data_files(out) == []
    assert not (out / "_tfrecord_manifest.json").exists()
    # A failed append keeps what was there and adds nothing, to the manifest either.
    spark_tfrecord.write(spark.range(5), str(out), mode="overwrite")
    before = {name: (out / name).read_bytes() for name in data_files(out)}
    manifest = (out / "_tfrecord_manifest.json").read_bytes()
    assert before and (out / "_SUCCESS").exists()
    fails_then_settles(spark, lambda: spark_tfrecord.write(df, str(out), mode="append"))
    assert {name: (out / name).read_bytes() for name in data_files(out)} == before
    assert (out / "_tfrecord_manifest.json").read_bytes() == manifest
    assert json.loads(manifest)["num_records"] == 5
    assert (out / "_SUCCESS").exists()
    assert sorted(r.id for r in spark_tfrecord.read(spark, str(out)).collect()) == list(range(5))


def test_concurrent_writes_to_different_paths(spark, tmp_path: Path) -> None:
    errors: list[BaseException] = []

    def job(name: str, start: int) -> None:
        try:
            df = spark.range(start, start + 2000, numPartitions=3)
            spark_tfrecord.write(df, str(tmp_path / name))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=job, args=(n, s)) for n, s in (("a", 0), ("b", 10000))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    a = sorted(r.id for r in spark_tfrecord.read(spark, str(tmp_path / "a")).collect())
    b = sorted(r.id for r in spark_tfrecord.read(spark, str(tmp_path / "b")).collect())
    assert a == list(range(2000)) and b == list(range(10000, 12000))


def test_failed_dynamic_partition_overwrite_changes_nothing(spark, out: Path) -> None:
    spark_tfrecord.write(
        spark.createDataFrame([(1, "x"), (2, "y")], "id long, p string"), str(out), partition_by="p"
    )
    before = data_files(out)
    # Rows for partitions y (to be replaced) and z (new), from tasks of which one fails.
    df = failing_at_700(spark).selectExpr("id", "if(id % 2 = 0, 'y', 'z') as p")
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        fails_then_settles(
            spark, lambda: spark_tfrecord.write(df, str(out), mode="overwrite", partition_by="p")
        )
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert data_files(out) == before
    got = sorted((r.id, r.p) for r in spark_tfrecord.read(spark, str(out)).collect())
    assert got == [(1, "x"), (2, "y")]


def test_a_failing_writer_beside_a_good_one(spark, tmp_path: Path) -> None:
    errors: dict[str, BaseException] = {}

    def job(name: str) -> None:
        try:
            df = failing_at_700(spark) if name == "bad" else spark.range(0, 2000, numPartitions=3)
            spark_tfrecord.write(df, str(tmp_path / name))
        except BaseException as e:
            errors[name] = e

    threads = [threading.Thread(target=job, args=(n,)) for n in ("good", "bad")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(errors) == {"bad"} and "boom on purpose" in str(errors["bad"])
    good = sorted(r.id for r in spark_tfrecord.read(spark, str(tmp_path / "good")).collect())
    assert good == list(range(2000))
    bad = tmp_path / "bad"
    assert not bad.exists() or (data_files(bad) == [] and not (bad / "_SUCCESS").exists())
