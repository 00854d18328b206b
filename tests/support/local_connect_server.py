"""`spark_tfrecord.configure` on a builder that starts a local Spark Connect server in the
process, from its options (``SparkSession.builder.remote("local[2]")``).

``python -m support.local_connect_server OUT EARLIER_JARS`` (EARLIER_JARS: a `spark.jars` the
builder has before `configure`, or empty) writes and reads a few rows through that server and
prints the session's module, its `spark.jars`, the `UserWarning`s of its start and the rows as
one JSON line.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

from support import QUICK_JVM


def main(out: str, earlier_jars: str) -> dict[str, Any]:
    from pyspark.sql import SparkSession

    import spark_tfrecord

    builder = (
        SparkSession.builder.remote("local[2]")
        .config("spark.connect.grpc.binding.address", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.extraJavaOptions", QUICK_JVM)
        .config("spark.ui.enabled", "false")
    )
    if earlier_jars:
        builder = builder.config("spark.jars", earlier_jars)
    with warnings.catch_warnings(record=True) as caught:
        spark = spark_tfrecord.configure(builder).getOrCreate()
    result = {
        "session": type(spark).__module__,
        "jars": spark.conf.get("spark.jars"),
        "warnings": [str(w.message) for w in caught if issubclass(w.category, UserWarning)],
    }
    df = spark.range(20).selectExpr("id", "array(cast(id as float), 0.5f) as x")
    spark_tfrecord.write(df, out, compression="gzip")
    result["rows"] = sorted([r.id, r.x] for r in spark_tfrecord.read(spark, out).collect())
    spark.stop()
    return result


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(*sys.argv[1:3])))
