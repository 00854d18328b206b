"""The Spark driver of test_gcs, in a process of its own (the test's session cannot take new
jars): writes and reads through gs:// with Google's gcs-connector.

``python -m support.gcs_driver CONFIG`` takes one JSON argument: ``conf`` (the session's
configuration: the connector and the server) and ``bucket``. It prints every scenario's result,
or its traceback, as one JSON line.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any, Callable

from support import QUICK_JVM


def tfrecord(spark: Any) -> Any:
    return spark.read.format("tfrecord")


def frame(spark: Any) -> Any:
    """Rows of every kind a trainer meets, in three partitions of p."""
    return spark.range(0, 3000, 1, 3).selectExpr(
        "id",
        "cast(id % 3 as int) as p",
        "cast(id % 10 as float) / 4 as label",
        "concat('row ', cast(id as string)) as name",
        "slice(array('a', 'bb', 'ccc'), 1, cast(id % 4 as int)) as tags",
    )


def partitioned(spark: Any, root: str) -> dict[str, Any]:
    frame(spark).write.format("tfrecord").partitionBy("p").save(root)
    back = tfrecord(spark).load(root)  # inference, then a scan of every file
    return {
        "schema": back.schema.simpleString(),
        "rows": sorted([r.id, r.p, r.label, r.name, list(r.tags)] for r in back.collect()),
        "p1_names": sorted(r.name for r in back.where("p = 1").select("name").collect()),
    }


def modes(spark: Any, root: str) -> dict[str, Any]:
    """gzip, append, overwrite: the ids after each."""
    write = spark.range(0, 100, 1, 2).write.format("tfrecord").option("compression", "gzip")
    write.save(root)
    spark.range(100, 150, 1, 2).write.format("tfrecord").mode("append").save(root)
    appended = sorted(r.id for r in tfrecord(spark).schema("id long").load(root).collect())
    spark.range(1000, 1010, 1, 1).write.format("tfrecord").mode("overwrite").save(root)
    overwritten = sorted(r.id for r in tfrecord(spark).schema("id long").load(root).collect())
    return {"appended": appended, "overwritten": overwritten}


def failed_append(spark: Any, root: str) -> dict[str, Any]:
    """A write, then an append whose last task fails after others have committed theirs."""
    spark.range(0, 100, 1, 2).write.format("tfrecord").save(root)
    df = spark.range(100, 4100, 1, 4).selectExpr(
        "if(id = 4099, cast(raise_error('boom at 4099') as bigint), id) as id"
    )
    try:
        df.write.format("tfrecord").mode("append").save(root)
        error = None
    except Exception as e:  # the message is the result
        error = str(e)[:3000]
    ids = sorted(r.id for r in tfrecord(spark).schema("id long").load(root).collect())
    return {"error": error, "ids": ids}


def missing(spark: Any, root: str) -> dict[str, Any]:
    """The errors of a missing bucket and of a missing folder in the bucket."""
    bucket = root.split("/")[2]
    errors = {}
    for name, url in {
        "bucket": f"gs://no-such-{bucket}/t",
        "object": f"{root}/no-such-folder",
    }.items():
        try:
            tfrecord(spark).load(url).collect()
            errors[name] = {"url": url, "error": None}
        except Exception as e:  # the message is the result
            errors[name] = {"url": url, "error": f"{type(e).__name__}: {e}"}
    return errors


SCENARIOS: dict[str, Callable[[Any, str], dict[str, Any]]] = {
    "partitioned": partitioned,
    "modes": modes,
    "failed_append": failed_append,
    "missing": missing,
}


def main(config: dict[str, Any]) -> dict[str, Any]:
    from pyspark.sql import SparkSession

    import spark_tfrecord

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("gcs-driver")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.extraJavaOptions", QUICK_JVM)
    )
    for key, value in config["conf"].items():
        builder = builder.config(key, value)
    spark = spark_tfrecord.configure(builder).getOrCreate()
    results: dict[str, Any] = {}
    for name, scenario in SCENARIOS.items():
        try:
            results[name] = scenario(spark, f"gs://{config['bucket']}/{name}")
        except Exception:  # reported to the test, which fails on it
            results[name] = {"failed": traceback.format_exc()}
    spark.stop()
    return results


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(json.loads(sys.argv[1]))))
