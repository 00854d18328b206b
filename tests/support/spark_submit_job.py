"""The job test_spark_shell submits with ``spark-submit --packages ...`` (a file, as users
submit theirs): a partitioned write and a read of our format, then the session's `spark.jars`.

    spark-submit ... support/spark_submit_job.py OUT
"""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession


def main(out: str) -> None:
    spark = SparkSession.builder.getOrCreate()
    df = spark.range(4).selectExpr("id", "cast(id % 2 as string) as p")
    df.write.format("tfrecord").partitionBy("p").save(out)
    rows = spark.read.format("tfrecord").load(out).orderBy("id").collect()
    print("ROWS " + ";".join(f"{r.id}:{r.p}" for r in rows))
    print("JARS " + spark.conf.get("spark.jars"))


if __name__ == "__main__":
    main(sys.argv[1])
