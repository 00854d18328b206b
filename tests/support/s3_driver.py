"""The Spark driver of test_s3, in a process of its own (the test's session cannot take new
jars): every scenario through s3a://, with each committer it is asked for.

``python -m support.s3_driver CONFIG`` takes one JSON argument: ``conf`` (the session's
configuration: the S3A jars and the endpoint), ``bucket``, ``scenarios`` (committer -> names
of the functions below) and ``split_bytes``. It prints every scenario's result, or its
traceback, per committer as one JSON line.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from typing import Any, Callable

from support import QUICK_JVM

PROTOCOLS = {
    "file": "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol",
    "magic": "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol",
}


def tfrecord(spark: Any) -> Any:
    return spark.read.format("tfrecord")


def partitioned(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    df = spark.range(3000).selectExpr("id", "cast(id % 3 as string) as p", "repeat('x', 30) as s")
    df.write.format("tfrecord").partitionBy("p").save(root)
    back = tfrecord(spark).load(root)
    return {
        "schema": back.schema.simpleString(),
        "p1": sorted(r.id for r in back.where("p = 1").collect()),
        "rows": sorted([r.id, r.p, r.s] for r in back.collect()),
    }


def append(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    spark.range(0, 100, 1, 2).write.format("tfrecord").save(root)
    spark.range(100, 200, 1, 3).write.format("tfrecord").mode("append").save(root)
    return {"ids": sorted(r.id for r in tfrecord(spark).schema("id long").load(root).collect())}


def overwrite(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    spark.range(0, 100, 1, 3).write.format("tfrecord").save(root)
    spark.range(1000, 1050, 1, 2).write.format("tfrecord").mode("overwrite").save(root)
    return {"ids": sorted(r.id for r in tfrecord(spark).schema("id long").load(root).collect())}


def split(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    df = spark.range(0, 30000, 1, 1).selectExpr("id", "concat('row ', id) as s")
    df.write.format("tfrecord").save(root)
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(config["split_bytes"]))
    try:
        back = tfrecord(spark).schema("id long, s string").load(root)
        rows = back.select("id", "s", "_metadata.file_block_start").collect()
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    return {
        "block_starts": sorted({r.file_block_start for r in rows}),
        "ids": sorted(r.id for r in rows),
        "wrong_s": [r.id for r in rows if r.s != f"row {r.id}"],
    }


def gzip(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    df = spark.range(0, 2000, 1, 2).selectExpr("id", "concat('row ', id) as s")
    df.write.format("tfrecord").option("compression", "gzip").save(root)
    return {"rows": sorted([r.id, r.s] for r in tfrecord(spark).load(root).collect())}


def inference(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    df = spark.createDataFrame(
        [(1, 0.5, "a", b"ab", [1, 2], ["x"]), (2, -1.5, "b", b"", [3], ["y", "z"])],
        "id long, f double, s string, b binary, ai array<int>, as_ array<string>",
    )
    df.write.format("tfrecord").save(root)  # a file per row: local[2] makes two partitions
    back = tfrecord(spark).load(root)
    return {"schema": back.schema.simpleString(), "rows": sorted(list(r) for r in back.collect())}


def failure(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    # Four tasks, two at a time: the last row of the last one fails, after others have committed.
    df = spark.range(0, 4000, 1, 4).selectExpr(
        "id", "if(id = 3999, cast(raise_error('boom at 3999') as bigint), id) as x"
    )
    try:
        df.write.format("tfrecord").save(root)
        error = None
    except Exception as e:
        error = str(e)
    try:
        back = tfrecord(spark).schema("id long, x long").load(root)
        after: dict[str, Any] = {"rows": [list(r) for r in back.collect()]}
    except Exception as e:
        after = {"read_error": str(e)[:2000]}
    return {"error": error and error[:5000], **after}


def tfds(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    import spark_tfrecord

    df = spark.range(0, 500, 1, 3).selectExpr("id", "concat('t', id) as t")
    try:
        folder = spark_tfrecord.write_tfds(df, root, "s3_ds", "train", num_shards=4)
    except Exception as e:
        return {"error": str(e)[:3000]}
    back = spark_tfrecord.read_tfds(spark, folder, "train")
    return {"folder": folder, "rows": sorted([r.id, r.t] for r in back.collect())}


def statistics(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    """TFRecordStatistics.write, as a Scala job calls it, into an ExampleStatistics artifact on
    S3; the bytes the Python side computes of the same DataFrame, to compare."""
    import base64

    import spark_tfrecord

    df = spark.range(0, 2000, 1, 3).selectExpr(
        "id", "concat('t', id % 7) AS t", "named_struct('x', id / 3) AS p"
    )
    scala = spark._jvm.io.github.sparktfrecord.TFRecordStatistics
    written = scala.write(df._jdf, root, "train", "", {})
    expected = spark_tfrecord.statistics(df, engine="jar")
    return {"written": written, "expected": base64.b64encode(expected).decode()}


SCENARIOS: dict[str, Callable[[Any, str, dict[str, Any]], dict[str, Any]]] = {
    f.__name__: f
    for f in (partitioned, append, overwrite, split, gzip, inference, failure, tfds, statistics)
}


def main(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    from pyspark.sql import SparkSession

    import spark_tfrecord

    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", QUICK_JVM)
    )
    for key, value in config["conf"].items():
        builder = builder.config(key, value)
    spark = spark_tfrecord.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    results: dict[str, dict[str, Any]] = {}
    for committer, scenarios in config["scenarios"].items():
        # Both set every time: Spark 4.3 makes magic the default once spark-hadoop-cloud is
        # loadable.
        spark.conf.set("spark.sql.sources.commitProtocolClass", PROTOCOLS[committer])
        spark.conf.set("fs.s3a.committer.name", committer)
        results[committer] = {}
        for name in scenarios:
            root = f"s3a://{config['bucket']}/{committer}/{name}"
            started = time.monotonic()
            try:
                results[committer][name] = SCENARIOS[name](spark, root, config)
            except Exception:
                results[committer][name] = {"failed": traceback.format_exc()[-8000:]}
            seconds = time.monotonic() - started
            print(f"{committer} {name}: {seconds:.1f} s", file=sys.stderr, flush=True)
    spark.stop()
    return results


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(json.loads(sys.argv[1]))))
