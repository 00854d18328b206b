"""A Spark Connect client, in an environment of ``pyspark-client`` and spark-tfrecord only, of
a server started with no jar (test_connect_python_source).

``python -m support.jarless_connect_client URL OUT`` against a server whose Python workers have
spark-tfrecord: writes rows with ``df.write.format("tfrecord")`` (the Python data source, which
the server registered by itself from the ``pyspark_tfrecord`` module), reads them back with a
schema, and with the schema inferred (``spark_tfrecord.read``). ``... URL OUT missing`` against
a server whose workers lack it: the errors a read, a write and ``spark_tfrecord.register`` give.
Prints what it saw as one JSON line (``RESULT {...}``).
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import distributions
from importlib.util import find_spec
from typing import Any, Callable

SCHEMA = "id long, name string, x array<float>, raw binary, tags array<string>"


def rows() -> list[tuple[Any, ...]]:
    return [
        (i, f"name-{i}", [i / 2, -1.25], bytes([i, 255 - i]), [f"t{j}" for j in range(i % 3)])
        for i in range(9)
    ]


def error(action: Callable[[], Any]) -> list[Any] | None:
    """The exception's class name, its text, and Spark's condition; None if ``action`` works."""
    try:
        action()
    except Exception as e:
        condition = getattr(e, "getCondition", None) or getattr(e, "getErrorClass", None)
        return [type(e).__name__, str(e), condition() if callable(condition) else None]
    return None


def main(url: str, out: str, case: str = "installed") -> dict[str, Any]:
    from pyspark.sql import SparkSession

    import spark_tfrecord

    spark = SparkSession.builder.remote(url).getOrCreate()
    result: dict[str, Any] = {
        "session": f"{type(spark).__module__}.{type(spark).__name__}",
        "server_version": spark.version,
        "distributions": sorted({d.metadata["Name"].lower() for d in distributions()}),
        "py4j": find_spec("py4j") is not None,
    }
    df = spark.createDataFrame(rows(), SCHEMA).repartition(2)
    if case == "missing":
        result["read"] = error(
            lambda: spark.read.format("tfrecord").schema(SCHEMA).load(out).collect()
        )
        result["infer"] = error(lambda: spark_tfrecord.read(spark, out).schema)
        result["write"] = error(
            lambda: df.write.format("tfrecord").mode("overwrite").save(out + "/written")
        )
        result["register"] = error(lambda: spark_tfrecord.register(spark))
        result["registered_read"] = error(
            lambda: spark.read.format("tfrecord").schema(SCHEMA).load(out).collect()
        )
    else:
        df.write.format("tfrecord").mode("overwrite").save(out)
        back = spark.read.format("tfrecord").schema(SCHEMA).load(out)
        result["read"] = [
            [r.id, r.name, r.x, r.raw.hex(), r.tags] for r in back.orderBy("id").collect()
        ]
        inferred = spark_tfrecord.read(spark, out)
        result["inferred"] = inferred.schema.simpleString()
        result["inferred_rows"] = [
            {k: v.hex() if isinstance(v, (bytes, bytearray)) else v for k, v in r.asDict().items()}
            for r in inferred.orderBy("id").collect()
        ]
        appended = spark.createDataFrame([(100, "more", [], b"", [])], SCHEMA)
        appended.write.format("tfrecord").mode("append").save(out)
        result["after_append"] = spark.read.format("tfrecord").schema(SCHEMA).load(out).count()
        result["jar_only_option"] = error(
            lambda: (
                df.write.format("tfrecord")
                .mode("overwrite")
                .option("shardPrefix", "train")
                .save(out + "-jar-only")
            )
        )
        # register() on a server that has the source: it registers the client's class, and the
        # server's workers import it.
        result["register"] = error(lambda: spark_tfrecord.register(spark))
        result["after_register"] = sorted(
            r.id for r in spark.read.format("tfrecord").schema("id long").load(out).collect()
        )
    spark.stop()
    return result


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(*sys.argv[1:4])))
