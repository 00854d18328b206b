"""Structured Streaming: the tfrecord file source and sink, and exactly once across a crash.

The source picks up files as they land in a directory (`maxFilesPerTrigger` per batch, a schema
or `spark.sql.streaming.schemaInference`). The sink's output is the files its `_spark_metadata`
log lists: TensorFlow reads those. A driver killed with SIGKILL in the middle of a batch and
restarted from its checkpoint gives every input row exactly once to a reader that follows the
log (Spark's batch reader does), while the killed batch's files stay in the directory for a
reader that lists it naively. That test's child driver is `support.streaming_pipeline`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from support import child_env, module_command, tfrecord_files
from support.streaming_pipeline import FILES, ROWS_PER_FILE, SCHEMA, start_pipeline
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    int64_list_packed,
    write_records,
)
from support.tfrecord_oracle import Column, decode, read_records

COLUMNS = [Column("id", "long", "scalar"), Column("name", "binary", "scalar")]
DEADLINE = 600.0  # seconds for any one wait: two cores, shared with other Spark jobs
EPOCH = int(time.time()) - 3600  # landed files are modified at EPOCH + their order, in seconds
Row = tuple[int, str]
T = TypeVar("T")


def record(i: int) -> bytes:
    return example(
        entry(b"id", feature("int64", int64_list_packed([i]))),
        entry(b"name", feature("bytes", bytes_list([f"r{i}".encode()]))),
    )


def land(directory: Path, name: str, ids: range, order: int) -> list[Row]:
    """One TFRecord file of `ids`, moved into `directory` whole (written hidden, then renamed)
    and modified at EPOCH + `order` s, which is the order the file source takes files in."""
    hidden = write_records(directory / f".{name}.tmp", [record(i) for i in ids])
    when = (EPOCH + order) * 10**9
    os.utime(hidden, ns=(when, when))
    hidden.rename(directory / name)
    return [(i, f"r{i}") for i in ids]


def rows(df) -> list[Row]:
    return sorted((r.id, r.name) for r in df.collect())


def collecting(batches: list[tuple[int, list[Row]]]) -> Callable[..., None]:
    """A foreachBatch function that keeps each batch's id and rows."""
    return lambda df, batch_id: batches.append((batch_id, rows(df)))


def wait_for(
    condition: Callable[[], T | None],
    what: str,
    child: subprocess.Popen[bytes] | None = None,
    log: Path | None = None,
) -> T:
    """Polls `condition` until it returns something true; fails after DEADLINE, or at once when
    the child driver has exited."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if child is not None and child.poll() is not None:
            pytest.fail(f"the child driver exited ({child.returncode}) before {what}: {tail(log)}")
        time.sleep(0.2)
    pytest.fail(f"no {what} within {DEADLINE:.0f}s" + (f": {tail(log)}" if log else ""))


def run_to_end(query) -> None:
    """Waits for an availableNow query to finish (and stops it if it does not)."""
    try:
        assert query.awaitTermination(DEADLINE), f"the query did not finish within {DEADLINE}s"
    finally:
        query.stop()


def tail(log: Path | None) -> str:
    return log.read_text(errors="replace")[-5000:] if log and log.exists() else ""


# --- the sink's directory, as a log-following reader and as a naive reader see it -------------


def documented_sink_files() -> Callable[[str], set[str]]:
    """docs/deployment.md's `sink_files`, the way it tells TensorFlow users to list a sink."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "deployment.md").read_text()
    start = doc.index("import json, pathlib, urllib.parse")
    namespace: dict[str, Any] = {}
    exec(doc[start : doc.index("dataset = ", start)], namespace)
    function: Callable[[str], set[str]] = namespace["sink_files"]
    return function


def committed_files(sink: Path) -> set[Path]:
    """The files the sink's `_spark_metadata` log lists, read as docs/deployment.md says."""
    if not (sink / "_spark_metadata").exists():
        return set()
    return {Path(p) for p in documented_sink_files()(str(sink))}


def file_rows(path: Path) -> tuple[list[Row], str | None]:
    """The rows of one part file, read by the pure-Python oracle, and its framing error."""
    records, error = read_records(path.read_bytes())
    decoded = [decode(r.data, COLUMNS, sequence=False) for r in records]
    return [(d["id"], d["name"].decode()) for d in decoded], error and error.what


def naive_view(sink: Path) -> dict[str, tuple[list[Row], str | None]]:
    """What a reader of every part file in the directory gets, ignoring the log: per file (with
    "*" marking files the log does not list), its rows and framing error."""
    committed = committed_files(sink)
    return {("" if f in committed else "*") + f.name: file_rows(f) for f in tfrecord_files(sink)}


def uncommitted_file_with(sink: Path, expected: list[Row]) -> Path | None:
    """A part file the log does not list (yet) that holds exactly `expected`, complete."""
    committed = committed_files(sink)
    for f in set(tfrecord_files(sink)) - committed:
        if file_rows(f) == (expected, None):
            return f
    return None


def in_batch(checkpoint: Path, batch: int) -> bool:
    """The query has planned `batch` (its offsets are logged) and not committed it."""
    return (checkpoint / "offsets" / str(batch)).exists() and not (
        checkpoint / "commits" / str(batch)
    ).exists()


# --- the source -----------------------------------------------------------------------------


def test_source_picks_up_files_as_they_land(spark, tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    batches: list[tuple[int, list[Row]]] = []
    query = (
        spark.readStream.format("tfrecord")
        .schema(SCHEMA)
        .load(str(src))
        .writeStream.foreachBatch(collecting(batches))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start()
    )
    try:
        first = land(src, "a.tfrecord", range(0, 3), 0)
        query.processAllAvailable()
        assert batches == [(0, first)]
        second = land(src, "b.tfrecord", range(10, 13), 1)
        query.processAllAvailable()
    finally:
        query.stop()
    assert batches == [(0, first), (1, second)]


def test_max_files_per_trigger(spark, tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    files = [land(src, f"f{i}.tfrecord", range(10 * i, 10 * i + 3), i) for i in range(6)]
    batches: list[tuple[int, list[Row]]] = []
    query = (
        spark.readStream.format("tfrecord")
        .schema(SCHEMA)
        .option("maxFilesPerTrigger", 2)
        .load(str(src))
        .writeStream.foreachBatch(collecting(batches))
        .trigger(availableNow=True)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start()
    )
    run_to_end(query)
    assert batches == [(b, sorted(files[2 * b] + files[2 * b + 1])) for b in range(3)]


def test_source_needs_a_schema_unless_inference_is_on(spark, tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    expected = land(src, "a.tfrecord", range(5), 0)
    with pytest.raises(Exception, match="Schema must be specified when creating a streaming"):
        spark.readStream.format("tfrecord").load(str(src))
    spark.conf.set("spark.sql.streaming.schemaInference", "true")
    try:
        stream = spark.readStream.format("tfrecord").load(str(src))
    finally:
        spark.conf.unset("spark.sql.streaming.schemaInference")
    assert stream.schema.simpleString() == "struct<id:bigint,name:string>"
    batches: list[tuple[int, list[Row]]] = []
    query = (
        stream.writeStream.foreachBatch(collecting(batches))
        .trigger(availableNow=True)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start()
    )
    run_to_end(query)
    assert batches == [(0, expected)]


def test_sequence_examples_in_gzip_files(spark, tmp_path: Path) -> None:
    src = tmp_path / "in"
    schema = "id long, label string, steps array<array<long>>"
    data = [(1, "a", [[1, 2], [3]]), (2, "b", [[-4]]), (3, None, [[5, 6, 7], [], [8]])]
    (
        spark.createDataFrame(data, schema)
        .coalesce(1)
        .write.format("tfrecord")
        .option("recordType", "SequenceExample")
        .option("compression", "gzip")
        .save(str(src))
    )
    assert [f.name.endswith(".tfrecord.gz") for f in tfrecord_files(src)] == [True]
    got: list[tuple[int, list[object]]] = []
    query = (
        spark.readStream.format("tfrecord")
        .schema(schema)
        .option("recordType", "SequenceExample")
        .load(str(src))
        .writeStream.foreachBatch(
            lambda df, batch_id: got.append((batch_id, sorted(tuple(r) for r in df.collect())))
        )
        .trigger(availableNow=True)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start()
    )
    run_to_end(query)
    assert got == [(0, data)]


# --- the sink -------------------------------------------------------------------------------


@pytest.mark.tensorflow
@pytest.mark.parametrize("partition_by", [[], ["p"]], ids=["flat", "partitioned"])
def test_tensorflow_reads_the_files_the_sink_log_lists(
    spark, tf, tmp_path: Path, partition_by: list[str]
) -> None:
    src, sink = tmp_path / "in", tmp_path / "sink"
    src.mkdir()
    query = (
        spark.readStream.format("tfrecord")
        .schema(SCHEMA)
        .load(str(src))
        .selectExpr("id", "name", "id % 3 as p")
        .writeStream.format("tfrecord")
        .partitionBy(*partition_by)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start(str(sink))
    )
    try:
        expected = land(src, "a.tfrecord", range(0, 5), 0)
        query.processAllAvailable()
        expected += land(src, "b.tfrecord", range(10, 15), 1)
        query.processAllAvailable()
    finally:
        query.stop()
    log = [p.name for p in (sink / "_spark_metadata").iterdir() if not p.name.startswith(".")]
    assert sorted(log) == ["0", "1"]
    files = committed_files(sink)
    assert files == set(tfrecord_files(sink))  # a clean run leaves nothing else
    spec = {
        "id": tf.io.FixedLenFeature([], tf.int64),
        "name": tf.io.FixedLenFeature([], tf.string),
    }
    if not partition_by:
        spec["p"] = tf.io.FixedLenFeature([], tf.int64)
    seen = []
    for f in files:
        directory = f.relative_to(sink).parent.name  # "p=<value>" when partitioned, else ""
        assert directory.startswith("p=") if partition_by else directory == ""
        for raw in tf.data.TFRecordDataset(str(f)):
            parsed = tf.io.parse_single_example(raw, spec)
            p = int(directory[2:]) if partition_by else int(parsed["p"])
            seen.append((int(parsed["id"]), parsed["name"].numpy().decode(), p))
    want = sorted((i, name, i % 3) for i, name in expected)
    assert sorted(seen) == want
    back = spark.read.format("tfrecord").load(str(sink))
    assert sorted((r.id, r.name, r.p) for r in back.collect()) == want


# --- exactly once: a driver killed mid-batch, a query stopped mid-batch ------------------------

HOUR_MS = 3_600_000  # how long HELD is held: for ever, as far as a test is concerned


def pipeline_input(src: Path) -> list[list[Row]]:
    src.mkdir()
    return [
        land(src, f"f{i}.tfrecord", range(100 * i, 100 * i + ROWS_PER_FILE), i)
        for i in range(FILES)
    ]


def wait_mid_batch_1(sink: Path, checkpoint: Path, files: list[list[Row]], **child: Any) -> Path:
    """Until batch 0 is committed and batch 1 is half done: its task for file 2 has written a
    complete file that the sink's log does not list, its task for file 3 waits at HELD."""
    return wait_for(
        lambda: (
            in_batch(checkpoint, 1)
            and (checkpoint / "commits" / "0").exists()
            and uncommitted_file_with(sink, files[2])
        ),
        "batch 1 half written",
        **child,
    )


def kill_session(sid: int) -> None:
    """SIGKILL every live process of session `sid`: the child driver and its JVM (and Python
    workers, were there any: PySpark's daemon keeps them in a process group of their own)."""
    while True:
        members = []
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and os.getsid(int(proc.name)) == sid:
                    state = (proc / "stat").read_text().rpartition(")")[2].split()[0]
                    if state != "Z":  # a zombie is dead already, waiting for its parent
                        members.append(int(proc.name))
            except (ProcessLookupError, FileNotFoundError, PermissionError):
                pass
        if not members:
            return
        for pid in members:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def child_driver(tmp_path: Path, name: str, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
    """The pipeline's child driver (`support.streaming_pipeline`), in a session of its own,
    its output in `name`.log."""
    log = tmp_path / f"{name}.log"
    with log.open("w") as out:
        child = subprocess.Popen(
            module_command("streaming_pipeline", *args),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=child_env(),
        )
    return child, log


def assert_exactly_once(spark, sink: Path, files: list[list[Row]]) -> None:
    """Spark's batch reader, and a reader of the files the log lists, see every row once."""
    expected = sorted(row for f in files for row in f)
    assert rows(spark.read.format("tfrecord").load(str(sink))) == expected
    committed = [row for f in committed_files(sink) for row in file_rows(f)[0]]
    assert sorted(committed) == expected


def uncommitted(view: dict[str, tuple[list[Row], str | None]]) -> dict[str, object]:
    return {name: content for name, content in view.items() if name.startswith("*")}


def exit_status(child: subprocess.Popen[bytes], log: Path) -> int:
    try:
        return child.wait(DEADLINE)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child driver did not finish within {DEADLINE:.0f}s: {tail(log)}")


def whole_batches(view: dict[str, tuple[list[Row], str | None]], files: list[list[Row]]) -> int:
    """How many batches (two input files each) the files the log lists hold, whole and once."""
    committed = sorted(
        row for name, (content, _) in view.items() if name[0] != "*" for row in content
    )
    batches = [sorted(row for f in files[: 2 * n] for row in f) for n in range(FILES // 2 + 1)]
    assert committed in batches, committed
    return batches.index(committed)


@pytest.mark.tensorflow
def test_driver_killed_mid_batch_then_restarted(spark, tf, tmp_path: Path) -> None:
    """SIGKILL of a child driver in batch 1, then a new driver on the same checkpoint.

    The kill lands after batch 0 has committed and batch 1's task for file 2 has written a
    complete file, while its task for file 3 is held at HELD (it cannot end the batch). The
    points it may land on: (a) the JVM dies at once, leaving file 2's file complete and file
    3's empty or absent; (b) on a busy machine the JVM first sees its Python driver die, and
    its shutdown aborts the batch, deleting file 2's file, before its own SIGKILL lands; (c)
    the kill cuts a file short while it is written. Whatever the point, the log lists batch 0
    only, every other file holds the start of file 2 or 3 (complete, cut short or empty), and
    after the restart a reader that follows the log gets every row once, while a reader of
    every file also gets the rows the killed attempt left.
    """
    src, sink, checkpoint = tmp_path / "in", tmp_path / "sink", tmp_path / "checkpoint"
    files = pipeline_input(src)
    paths = [str(p) for p in (src, sink, checkpoint)]
    crashed, log = child_driver(tmp_path, "crashed", *paths, str(HOUR_MS), "processingTime")
    try:
        wait_mid_batch_1(sink, checkpoint, files, child=crashed, log=log)
        kill_session(crashed.pid)
        assert exit_status(crashed, log) == -signal.SIGKILL
    finally:
        kill_session(crashed.pid)
    left = naive_view(sink)
    assert whole_batches(left, files) == 1
    for name, (content, _) in uncommitted(left).items():
        assert any(content == f[: len(content)] for f in files[2:4]), (name, content)
    restarted, log = child_driver(tmp_path, "restarted", *paths, "0", "availableNow")
    try:
        assert exit_status(restarted, log) == 0, tail(log)
    finally:
        kill_session(restarted.pid)
    (result,) = [json.loads(x[7:]) for x in log.read_text().splitlines() if x[:7] == "RESULT "]
    assert result == [[1, 2 * ROWS_PER_FILE], [2, 2 * ROWS_PER_FILE]]  # batch 1 again, then 2
    assert_exactly_once(spark, sink, files)
    # A reader of every part file also gets the killed attempt's files, as they were left.
    naive = naive_view(sink)
    assert whole_batches(naive, files) == FILES // 2
    assert uncommitted(naive) == uncommitted(left)
    seen = Counter(row for content, _ in naive.values() for row in content)
    killed = Counter(row for content, _ in uncommitted(left).values() for row in content)
    assert seen - Counter(row for f in files for row in f) == killed
    # So does TensorFlow, given every part file (a glob of the directory) that the kill did not
    # cut short in the middle of a record.
    whole = [f for f in tfrecord_files(sink) if file_rows(f)[1] is None]
    assert len(whole) >= len(tfrecord_files(sink)) - 1
    dataset = tf.data.TFRecordDataset([str(f) for f in whole])
    examples = [tf.train.Example.FromString(raw.numpy()) for raw in dataset]
    assert Counter(e.features.feature["id"].int64_list.value[0] for e in examples) == Counter(
        i for f in whole for i, _ in file_rows(f)[0]
    )


def aborted(sink: Path, files: list[list[Row]]) -> dict[str, tuple[list[Row], str | None]] | None:
    """The sink's view once the tasks of a stopped batch 1 are done: no file the log does not list
    but, maybe, file 2's, complete (see (b) below). None while a task's file is still there."""
    try:
        view = naive_view(sink)
    except FileNotFoundError:  # a file deleted between its listing and its reading
        return None
    return view if list(uncommitted(view).values()) in ([], [(files[2], None)]) else None


def test_query_stopped_mid_batch_then_restarted(spark, tmp_path: Path) -> None:
    """`query.stop()` in batch 1, then the query again on the same checkpoint.

    The stop lands after batch 0 has committed and batch 1's task for file 2 has written its
    whole file, while its task for file 3 is held at HELD (it cannot end the batch). The points
    it may land on: (a) the task for file 2 has committed and the driver has heard of it: the
    aborted job deletes its file; (b) it has committed and the driver hears of it after the
    abort: the file stays, complete, unlisted; (c) it has not committed: its task's abort deletes
    the file. The task for file 3 is interrupted and its abort deletes its file, wherever it
    was. Whatever the point, the log lists batch 0 only, and after the restart a reader that
    follows the log gets every row once, while a reader of every file also gets file 2's rows
    again when (b) left them.
    """
    src, sink, checkpoint = tmp_path / "in", tmp_path / "sink", tmp_path / "checkpoint"
    files = pipeline_input(src)
    paths = [str(p) for p in (src, sink, checkpoint)]
    query = start_pipeline(spark, *paths, str(HOUR_MS), "processingTime")
    try:
        wait_mid_batch_1(sink, checkpoint, files)
    finally:
        query.stop()
    assert in_batch(checkpoint, 1)
    # The aborted tasks delete their files; the aborted job deletes the files of the tasks the
    # driver knew as committed: file 2's, unless the stop came before the driver heard of it.
    # `stop()` returns once the query's thread has ended, not its tasks: the task for file 3 may
    # still be closing its file (empty, or with every row but HELD) before its abort deletes it.
    # Spark's status tracker cannot tell when it is done (it may show no active task of a stage
    # whose task starts it has not written yet), so what is waited for is what the abort does.
    view = wait_for(lambda: aborted(sink, files), "the stopped batch's tasks to delete their files")
    assert whole_batches(view, files) == 1
    left = uncommitted(view)
    query = start_pipeline(spark, *paths, "0", "availableNow")
    run_to_end(query)
    assert_exactly_once(spark, sink, files)
    assert uncommitted(naive_view(sink)) == left
