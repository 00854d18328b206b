"""Run by test_old_hadoop in a process of its own: a Spark driver whose class path puts an older
hadoop-common (and its dependencies) ahead of Spark's Hadoop client, as a Maven build with
tensorflow-hadoop does. It writes and reads through every path that opens files, and prints
what it found as ``RESULT {json}`` lines (`support.emit`).

Usage: python -m support.old_hadoop_child OUT_DIR CLASS_PATH
CLASS_PATH: the jars to put first, joined with ``os.pathsep`` (``spark.driver.extraClassPath``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from support import emit, jar_of

OUTPUT = "io.github.sparktfrecord.TFRecordOutputFormat"
BYTES = "org.apache.hadoop.io.BytesWritable"
NULL = "org.apache.hadoop.io.NullWritable"


def rows(df: Any) -> list[list[Any]]:
    return sorted([r.id, r.s, r.v] for r in df.collect())


def main() -> int:
    out, class_path = Path(sys.argv[1]), sys.argv[2]
    from spark_tfrecord.testing import local_session

    spark = local_session(
        app_name="old-hadoop", cores=2, conf={"spark.driver.extraClassPath": class_path}
    )
    jvm = spark._jvm
    file_system = jvm.java.lang.Class.forName("org.apache.hadoop.fs.FileSystem")
    emit(
        hadoop=jvm.org.apache.hadoop.util.VersionInfo.getVersion(),
        file_system_jar=jar_of(jvm, "org.apache.hadoop.fs.FileSystem"),
        has_open_file=any(m.getName() == "openFile" for m in file_system.getMethods()),
    )
    df = spark.range(30).selectExpr(
        "id", "concat('s', id) as s", "array(cast(id as float) / 4, -0.5f) as v"
    )
    for compression in ("none", "gzip"):
        path = str(out / compression)
        df.repartition(2).write.format("tfrecord").option("compression", compression).save(path)
        inferred = spark.read.format("tfrecord").load(path)
        emit(
            case=f"write and read, {compression}",
            files=sorted(p.name[:10] + "".join(p.suffixes) for p in Path(path).glob("part-*")),
            schema=inferred.schema.simpleString(),
            rows=rows(inferred),
            count=inferred.count(),
            inspect=sum(
                jvm.io.github.sparktfrecord.tools.TFRecordInspector.countRecords(str(p))
                for p in Path(path).glob("part-*")
            ),
        )
    # Splits of 200 bytes: each task finds its first record by seeking and searching.
    spark.conf.set("spark.sql.files.maxPartitionBytes", "200")
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    split = spark.read.format("tfrecord").schema("id long, s string, v array<float>")
    split = split.load(str(out / "none"))
    emit(case="split read", partitions=split.rdd.getNumPartitions(), rows=rows(split))
    spark.conf.unset("spark.sql.files.maxPartitionBytes")
    spark.conf.unset("spark.sql.files.openCostInBytes")
    # Named shards: the job commit reads the write's options back from the job configuration.
    sharded = str(out / "sharded")
    df.repartition(2).write.format("tfrecord").option("shardPrefix", "data").option(
        "numShards", "3"
    ).save(sharded)
    emit(
        case="sharded write",
        files=sorted(p.name for p in Path(sharded).glob("data-*")),
        rows=rows(spark.read.format("tfrecord").load(sharded)),
    )
    # The Hadoop output format, which reads its options from the job configuration. (Spark 3.5's
    # own Hadoop input RDDs fail with Hadoop 2.6's mapreduce jar ahead, TextInputFormat's too.)
    hadoop = str(out / "hadoop")
    records = [(bytearray(f"record {i}".encode()), None) for i in range(5)]
    spark.sparkContext.parallelize(records, 2).saveAsNewAPIHadoopFile(
        hadoop, OUTPUT, keyClass=BYTES, valueClass=NULL, conf={"tfrecord.compression": "gzip"}
    )
    back = spark.read.format("tfrecord").option("recordType", "ByteArray").load(hadoop)
    emit(
        case="hadoop output format",
        files=sorted(p.name for p in Path(hadoop).glob("part-*")),
        records=sorted(bytes(r.byteArray).decode() for r in back.collect()),
    )
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
