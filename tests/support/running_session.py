"""A session started without the jar, which then gets it from `spark_tfrecord.add_jar`.

``python -m support.running_session KIND OUT MALFORMED`` (KIND: ``classic``, or ``connect``
for a Spark Connect client of a local Connect server) adds the jar twice, goes through every
path that ships our classes to tasks, and prints what it saw as one JSON line for
test_running_session to assert on.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from support import QUICK_JVM


def main(kind: str, out: str, malformed: str) -> dict[str, Any]:
    from pyspark.sql import SparkSession

    import spark_tfrecord

    if kind == "connect":  # a local Spark Connect server, and this process its client
        # On 127.0.0.1 only, and (SPARK_TESTING, set by the test) on a free port, not 15002.
        spark = (
            SparkSession.builder.remote("local[2]")
            .config("spark.connect.grpc.binding.address", "127.0.0.1")
            .config("spark.driver.extraJavaOptions", QUICK_JVM)
            .getOrCreate()
        )
    else:
        spark = (
            SparkSession.builder.master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.extraJavaOptions", QUICK_JVM)
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
    result: dict[str, Any] = {"type": type(spark).__module__}
    result["jar"], result["again"] = spark_tfrecord.add_jar(spark), spark_tfrecord.add_jar(spark)
    df = spark.range(3000).selectExpr("id", "cast(id % 3 as string) as p", "repeat('x', 30) as s")
    df.write.format("tfrecord").option("compression", "gzip").partitionBy("p").save(out + "/gz")
    back = spark.read.format("tfrecord").load(out + "/gz")
    result["inferred"] = back.schema.simpleString()
    result["gz"] = sorted(r.id for r in back.where("p = '1'").collect())
    df.coalesce(1).write.format("tfrecord").save(out + "/plain")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")
    split = spark.read.format("tfrecord").schema("id long, s string").load(out + "/plain")
    result["splits"] = split.select("_metadata.file_block_start").distinct().count()
    result["split_ids"] = sorted(r.id for r in split.collect())
    result["count"] = split.count()
    spark.conf.unset("spark.sql.files.maxPartitionBytes")
    permissive = (
        spark.read.format("tfrecord")
        .option("mode", "PERMISSIVE")
        .schema("x long, _corrupt_record binary")
        .load(malformed)
    )
    result["permissive"] = [
        [r.x, None if r._corrupt_record is None else r._corrupt_record.hex()]
        for r in permissive.collect()
    ]
    seq = spark.createDataFrame([(1, [[1, 2], [3]])], "id long, steps array<array<long>>")
    seq.write.format("tfrecord").option("recordType", "SequenceExample").save(out + "/seq")
    seq_back = spark.read.format("tfrecord").option("recordType", "SequenceExample")
    result["sequence"] = [list(r) for r in seq_back.load(out + "/seq").collect()]
    result["spec"] = sorted(spark_tfrecord.feature_spec(back.schema))
    # Writes whose job committer is ours (loaded by the driver's commit protocol).
    pairs = spark.range(100).selectExpr("id", "concat('t', id) as t")
    folder = spark_tfrecord.write_tfds(pairs, out + "/tfds", "added", "train", num_shards=3)
    tfds_back = spark_tfrecord.read_tfds(spark, folder, "train")
    result["tfds"] = sorted([r.id, r.t] for r in tfds_back.collect())
    result["tfds_folder"] = folder
    spark_tfrecord.write(pairs, out + "/sharded", shard_prefix="p", num_shards=2)
    spark.stop()
    return result


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(*sys.argv[1:4])))
