"""The jar added to a session that already runs (a notebook's, a shared one): `add_jar`.

Each case starts a fresh session without the jar, in a process of its own (a classic session,
and on Spark 4 a Spark Connect client of a local Connect server), adds the jar with
`spark_tfrecord.add_jar` (`ADD JAR`, or `addArtifacts`) and goes through every path that ships
our classes to tasks: a partitioned gzip write, an inferred read, a read in small splits,
PERMISSIVE with the corrupt-record column, SequenceExample, count(), `feature_spec` of the
schema, and the writes whose job committer is ours (a TFDS dataset, TensorFlow's shard names:
that committer was not found until it was given our class loader). While the reader broadcast
the Hadoop configuration in a class of our own, reads failed here with "SerializableHadoopConf
cannot be cast to SerializableHadoopConf" (two class loaders).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyspark
import pytest

from tfrecord_bytes import entry, example, feature, int64_list_packed, write_records

CHILD = """
import json, sys
from pyspark.sql import SparkSession
import spark_tfrecord

kind, out, malformed = sys.argv[1:4]
if kind == "connect":  # a local Spark Connect server, and this process its client
    # On 127.0.0.1 only, and (SPARK_TESTING, set by the test) on a free port, not 15002.
    spark = (SparkSession.builder.remote("local[2]")
             .config("spark.connect.grpc.binding.address", "127.0.0.1")
             .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
             .getOrCreate())
else:
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
result = {"type": type(spark).__module__}
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
permissive = (spark.read.format("tfrecord").option("mode", "PERMISSIVE")
              .schema("x long, _corrupt_record binary").load(malformed))
result["permissive"] = [[r.x, None if r._corrupt_record is None else r._corrupt_record.hex()]
                        for r in permissive.collect()]
seq = spark.createDataFrame([(1, [[1, 2], [3]])], "id long, steps array<array<long>>")
seq.write.format("tfrecord").option("recordType", "SequenceExample").save(out + "/seq")
result["sequence"] = [list(r) for r in spark.read.format("tfrecord")
                      .option("recordType", "SequenceExample").load(out + "/seq").collect()]
result["spec"] = sorted(spark_tfrecord.feature_spec(back.schema))
# Writes whose job committer is ours (loaded by the driver's commit protocol).
pairs = spark.range(100).selectExpr("id", "concat('t', id) as t")
folder = spark_tfrecord.write_tfds(pairs, out + "/tfds", "added", "train", num_shards=3)
result["tfds"] = sorted([r.id, r.t] for r in spark_tfrecord.read_tfds(spark, folder, "train")
                        .collect())
result["tfds_folder"] = folder
spark_tfrecord.write(pairs, out + "/sharded", shard_prefix="p", num_shards=2)
spark.stop()
print("RESULT " + json.dumps(result))
"""
# Spark Connect's client and its local server come with pyspark 4 (pyspark 3.5 would fetch the
# server jar with --packages).
KINDS = ["classic"] + (["connect"] if int(pyspark.__version__.split(".")[0]) >= 4 else [])


# SPARK_TESTING: pyspark's local Connect server takes a free port instead of 15002.
CONNECT_ENV = {"SPARK_TESTING": "1", "SPARK_LOCAL_IP": "127.0.0.1"}


@pytest.mark.parametrize("kind", KINDS)
def test_add_jar_to_a_running_session(tmp_path: Path, kind: str) -> None:
    malformed = write_records(
        tmp_path / "m" / "a.tfrecord",
        [example(entry(b"x", feature("int64", int64_list_packed([5])))), b"\x0a\x05\x0a"],
    )
    done = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(tmp_path / "out"), str(malformed)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(CONNECT_ENV if kind == "connect" else {})},
    )
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-5000:]
    result = json.loads(lines[0][7:])
    assert result["type"].startswith("pyspark.sql.connect" if kind == "connect" else "pyspark.sql")
    assert result["jar"] == result["again"] and result["jar"].endswith(".jar")
    assert result["inferred"] == "struct<id:bigint,s:string,p:int>"
    assert result["gz"] == list(range(1, 3000, 3))
    assert result["splits"] > 2
    assert result["split_ids"] == list(range(3000)) and result["count"] == 3000
    assert result["permissive"] == [[5, None], [None, "0a050a"]]
    assert result["sequence"] == [[1, [[1, 2], [3]]]]
    assert result["spec"] == ["id", "p", "s"]  # feature_spec takes the session's schema
    assert result["tfds"] == [[i, f"t{i}"] for i in range(100)]
    info = json.loads(Path(result["tfds_folder"], "dataset_info.json").read_text())
    assert [len(s["shardLengths"]) for s in info["splits"]] == [3]
    sharded = sorted(p.name for p in (tmp_path / "out" / "sharded").glob("p-*"))
    assert sharded == ["p-00000-of-00002", "p-00001-of-00002"]
