"""The Python data source's side of test_python_source_reliability, in a Spark session of its own
that has no jar (Spark allows one per process, and the tests' own has the jar).

``python -m support.jarless_source_child SPEC``, SPEC the path of a JSON object:

- ``"reads"``: a list of ``{"case", "paths", "ddl", "options"}``; each is read with
  ``spark.read.format("tfrecord")`` (the Python data source, found by Spark itself) and emits
  its `outcome`: the rows, or the error's condition and parameters.
- ``"writes"``: a list of ``{"case", "folder", "kills", "once"}``: rows are appended to
  ``folder`` (the earlier data), then more rows are appended through `Killer`, which, once the
  write task of partition 0 has bytes in its staged file, kills that task's Python worker (the
  writer's, with SIGKILL): once (``once``, the retry writes), or on every attempt (the job
  fails). Emits the earlier files' bytes (digests), the second write's error if any, the kills
  (``kills`` is a folder where `Killer` notes them) and the folder's rows read back.

The session is ``local[2,2]``: a task that fails is run once more, as a cluster retries it.
Prints one ``RESULT {json}`` line per case and one for the session (``jar``: where the JVM
loaded the jar's class from, None: nowhere).
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import signal
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from support import QUICK_JVM, emit, jar_of

JAR_CLASS = "io.github.sparktfrecord.TFRecordFileFormat"
#: The rows of a write: an id and a text of 4 KB, so that a batch of rows fills a staged file's
#: buffer, and its bytes reach the file before the task ends.
WRITE_SCHEMA = "id bigint, s string"
WRITE_ROWS = ("id", "repeat(cast(id % 10 AS string), 4000) AS s")
#: Rows per Arrow batch in this session (Spark's default is 10 000, 40 MB of these rows).
BATCH_ROWS = 100
#: How long `Killer` waits for the staged file to have bytes before it gives up.
WAIT_SECONDS = 120.0


def outcome(reader: Any, paths: list[str]) -> dict[str, Any]:
    """What a read of ``paths`` gives (one query: of several files, the union of each file's
    read, its rows ending with the file's place in ``paths``), in a form both routes compare
    by: the rows (each as the ``repr`` of `tfrecord_oracle.normalize`'s form, sorted), or the
    error's condition and parameters (`spark_tfrecord.errors`) and the start of its text."""
    from pyspark.sql import functions as F

    from spark_tfrecord import errors
    from support.tfrecord_oracle import normalize

    try:
        if len(paths) == 1:
            rows = reader.load(paths[0]).collect()
        else:
            reads = [reader.load(p).withColumn("file", F.lit(i)) for i, p in enumerate(paths)]
            union = reads[0]
            for r in reads[1:]:
                union = union.unionAll(r)
            rows = union.collect()
    except Exception as e:
        return {
            "condition": errors.condition(e),
            "parameters": errors.parameters(e),
            "text": str(e)[:3000],
        }
    return {"rows": sorted(repr(normalize(tuple(r))) for r in rows)}


def digest(rows: list[Any]) -> list[list[Any]]:
    """The rows of WRITE_SCHEMA as ``[id, crc32 of s]``, sorted: what both routes compare."""
    return sorted([r[0], zlib.crc32(r[1].encode("utf-8"))] for r in rows)


def files(folder: str) -> dict[str, str]:
    """Every file under ``folder`` (hidden ones too) with its bytes' SHA-256."""
    found = {}
    for p in sorted(Path(folder).rglob("*")):
        if p.is_file():
            found[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return found


class Killer:
    """A ``mapInArrow`` function that passes its batches on and, in the task of partition 0,
    after a few batches, waits until the write task's staged file (``.tfrecord-staging-*/
    part-00000-*.<attempt>``) has bytes, then kills the process that has it open (the
    writer's Python worker) with SIGKILL: on the first attempt only (``once``, a marker file
    in ``kills`` says it was done), or on every one. Each kill is noted in ``kills`` (the
    attempt, the staged file and its size then)."""

    def __init__(self, folder: str, kills: str, once: bool) -> None:
        self.folder, self.kills, self.once = folder, kills, once

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        context = TaskContext.get()
        assert context is not None
        for i, batch in enumerate(batches):
            yield batch
            if context.partitionId() == 0 and i == 3 and self._due():
                self._kill(context.attemptNumber())

    def _due(self) -> bool:
        if not self.once:
            return True
        try:
            os.close(os.open(os.path.join(self.kills, "done"), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return False
        return True

    def _kill(self, attempt: int) -> None:
        pattern = os.path.join(self.folder, ".tfrecord-staging-*", f"part-00000-*.{attempt}")
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            for staged in glob.glob(pattern):
                size = os.path.getsize(staged)
                pid = _holder(staged) if size > 0 else None
                if pid is not None:
                    note = {"attempt": attempt, "staged": staged, "size": size, "pid": pid}
                    with open(os.path.join(self.kills, "kills.jsonl"), "a") as f:
                        f.write(json.dumps(note) + "\n")
                    os.kill(pid, signal.SIGKILL)
                    return
            time.sleep(0.05)
        raise RuntimeError(f"no process wrote bytes into {pattern} in {WAIT_SECONDS} s")


def _holder(path: str) -> int | None:
    """The process (not this one) that has ``path`` open, from /proc; None if none has."""
    for fd in glob.glob("/proc/[0-9]*/fd/*"):
        try:
            if os.readlink(fd) == path:
                pid = int(fd.split("/")[2])
                if pid != os.getpid():
                    return pid
        except OSError:  # a process or descriptor gone meanwhile, or not ours
            continue
    return None


def _write(spark: Any, c: dict[str, Any]) -> dict[str, Any]:
    folder = c["folder"]
    earlier = spark.range(0, 40, 1, 2).selectExpr(*WRITE_ROWS)
    earlier.write.format("tfrecord").mode("append").save(folder)
    before = files(folder)
    rows = spark.range(1000, 5000, 1, 2).selectExpr(*WRITE_ROWS)
    killed = rows.mapInArrow(Killer(folder, c["kills"], c["once"]), WRITE_SCHEMA)
    error = None
    try:
        killed.write.format("tfrecord").mode("append").save(folder)
    except Exception as e:
        error = str(e)[:3000]
    notes = Path(c["kills"], "kills.jsonl")
    kills = [json.loads(x) for x in notes.read_text().splitlines()] if notes.exists() else []
    back = spark.read.format("tfrecord").schema(WRITE_SCHEMA).load(folder).collect()
    return {"before": before, "error": error, "kills": kills, "rows": digest(back)}


def main(spec_path: str) -> None:
    from pyspark.sql import SparkSession

    import spark_tfrecord

    package_root = str(Path(spark_tfrecord.__file__).resolve().parent.parent)
    path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, path) if p)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2,2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.extraJavaOptions", QUICK_JVM)
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(BATCH_ROWS))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")
    emit(jar=jar_of(spark.sparkContext._jvm, JAR_CLASS))
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    for r in spec.get("reads", []):
        reader = spark.read.format("tfrecord").options(**r["options"]).schema(r["ddl"])
        emit(case=r["case"], **outcome(reader, r["paths"]))
    for c in spec.get("writes", []):
        emit(case=c["case"], **_write(spark, c))
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
