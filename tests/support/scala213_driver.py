"""A Spark 3.5 / Scala 2.13 driver in a JVM of its own, started through JPype (pyspark ships
Spark 3.5 for Scala 2.12 only), for test_scala213_jar.

``python -m support.scala213_driver ARGS``, ARGS one JSON list: the JVM options, the class path
(our Scala 2.13 jar first, then Spark's), a TFRecord file to read and a folder to write. It
prints the Scala and Spark versions, where our classes came from, and what a write, an
inferred read, a read with a schema and count() gave, as one JSON line.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def main(options: list[str], classpath: list[str], data: str, out: str) -> dict[str, Any]:
    import jpype

    jpype.startJVM(*options, classpath=classpath, convertStrings=True)
    from jpype import JClass

    spark = (
        JClass("org.apache.spark.sql.SparkSession")
        .builder()
        .master("local[2]")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext().setLogLevel("ERROR")
    source = JClass("java.lang.Class").forName("io.github.sparktfrecord.TFRecordFileFormat")
    result: dict[str, Any] = {
        "scala": str(JClass("scala.util.Properties").versionNumberString()),
        "spark": str(spark.version()),
        "jar": str(source.getProtectionDomain().getCodeSource().getLocation().getPath()),
    }
    df = spark.range(5).selectExpr(
        "id", "cast(id as float) / 2 as half", "repeat('x', id + 1) as s"
    )
    df.write().format("tfrecord").partitionBy("s").save(out)
    back = spark.read().format("tfrecord").load(out)
    result["inferred"] = str(back.schema().simpleString())
    result["rows"] = sorted(
        [r.getLong(0), r.getFloat(1), r.getString(2)] for r in back.collectAsList()
    )
    read = spark.read().format("tfrecord").schema("name string, xs array<float>").load(data)
    result["read"] = [
        [r.getString(0), None if r.isNullAt(1) else list(r.getList(1))]
        for r in read.collectAsList()
    ]
    count = spark.read().format("tfrecord").schema("name string").load(data).count()
    result["count"] = int(count)
    spark.stop()
    return result


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(*json.loads(sys.argv[1]))))
