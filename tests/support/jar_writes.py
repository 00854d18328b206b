"""The jar's side of test_python_source's writes, in a session of its own that has the jar.

``python -m support.jar_writes SPEC``, SPEC the path of a JSON list of cases, each
``{"case", "rows", "schema", "options", "jar_out", "python_out"}``: ``rows`` a Parquet folder
of the case's rows (one file, in order), ``schema`` their schema's JSON. Per case the jar writes
the rows (``coalesce(1)``, the options given) into ``jar_out``, and reads ``python_out`` (what
the Python data source wrote) with the schema; it emits the rows of both, as text, sorted (a
scan's order of files is not the write's), an ML vector as its values (a read gives a dense
vector from the dense layout and a sparse one from the sparse layout, whichever was written).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from support import QUICK_JVM, emit


def _text(value: Any) -> str:
    """A row's text, each vector as its values."""
    if hasattr(value, "toArray"):
        return f"vector{value.toArray().tolist()}"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_text(v) for v in value) + ")"
    return repr(value)


def main(spec_path: str) -> None:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

    import spark_tfrecord

    builder = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.extraJavaOptions", QUICK_JVM)
        # Spark 4.1+'s file sources write and read TIME only when asked to.
        .config("spark.sql.timeType.enabled", "true")
    )
    spark = spark_tfrecord.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    with open(spec_path, encoding="utf-8") as f:
        cases = json.load(f)
    for c in cases:
        schema = StructType.fromJson(c["schema"])
        rows = spark.read.schema(schema).parquet(c["rows"])
        if c.get("jar_out"):
            rows.coalesce(1).write.format("tfrecord").options(**c["options"]).save(c["jar_out"])
        back = spark.read.format("tfrecord").options(**c.get("read_options", {}))
        back_rows = back.schema(schema).load(c["python_out"]).collect()
        emit(
            case=c["case"],
            rows=sorted(_text(r) for r in rows.collect()),
            jar_read=sorted(_text(r) for r in back_rows),
        )
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
