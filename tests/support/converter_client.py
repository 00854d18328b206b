"""A Spark Connect client of test_converter's server, in a process of its own.

``python -m support.converter_client URL OUT`` writes a Parquet source under OUT, then makes
converters with the cache folder ``OUT/cache`` from the session's conf: of a plan over it, of
the same plan built again (the cache's files are listed before and after: size, mtime, inode),
of another filter, and of local rows (the same rows twice, other rows once). It prints their
paths and lengths, and what a call without the conf raised, as one JSON line
(``RESULT {...}``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def state(folder: Path) -> dict[str, list[int]]:
    return {
        f.relative_to(folder).as_posix(): [f.stat().st_size, f.stat().st_mtime_ns, f.stat().st_ino]
        for f in sorted(folder.rglob("*"))
        if f.is_file()
    }


def main(url: str, out: str) -> dict[str, Any]:
    from pyspark.sql import SparkSession

    import spark_tfrecord

    spark = SparkSession.builder.remote(url).getOrCreate()
    src = out + "/source"
    spark.range(40).selectExpr("id", "array(cast(id as float) / 2, 0.5f) AS x").write.parquet(src)

    def built() -> Any:
        return spark.read.parquet(src).where("id % 2 = 0")

    def made(df: Any) -> dict[str, Any]:
        converter = spark_tfrecord.make_converter(df)
        return {"path": converter.path, "len": len(converter)}

    result: dict[str, Any] = {}
    try:
        spark_tfrecord.make_converter(built())
        result["no_conf"] = None
    except ValueError as e:
        result["no_conf"] = [type(e).__name__, spark_tfrecord.CACHE_DIR_CONF in str(e)]

    spark.conf.set(spark_tfrecord.CACHE_DIR_CONF, out + "/cache")
    result["first"] = made(built())
    result["state_before"] = state(Path(out) / "cache")
    result["again"] = made(built())
    result["state_after"] = state(Path(out) / "cache")
    result["other"] = made(built().where("id > 22"))

    schema = "id long, s string"
    result["local"] = made(spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], schema))
    result["local_again"] = made(spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], schema))
    result["local_other"] = made(spark.createDataFrame([(1, "a"), (2, "b"), (3, "d")], schema))
    spark.stop()
    return result


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(*sys.argv[1:3])))
