"""A Spark Connect client of test_shards' server, in a process of its own.

``python -m support.shards_client URL OUT`` writes `skewed` rows with ``num_shards=4,
shuffle_seed=99`` from three partitionings (``OUT/coalesce1``, ``OUT/repartition3`` with a
shard prefix, ``OUT/plain`` without) and as a
3-shard TFDS split with ``shuffle_seed=5``, and prints the split's folder and shard lengths as
one JSON line (``RESULT {...}``); the test compares the files.
"""

from __future__ import annotations

import json
import sys
from typing import Any

#: How many rows `skewed` makes.
ROWS = 1000


def skewed(spark: Any) -> Any:
    """Rows 0..999 (id, text, x) in 6 partitions, the first holding 900 of them; in order."""
    big = spark.range(0, 900, 1, 1)
    small = spark.range(900, ROWS, 1, 5)
    return big.union(small).selectExpr(
        "id", "concat('row-', cast(id as string)) as text", "array(cast(id as float) / 2) as x"
    )


def main(url: str, out: str) -> dict[str, Any]:
    from pyspark.sql import SparkSession

    import spark_tfrecord

    spark = SparkSession.builder.remote(url).getOrCreate()
    base = skewed(spark)
    for name, df in (("coalesce1", base.coalesce(1)), ("repartition3", base.repartition(3))):
        spark_tfrecord.write(df, f"{out}/{name}", shard_prefix="t", num_shards=4, shuffle_seed=99)
    # A plain write: Spark's part-* names, the shards of no record added at commit.
    spark_tfrecord.write(base.repartition(5), f"{out}/plain", num_shards=4, shuffle_seed=99)
    folder = spark_tfrecord.write_tfds(
        base, f"{out}/tfds", "c", "train", num_shards=3, shuffle_seed=5
    )
    with open(f"{folder}/dataset_info.json") as f:
        lengths = [int(n) for n in json.load(f)["splits"][0]["shardLengths"]]
    spark.stop()
    return {"tfds_folder": folder, "tfds_lengths": lengths}


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(*sys.argv[1:3])))
