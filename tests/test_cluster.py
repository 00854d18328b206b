"""The data source on a Spark standalone cluster: executors are JVMs of their own.

A master and two one-core workers run from the installed pyspark's scripts
(`support.standalone`); the application's driver is a child process
(`python -m support.cluster_driver URL`), whose session gets the jar only from
`spark_tfrecord.configure` (`spark.jars`): the executors fetch it from the driver, nothing else
puts it on their class path. The tests ask the driver
for one scenario each and assert on what it returns: partitioned writes and reads of every
record type and gzip, a big file read in splits by both executors, inference, count(),
PERMISSIVE, and a write (with index files) that survives an executor JVM killed with SIGKILL
in the middle.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from support.cluster_driver import BIG_ROWS, BLOCKED, KILL_PARTITIONS, KILL_ROWS, SPLIT_BYTES
from support.standalone import SPARK_HOME, Cluster, Driver, standalone_cluster, tail, wait_for
from support.tfrecord_bytes import (
    entry,
    example,
    feature,
    index_lines,
    int64_list_packed,
    write_records,
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with standalone_cluster(tmp_path_factory.mktemp("cluster")) as running:
        yield running


@pytest.fixture(scope="module")
def driver(cluster: Cluster) -> Iterator[Driver]:
    # The executors start Python workers with the driver's interpreter (a venv's, here).
    env = {"PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    child = Driver("support.cluster_driver", [cluster.url], cluster.root, env)
    try:
        yield child
    finally:
        child.stop()


@pytest.fixture(scope="module")
def app(driver: Driver, cluster: Cluster) -> dict[str, Any]:
    return driver.run("start")  # type: ignore[no-any-return]


# The tests run in this order; the last one replaces an executor.


def test_tasks_run_in_two_executor_jvms(cluster: Cluster, app: dict[str, Any]) -> None:
    jvms = {(Path(d), pid) for d, pid in app["where"]}
    live = cluster.executors(app["app"])
    assert sorted(live) == app["executors"] == ["0", "1"]
    # Both executor JVMs (found by their command line, under this cluster's work dirs) ran
    # tasks, and they belong to different workers.
    assert {(d.name, pid) for d, pid in jvms} == set(live.items())
    assert {d.parent.parent for d, _ in jvms} == set(cluster.work_dirs)
    # The jar came from spark.jars alone: each executor fetched it from the driver.
    jar = Path(app["jars"])
    assert jar.name.startswith("spark-tfrecord-") and app["jars"] == str(jar)
    for d, _ in jvms:
        assert [p.name for p in d.rglob("*.jar")] == [jar.name]
    # Nothing else puts it on their class path.
    assert not list((SPARK_HOME / "jars").glob("spark-tfrecord*"))
    for pid in live.values():
        assert b"spark-tfrecord" not in Path(f"/proc/{pid}/cmdline").read_bytes()


@pytest.mark.usefixtures("app")
def test_partitioned_round_trips_and_inference(driver: Driver, tmp_path: Path) -> None:
    got = driver.run("round_trips", out=str(tmp_path))
    ids = range(300)
    assert got["Example"]["schema"] == "struct<id:bigint,x:array<float>,s:string,p:int>"
    assert got["Example"]["rows"] == sorted(
        ([i, [i / 2, 0.25], f"s{i}", i % 3] for i in ids), key=str
    )
    assert got["SequenceExample"]["schema"] == "struct<id:bigint,steps:array<array<bigint>>,p:int>"
    assert got["SequenceExample"]["rows"] == sorted(
        ([i, [[i, i + 1], [i * 2]], i % 2] for i in ids), key=str
    )
    assert got["ByteArray"]["schema"] == "struct<byteArray:binary,p:int>"
    assert got["ByteArray"]["rows"] == sorted(([f"record-{i}", i % 2] for i in ids), key=str)
    assert got["gzip"]["schema"] == "struct<id:bigint,p:int>"
    assert got["gzip"]["rows"] == sorted(([i, i % 3] for i in ids), key=str)
    for name, parts in [("Example", 3), ("SequenceExample", 2), ("ByteArray", 2), ("gzip", 3)]:
        dirs = sorted(p.name for p in (tmp_path / name).iterdir() if p.is_dir())
        assert dirs == [f"p={k}" for k in range(parts)], name
    files = sorted((tmp_path / "gzip").glob("p=*/part-*"))
    assert files and all(f.name.endswith(".tfrecord.gz") for f in files)
    assert all(gzip.decompress(f.read_bytes()) for f in files)


def test_big_file_split_across_both_executors(
    driver: Driver, cluster: Cluster, app: dict[str, Any], tmp_path: Path
) -> None:
    got = driver.run("split_read", out=str(tmp_path / "big"))
    files = sorted((tmp_path / "big").glob("part-*"))
    assert len(files) == 1 and files[0].stat().st_size > 4_000_000
    tasks = [t for t in got["tasks"] if t[2]]
    starts = [s for _, task_starts, _ in tasks for s in task_starts]
    assert len(starts) == len(set(starts)) >= files[0].stat().st_size // SPLIT_BYTES
    assert all(len(task_starts) == 1 for _, task_starts, _ in tasks)
    # Every id exactly once, with its own value, though records straddle the split boundaries.
    rows = sorted(row for _, _, task_rows in tasks for row in task_rows)
    assert rows == [[i, f"s{i}"] for i in range(BIG_ROWS)]
    assert got["count"] == BIG_ROWS
    readers = {Path(d) for d, _, _ in tasks}
    assert {d.parent.parent for d in readers} == set(cluster.work_dirs)
    assert {d.parent.name for d in readers} == {app["app"]}


@pytest.mark.usefixtures("app")
def test_permissive_corrupt_record_column(driver: Driver, tmp_path: Path) -> None:
    malformed = write_records(
        tmp_path / "m" / "a.tfrecord",
        [example(entry(b"x", feature("int64", int64_list_packed([5])))), b"\x0a\x05\x0a"],
    )
    assert driver.run("permissive", path=str(malformed)) == [[5, None], [None, "0a050a"]]


@pytest.mark.usefixtures("app")
def test_a_tfds_dataset_written_by_executors(driver: Driver, tmp_path: Path) -> None:
    import tensorflow_datasets as tfds

    got = driver.run("tfds_dataset", out=str(tmp_path))
    expected = [
        [i, f"t{i}", [[[0.125 * k, 0.25, 0.5, 0.75], k] for k in range(1, i % 3 + 1)]]
        for i in range(300)
    ]
    assert got["rows"] == expected
    folder = Path(got["folder"])
    assert sorted(p.name for p in folder.glob("cluster_ds-train.tfrecord-*")) == [
        f"cluster_ds-train.tfrecord-{i:05d}-of-00003" for i in range(3)
    ]
    builder = tfds.builder_from_directory(str(folder))
    assert builder.info.splits["train"].num_examples == 300
    loaded = sorted(
        [int(e["id"]), e["text"].decode(), [[list(map(float, b)), int(k)] for b, k in
         zip(e["objects"]["bbox"], e["objects"]["label"])]]
        for e in tfds.as_numpy(builder.as_dataset(split="train"))
    )  # fmt: skip
    assert loaded == expected


def test_write_survives_a_killed_executor(
    driver: Driver, cluster: Cluster, app: dict[str, Any], tmp_path: Path
) -> None:
    """SIGKILL of the executor JVM that runs partition BLOCKED's first attempt, mid-write.

    The kill lands while that attempt is held after handing the writer its rows: its attempt
    file under Hadoop's `_temporary` holds some of them, the rest are in pipes and buffers, and
    it has not asked to commit. The points it may land on are those of the other executor's
    tasks: (a) none of them started yet, (b) one writing its file, (c) one committing it, (d)
    all done. Whatever the point, the committed output holds every row exactly once, one file
    per partition with its index, each partition's rows from one attempt, BLOCKED's from a
    later attempt in another executor; the killed attempt's file goes with the job's commit.
    """
    out, markers, release = tmp_path / "out", tmp_path / "markers", tmp_path / "release"
    markers.mkdir()
    driver.send("kill_write", out=str(out), markers=str(markers), release=str(release))
    answered = False

    def why() -> str:
        return f"{tail(driver.log)}\n{cluster.log_tails()}"

    try:
        marker = markers / f"{BLOCKED}-0"
        wait_for(marker.exists, "the blocked task started", 300, why)
        victim = Path(marker.read_text())
        # Mid-write: the blocked task's attempt file holds some of its rows.
        pattern = f"_temporary/*/_temporary/attempt_*/part-{BLOCKED:05d}-*"
        wait_for(
            lambda: [f for f in out.glob(pattern) if f.stat().st_size > 0],
            "the blocked task's attempt file has data",
            300,
            lambda: f"{sorted(out.rglob('*'))}\n{why()}",
        )
        pid = cluster.executors(app["app"])[victim.name]
        os.kill(pid, signal.SIGKILL)
        got = driver.result("kill_write", why=cluster.log_tails)
        answered = True
    finally:
        release.touch()
        if not answered:
            with suppress(AssertionError):
                driver.result("kill_write")
    # Every row exactly once, each partition's from one attempt; the blocked partition's from a
    # later attempt, run by an executor other than the killed one. (Which attempt wrote the
    # other partitions is the scheduler's business: the first, unless a task failed.)
    ids = [r[0] for r in got["rows"]]
    assert ids == list(range(KILL_PARTITIONS * KILL_ROWS))
    by_part: dict[int, set[tuple[int, str]]] = {}
    for _, part, attempt, executor, _ in got["rows"]:
        by_part.setdefault(part, set()).add((attempt, executor))
    assert sorted(by_part) == list(range(KILL_PARTITIONS))
    assert all(len(runs) == 1 for runs in by_part.values()), by_part
    ((attempt, executor),) = by_part[BLOCKED]
    assert attempt >= 1 and executor != victim.name
    # A replacement executor took the killed one's place.
    assert victim.name not in got["executors"] and len(got["executors"]) == 2
    # No attempt's leftovers: one committed file per partition, nothing else but _SUCCESS.
    # Each committed file has its index, which the killed attempt's leftovers did not replace.
    every = sorted(
        p.relative_to(out).as_posix() for p in out.rglob("*") if not p.name.startswith(".")
    )
    names = [n for n in every if not n.endswith(".idx") and n != "_tfrecord_manifest.json"]
    assert [n for n in every if n.endswith(".idx")] == sorted(f"_{n}.idx" for n in names[1:])
    # The manifest counts the committed files only: the killed attempt's leftovers are in none.
    manifest = json.loads((out / "_tfrecord_manifest.json").read_text())
    rows_in = Counter(r[4].rsplit("/", 1)[-1] for r in got["rows"])
    assert {f["path"]: (f["num_records"], f["num_bytes"]) for f in manifest["files"]} == {
        n: (rows_in[n], (out / n).stat().st_size) for n in names[1:]
    }
    assert manifest["num_records"] == KILL_PARTITIONS * KILL_ROWS
    for n in names[1:]:
        assert (out / f"_{n}.idx").read_text() == index_lines((out / n).read_bytes())
    assert names[0] == "_SUCCESS" and len(names) == KILL_PARTITIONS + 1
    assert sorted(n[: len("part-00000")] for n in names[1:]) == [
        f"part-{i:05d}" for i in range(KILL_PARTITIONS)
    ]
    assert {r[4].rsplit("/", 1)[-1] for r in got["rows"]} == set(names[1:])
