"""The Spark driver of test_gcs, in a process of its own (the test's session cannot take new
jars): writes and reads through gs:// with the connector its configuration puts on the class
path (Google's gcs-connector, or Hadoop's hadoop-gcp).

``python -m support.gcs_driver CONFIG`` takes one JSON argument: ``conf`` (the session's
configuration: the connector and the server), ``endpoint`` and ``bucket`` (the server's),
``local`` (a local folder, for writes the test compares with those to gs://) and
``split_bytes``; optionally ``scenarios`` (the names of those to run; all by default) and
``folder`` (``/name``: where in the bucket they write; its root by default). It prints every
scenario's result, or its traceback, as one JSON line.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from typing import Any, Callable

from support import QUICK_JVM
from support.loader_epochs import mark


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


def partitioned(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    frame(spark).write.format("tfrecord").partitionBy("p").save(root)
    back = tfrecord(spark).load(root)  # inference, then a scan of every file
    return {
        "schema": back.schema.simpleString(),
        "rows": sorted([r.id, r.p, r.label, r.name, list(r.tags)] for r in back.collect()),
        "p1_names": sorted(r.name for r in back.where("p = 1").select("name").collect()),
    }


def modes(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    """gzip, append, overwrite: the ids after each."""
    write = spark.range(0, 100, 1, 2).write.format("tfrecord").option("compression", "gzip")
    write.save(root)
    spark.range(100, 150, 1, 2).write.format("tfrecord").mode("append").save(root)
    appended = sorted(r.id for r in tfrecord(spark).schema("id long").load(root).collect())
    spark.range(1000, 1010, 1, 1).write.format("tfrecord").mode("overwrite").save(root)
    overwritten = sorted(r.id for r in tfrecord(spark).schema("id long").load(root).collect())
    return {"appended": appended, "overwritten": overwritten}


def failed_append(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
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


def missing(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
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


def refused(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    """A read and a write of buckets whose server is not there (a port nothing listens on),
    with the connector's retries cut to two (``fs.gs.http.max.retry``; its default of 10, with
    its backoff, took about 4 minutes to give up): each one's error. The settings go as options,
    which Spark copies into the file system's configuration, for buckets not opened before."""
    options = {"fs.gs.storage.root.url": config["refused_endpoint"], "fs.gs.http.max.retry": "2"}
    found = {}
    for name, action in {
        "read": lambda: tfrecord(spark).options(**options).load("gs://refused-read/t").collect(),
        "write": lambda: (
            spark.range(3).write.format("tfrecord").options(**options).save("gs://refused-write/t")
        ),
    }.items():
        try:
            action()
            found[name] = {"error": None}
        except Exception as e:  # the message is the result
            found[name] = {"error": f"{type(e).__name__}: {e}"}
    return found


def projection(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    """Three scans of the partitioned folder with its schema given (no inference), each after a
    mark in the server's log: every column, one column, and one column of one partition."""
    folder = root.replace("/projection", "/partitioned")
    queries = {
        "all": lambda df: df,
        "id": lambda df: df.select("id"),
        "p1_name": lambda df: df.where("p = 1").select("name"),
    }
    counts = {}
    for name, query in queries.items():
        mark(config["endpoint"], f"projection-{name}")
        counts[name] = len(query(tfrecord(spark).schema(SCHEMA).load(folder)).collect())
    mark(config["endpoint"], "projection-end")
    return {"counts": counts}


def split(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    """One uncompressed file of 30,000 records read in splits of `split_bytes`, after a mark."""
    df = spark.range(0, 30000, 1, 1).selectExpr("id", "concat('row ', id) as s")
    df.write.format("tfrecord").save(root)
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(config["split_bytes"]))
    mark(config["endpoint"], "split-scan")
    try:
        back = tfrecord(spark).schema("id long, s string").load(root)
        rows = back.select("id", "s", "_metadata.file_block_start").collect()
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    mark(config["endpoint"], "split-end")
    return {
        "block_starts": sorted({r.file_block_start for r in rows}),
        "ids": sorted(r.id for r in rows),
        "wrong_s": [r.id for r in rows if r.s != f"row {r.id}"],
    }


def indexed(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    """writeIndex to gs:// and to a local folder: the test compares the two."""
    import spark_tfrecord

    df = frame(spark).drop("p")
    for path in (root, f"{config['local']}/indexed"):
        spark_tfrecord.write(df, path, write_index=True)
    return {}


def shards(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    """numShards with shuffleSeed to gs://, and the same rows differently partitioned to a local
    folder: the same seed and rows give the same files."""
    import spark_tfrecord

    spark_tfrecord.write(frame(spark), root, num_shards=4, shuffle_seed=7, shard_prefix="train")
    local = f"{config['local']}/shards"
    spark_tfrecord.write(frame(spark).repartition(5), local, num_shards=4, shuffle_seed=7,
                         shard_prefix="train")  # fmt: skip
    return {"ids": sorted(r.id for r in tfrecord(spark).schema("id long").load(root).collect())}


def tfds(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    """A TFDS dataset of two splits on gs://, read back by split."""
    import spark_tfrecord

    df = frame(spark).drop("tags")
    folder = spark_tfrecord.write_tfds(df.where("id < 2500"), root, "gcs_ds", "train",
                                       num_shards=3, shuffle_seed=1)  # fmt: skip
    spark_tfrecord.write_tfds(df.where("id >= 2500"), root, "gcs_ds", "test", num_shards=2)
    return {
        "folder": folder,
        "splits": {
            split: sorted(r.id for r in spark_tfrecord.read_tfds(spark, folder, split).collect())
            for split in ("train", "test")
        },
    }


def tfx(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    """A TFX Examples artifact of two splits on gs://; Spark reads a split as a folder."""
    import spark_tfrecord

    df = frame(spark).drop("tags")
    spark_tfrecord.write(df.where("id < 2000"), root, tfx_split="train")
    spark_tfrecord.write(df.where("id >= 2000").coalesce(1), root, tfx_split="eval",
                         mode="append", num_shards=2)  # fmt: skip
    return {
        split: sorted(r.id for r in tfrecord(spark).load(f"{root}/Split-{split}").collect())
        for split in ("train", "eval")
    }


def appends_at_once(spark: Any, root: str, config: dict[str, Any]) -> dict[str, Any]:
    """A write, then two appends from two threads at once: both commit, or one fails clearly."""
    import threading

    import spark_tfrecord

    spark_tfrecord.write(spark.range(0, 10, 1, 2), root)
    errors: list[str] = []

    def append(start: int) -> None:
        try:
            spark_tfrecord.write(spark.range(start, start + 500, 1, 3), root, mode="append")
        except Exception as e:  # the message is the result
            errors.append(str(e)[:3000])

    threads = [threading.Thread(target=append, args=(s,)) for s in (1000, 2000)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = sorted(r.id for r in tfrecord(spark).schema("id long").load(root).collect())
    return {"errors": errors, "ids": ids}


SCHEMA = "id long, label float, name string, tags array<string>, p int"

SCENARIOS: dict[str, Callable[[Any, str, dict[str, Any]], dict[str, Any]]] = {
    f.__name__: f
    for f in (
        partitioned,
        projection,
        split,
        modes,
        failed_append,
        missing,
        indexed,
        shards,
        tfds,
        tfx,
        appends_at_once,
        refused,
    )
}


def main(config: dict[str, Any]) -> dict[str, Any]:
    from pyspark.sql import SparkSession

    import spark_tfrecord

    conf = dict(config["conf"])
    java = f"{QUICK_JVM} {conf.pop('spark.driver.extraJavaOptions', '')}".strip()
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("gcs-driver")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.extraJavaOptions", java)
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = spark_tfrecord.configure(builder).getOrCreate()
    results: dict[str, Any] = {}
    root = f"gs://{config['bucket']}{config.get('folder', '')}"
    for name in config.get("scenarios", SCENARIOS):
        started = time.monotonic()
        try:
            results[name] = SCENARIOS[name](spark, f"{root}/{name}", config)
        except Exception:  # reported to the test, which fails on it
            results[name] = {"failed": traceback.format_exc()}
        seconds = time.monotonic() - started
        print(f"{name}: {seconds:.1f} s", file=sys.stderr, flush=True)  # in the driver's log
    spark.stop()
    return results


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(json.loads(sys.argv[1]))))
