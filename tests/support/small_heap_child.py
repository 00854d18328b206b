"""Run by test_errors_hostile_lengths in a process of its own: a Spark driver with a small heap
reads files whose record headers claim up to 2 GiB, and prints each outcome as one JSON line.

Usage: python -m support.small_heap_child DATA_DIR DRIVER_MEMORY
DATA_DIR holds ``{none,gzip,deflate}/hostile-*`` files (good records with ids 0 and 1, then the
lying header and a few bytes) and ``good/``, one good file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

SMALL_SPLITS = {"spark.sql.files.maxPartitionBytes": "40", "spark.sql.files.openCostInBytes": "0"}


def cases(spark: Any, file: Path) -> list[tuple[str, dict[str, str], Callable[[], Any]]]:
    """(name, SQL confs, query) for every path that reads records."""
    path = str(file)

    def read(**options: str) -> Any:
        return spark.read.format("tfrecord").options(**options)

    def ids(df: Any) -> list[int]:
        return sorted(r.id for r in df.collect())

    found: list[tuple[str, dict[str, str], Callable[[], Any]]] = [
        (f"collect {mode}", {}, lambda m=mode: ids(read(mode=m).schema("id long").load(path)))
        for mode in ("FAILFAST", "PERMISSIVE", "DROPMALFORMED")
    ]
    found += [
        (
            "collect PERMISSIVE with the corrupt-record column",
            {},
            lambda: ids(
                read(mode="PERMISSIVE").schema("id long, _corrupt_record binary").load(path)
            ),
        ),
        ("count", {}, lambda: read().schema("id long").load(path).count()),
        ("ByteArray", {}, lambda: len(read(recordType="ByteArray").load(path).collect())),
        ("inference", {}, lambda: read().load(path).columns),
        (
            "ignoreCorruptFiles",
            {},
            lambda: ids(read(ignoreCorruptFiles="true").schema("id long").load(path)),
        ),
        (
            "ignoreCorruptFiles inference",
            {},
            lambda: read(ignoreCorruptFiles="true").load(path).columns,
        ),
        ("hadoop TFRecordInputFormat", {}, lambda: hadoop_count(spark, path)),
        (
            "TFRecordInspector.countRecords (inspect)",
            {},
            lambda: spark._jvm.io.github.sparktfrecord.tools.TFRecordInspector.countRecords(path),
        ),
    ]
    if file.parent.name == "none":
        found += [
            ("small splits", SMALL_SPLITS, lambda: ids(read().schema("id long").load(path))),
            (
                "small splits ignoreCorruptFiles",
                SMALL_SPLITS,
                lambda: ids(read(ignoreCorruptFiles="true").schema("id long").load(path)),
            ),
            ("small splits hadoop", SMALL_SPLITS, lambda: hadoop_count(spark, path, 40)),
        ]
    return found


def hadoop_count(spark: Any, path: str, split_bytes: int = 0) -> int:
    conf = {}
    if split_bytes:
        conf["mapreduce.input.fileinputformat.split.maxsize"] = str(split_bytes)
    rdd = spark.sparkContext.newAPIHadoopFile(
        path,
        "io.github.sparktfrecord.TFRecordInputFormat",
        "org.apache.hadoop.io.BytesWritable",
        "org.apache.hadoop.io.NullWritable",
        conf=conf,
    )
    return int(rdd.count())


def main() -> int:
    data, memory = Path(sys.argv[1]), sys.argv[2]
    from py4j.protocol import Py4JJavaError

    from spark_tfrecord.testing import local_session

    spark = local_session(app_name="small-heap", conf={"spark.driver.memory": memory})
    emit({"max_heap": spark._jvm.java.lang.Runtime.getRuntime().maxMemory()})
    for file in sorted(p for p in data.rglob("hostile-*") if p.is_file()):
        for name, confs, query in cases(spark, file):
            for key, value in confs.items():
                spark.conf.set(key, value)
            try:
                result: dict[str, Any] = {"value": query()}
            except Py4JJavaError as e:
                cause = e.java_exception
                while cause.getCause() is not None:
                    cause = cause.getCause()
                result = {"error": cause.getClass().getName(), "message": cause.getMessage()}
            finally:
                for key in confs:
                    spark.conf.unset(key)
            # After every hostile query the same session still answers a plain one.
            after = spark.read.format("tfrecord").load(str(data / "good")).count()
            where = f"{file.parent.name}/{file.name}"
            emit({"file": where, "case": name, **result, "after": after})
    spark.stop()
    return 0


def emit(record: dict[str, Any]) -> None:
    print("RESULT " + json.dumps(record), flush=True)


if __name__ == "__main__":
    sys.exit(main())
