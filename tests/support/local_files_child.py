"""A child driver for tests/test_local_files.py: writes into ``argv[1]`` every way that makes
files (plain, partitioned, append, gzip with an index, shardPrefix, TFX, a TFDS split), then
reads each back, printing the row counts as JSON."""

from __future__ import annotations

import json
import sys

import spark_tfrecord
from spark_tfrecord.testing import local_session


def main(out: str) -> None:
    spark = local_session(app_name="local-files-child")
    df = spark.range(40).selectExpr("id", "id % 3 AS day", "array(CAST(id AS FLOAT)) AS x")
    counts = {}
    df.write.format("tfrecord").save(f"{out}/plain")
    df.write.format("tfrecord").mode("append").save(f"{out}/plain")
    df.write.format("tfrecord").partitionBy("day").save(f"{out}/partitioned")
    df.write.format("tfrecord").option("compression", "gzip").option("writeIndex", "true").save(
        f"{out}/gzip"
    )
    spark_tfrecord.write(df, f"{out}/sharded", shard_prefix="train", num_shards=3)
    spark_tfrecord.write(df, f"{out}/tfx", tfx_split="train")
    spark_tfrecord.write_tfds(df, f"{out}/tfds", "numbers", "train", num_shards=2)
    for name in ("plain", "partitioned", "gzip", "sharded"):
        counts[name] = spark.read.format("tfrecord").load(f"{out}/{name}").count()
    counts["tfds"] = spark_tfrecord.read_tfds(spark, f"{out}/tfds/numbers/1.0.0", "train").count()
    spark.stop()
    print(json.dumps(counts))


if __name__ == "__main__":
    main(sys.argv[1])
