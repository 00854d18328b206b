"""The application's driver of test_cluster, run as ``python -m support.cluster_driver URL``.

Its session gets the jar only from `spark_tfrecord.configure` (`spark.jars`): the executors
fetch it from the driver, nothing else puts it on their class path. It serves the scenarios
that test_cluster asks for by name (`support.standalone.serve`) and answers each with JSON.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from support import QUICK_JVM
from support.standalone import serve, wait_for

BIG_ROWS = 50_000  # about 5 MB in one file
SPLIT_BYTES = 256 * 1024
KILL_PARTITIONS, KILL_ROWS = 8, 10  # rows per partition of the write that loses an executor
BLOCKED = 0  # the partition whose first attempt waits to be killed
PAD = 20_000  # bytes per row of that partition: enough to reach the writer through pipes

# Functions that run in Python workers on executors are pickled by value from here (__main__),
# so they use only the standard library and pyspark.

spark: Any = None


def where() -> list[Any]:
    """Where a Python worker runs: its executor's directory and the executor JVM's pid."""
    pid = os.getpid()
    while pid > 1:
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        if Path(f"/proc/{pid}/comm").read_text().strip() == "java":
            return [os.getcwd(), pid]
    raise RuntimeError("no JVM among this Python worker's ancestors")


def on_both_executors(markers: str) -> None:
    """Holds a task until tasks have started on both executors (each leaves its executor's id in
    `markers`). A held task keeps its executor's one core, so Spark gives the next task to the
    other executor: which executor runs which task is the scheduler's choice, that both run one
    is then certain."""
    import time

    Path(markers, os.path.basename(os.getcwd())).touch()
    end = time.monotonic() + 300
    while len(os.listdir(markers)) < 2:
        if time.monotonic() > end:
            raise RuntimeError(f"no task started on the other executor: {os.listdir(markers)}")
        time.sleep(0.05)


def executor_ids() -> list[str]:
    ids = spark.sparkContext._jsc.sc().getExecutorIds().mkString(",")
    return sorted(x for x in ids.split(",") if x)


def start() -> dict[str, Any]:
    """Wait for both executors; say which JVMs ran the tasks of a first job (both do)."""
    wait_for(lambda: len(executor_ids()) == 2, "two executors registered", 240, lambda: "")
    markers = Path("start-markers").resolve()  # under the driver's own directory
    markers.mkdir()

    def task(_: Iterable[int]) -> list[Any]:
        on_both_executors(str(markers))
        return [where()]

    tasks = spark.sparkContext.parallelize(range(8), 8).mapPartitions(task)
    return {
        "app": spark.sparkContext.applicationId,
        "jars": spark.conf.get("spark.jars"),
        "executors": executor_ids(),
        "where": tasks.collect(),
    }


def round_trips(out: str) -> dict[str, Any]:
    """Partitioned writes and inferred reads of each record type, and gzip."""
    rng = spark.range(0, 300, 1, 4)
    p3, p2 = "cast(id % 3 as string) as p", "cast(id % 2 as string) as p"
    cases: dict[str, tuple[str, dict[str, str], list[str]]] = {
        "Example": (
            "Example",
            {},
            ["id", p3, "array(cast(id / 2 as float), 0.25f) as x", "concat('s', id) as s"],
        ),
        "SequenceExample": (
            "SequenceExample",
            {},
            ["id", p2, "array(array(id, id + 1), array(id * 2)) as steps"],
        ),
        "ByteArray": ("ByteArray", {}, ["cast(concat('record-', id) as binary) as payload", p2]),
        "gzip": ("Example", {"compression": "gzip"}, ["id", p3]),
    }
    result = {}
    for name, (record_type, options, columns) in cases.items():
        path = f"{out}/{name}"
        df = rng.selectExpr(*columns)
        writer = df.write.format("tfrecord").option("recordType", record_type)
        writer.options(**options).partitionBy("p").save(path)
        # decoder=generated: the fast path, on the executors.
        reader = spark.read.format("tfrecord").option("decoder", "generated")
        back = reader.option("recordType", record_type).load(path)
        rows = [
            [x.decode() if isinstance(x, (bytes, bytearray)) else x for x in r]
            for r in back.collect()
        ]
        result[name] = {"schema": back.schema.simpleString(), "rows": sorted(rows, key=str)}
    return result


def split_read(out: str) -> dict[str, Any]:
    """One big file read in small splits: which executor read which split (both read some),
    and the rows."""
    big = spark.range(0, BIG_ROWS, 1, 4).selectExpr(
        "id", "concat('s', id) as s", "repeat('x', 60) as pad"
    )
    big.coalesce(1).write.format("tfrecord").save(out)
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(SPLIT_BYTES))
    try:
        df = (
            spark.read.format("tfrecord")
            .schema("id long, s string")
            .option("decoder", "generated")
            .load(out)
        )

        markers = f"{out}-markers"
        os.mkdir(markers)

        def task(rows: Iterable[Any]) -> list[Any]:
            on_both_executors(markers)
            rows = list(rows)
            starts = sorted({r.file_block_start for r in rows})
            return [[where()[0], starts, [[r.id, r.s] for r in rows]]]

        tasks = df.select("id", "s", "_metadata.file_block_start").rdd.mapPartitions(task)
        return {"tasks": tasks.collect(), "count": df.count()}
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")


def permissive(path: str) -> list[Any]:
    df = (
        spark.read.format("tfrecord")
        .option("mode", "PERMISSIVE")
        .schema("x long, _corrupt_record binary")
        .load(path)
    )
    return [
        [r.x, None if r._corrupt_record is None else r._corrupt_record.hex()] for r in df.collect()
    ]


def kill_write(out: str, markers: str, release: str) -> dict[str, Any]:
    """A write whose partition BLOCKED waits, in its first attempt, after handing the writer its
    rows, until the test has killed its executor (`release` ends the wait if it never does)."""
    before = set(executor_ids())

    def rows(index: int, ids: Iterable[int]) -> Iterator[Any]:
        import time

        from pyspark import TaskContext

        attempt = TaskContext.get().attemptNumber()
        executor = os.path.basename(os.getcwd())
        for i in ids:
            yield (i, index, attempt, executor, "x" * PAD if index == BLOCKED else "")
        if index == BLOCKED and attempt == 0:
            Path(markers, f"{index}-{attempt}").write_text(os.getcwd())
            end = time.monotonic() + 900  # longer than the test waits before its kill
            while not os.path.exists(release):
                if time.monotonic() > end:
                    raise RuntimeError("the test did not kill this task's executor")
                time.sleep(0.1)

    data = spark.sparkContext.parallelize(
        range(KILL_PARTITIONS * KILL_ROWS), KILL_PARTITIONS
    ).mapPartitionsWithIndex(rows)
    df = spark.createDataFrame(data, "id long, part int, attempt int, executor string, pad string")
    df.write.format("tfrecord").option("writeIndex", "true").save(out)
    back = spark.read.format("tfrecord").schema("id long, part int, attempt int, executor string")
    found = back.load(out).selectExpr("*", "input_file_name() as file").collect()
    wait_for(
        lambda: len(executor_ids()) == 2 and set(executor_ids()) != before,
        "a replacement executor",
        240,
        lambda: str(executor_ids()),
    )
    return {"rows": sorted([list(r) for r in found]), "executors": executor_ids()}


def tfds_dataset(out: str) -> dict[str, Any]:
    """A TFDS dataset written by the executors (its job committer runs on the driver), and read
    back by them."""
    import spark_tfrecord

    df = spark.range(0, 300, 1, 4).selectExpr(
        "id",
        "concat('t', id) as text",
        "transform(slice(array(1, 2), 1, cast(id % 3 as int)), k -> named_struct('bbox', "
        "array(0.125f * k, 0.25f, 0.5f, 0.75f), 'label', cast(k as bigint))) as objects",
    )
    m = "tensorflow_datasets.core.features."
    features = {
        "pythonClassName": m + "features_dict.FeaturesDict",
        "featuresDict": {"features": {
            "id": {"pythonClassName": m + "tensor_feature.Tensor",
                   "tensor": {"shape": {}, "dtype": "int64", "encoding": "none"}},
            "text": {"pythonClassName": m + "text_feature.Text", "text": {}},
            "objects": {"pythonClassName": m + "sequence_feature.Sequence", "sequence": {
                "length": "-1", "feature": {
                    "pythonClassName": m + "features_dict.FeaturesDict",
                    "featuresDict": {"features": {
                        "bbox": {"pythonClassName": m + "bounding_boxes.BBoxFeature",
                                 "boundingBox": {"shape": {"dimensions": ["4"]},
                                                 "dtype": "float32"}},
                        "label": {"pythonClassName": m + "class_label_feature.ClassLabel",
                                  "classLabel": {"numClasses": "3"}}}}}}}}},
    }  # fmt: skip
    folder = spark_tfrecord.write_tfds(df, out, "cluster_ds", "train", num_shards=3,
                                       features=features)  # fmt: skip
    back = spark_tfrecord.read_tfds(spark, folder, "train")
    return {
        "folder": folder,
        "rows": sorted(
            [r.id, r.text, [[o.bbox, o.label] for o in r.objects]] for r in back.collect()
        ),
    }


SCENARIOS = {
    f.__name__: f for f in (start, round_trips, split_read, permissive, kill_write, tfds_dataset)
}


def main(master: str) -> None:
    global spark
    from pyspark.sql import SparkSession

    import spark_tfrecord

    builder = (
        SparkSession.builder.master(master)
        .appName("spark-tfrecord-cluster-test")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.executor.memory", "512m")
        .config("spark.driver.extraJavaOptions", QUICK_JVM)
        .config("spark.executor.extraJavaOptions", QUICK_JVM)
        .config("spark.sql.session.timeZone", "UTC")
    )
    spark = spark_tfrecord.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    try:
        serve(SCENARIOS)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
