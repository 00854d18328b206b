"""Run by test_old_jackson in a process of its own: a Spark 3.5 driver whose class path puts an
older jackson-core ahead of Spark's own, as the Maven build of issue 41 does (Spark's
jackson-databind 2.15 with jackson-core 2.12). It writes, appends, writes partitioned and as a
TFDS split, and reads back, and prints what it found as ``RESULT {json}`` lines
(`support.emit`): the manifests and TFDS metadata as the files hold them, the records each data
file holds, and the rows.

Usage: python -m support.old_jackson_child OUT_DIR CLASS_PATH
CLASS_PATH: the jars to put first, joined with ``os.pathsep`` (``spark.driver.extraClassPath``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from support import emit, jar_of

MANIFEST = "_tfrecord_manifest.json"


def rows(df: Any) -> list[list[Any]]:
    return sorted([r.id, r.s, r.v] for r in df.collect())


def frame(spark: Any, start: int, end: int) -> Any:
    """Rows ``id``, ``s`` = "s<id>", ``v`` = id % 3 values of id / 4, for ids start to end - 1."""
    return spark.range(start, end).selectExpr(
        "id",
        "concat('s', id) as s",
        "array_repeat(cast(id / 4 as float), cast(id % 3 as int)) as v",
    )


def strings(spark: Any, values: list[str]) -> Any:
    """``values`` as a Java ``String[]``."""
    array = spark.sparkContext._gateway.new_array(spark._jvm.java.lang.String, len(values))
    for i, v in enumerate(values):
        array[i] = v
    return array


def written(jvm: Any, folder: Path) -> dict[str, Any]:
    """The folder's manifest, every name in it, and the records of each data file by path."""
    inspector = jvm.io.github.sparktfrecord.tools.TFRecordInspector
    data = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(("_", ".")))
    return {
        "manifest": json.loads((folder / MANIFEST).read_text(encoding="utf-8")),
        # Local checksum files (.crc) aside: the count files and the lock must be gone.
        "names": sorted(
            str(p.relative_to(folder)) for p in folder.rglob("*") if not p.name.endswith(".crc")
        ),
        "bytes": {str(p.relative_to(folder)): p.stat().st_size for p in data},
        "records": {str(p.relative_to(folder)): inspector.countRecords(str(p)) for p in data},
    }


def main() -> int:
    out, class_path = Path(sys.argv[1]), sys.argv[2]
    from spark_tfrecord import read_tfds, write_tfds
    from spark_tfrecord.testing import local_session

    spark = local_session(
        app_name="old-jackson", cores=2, conf={"spark.driver.extraClassPath": class_path}
    )
    jvm = spark._jvm

    def version(package: str) -> str:
        loaded = jvm.java.lang.Class.forName(f"com.fasterxml.jackson.{package}.PackageVersion")
        return str(loaded.getField("VERSION").get(None).toString())

    emit(
        core=version("core.json"),
        databind=version("databind.cfg"),
        core_jar=jar_of(jvm, "com.fasterxml.jackson.core.JsonFactory"),
        # What jackson-databind 2.15's ObjectMapper.createObjectNode needs (issue 41).
        stream_constraints=jar_of(jvm, "com.fasterxml.jackson.core.exc.StreamConstraintsException"),
    )
    # v holds id % 3 values (id / 4 each): the manifest's counts are 0 to 2 for it, 1 for the
    # others.
    df = frame(spark, 0, 30)
    plain = out / "plain"
    df.repartition(2).write.format("tfrecord").save(str(plain))
    emit(case="write", **written(jvm, plain), schema_json=df.schema.jsonValue())

    more = frame(spark, 30, 45)
    more.coalesce(1).write.format("tfrecord").mode("append").save(str(plain))
    emit(case="append", **written(jvm, plain))

    parted = out / "parted"
    df.withColumn("day", df.id % 2).repartition(2).write.format("tfrecord").partitionBy("day").save(
        str(parted)
    )
    emit(case="partitioned write", **written(jvm, parted))

    inferred = spark.read.format("tfrecord").load(str(plain))
    back = spark.read.format("tfrecord").load(str(parted))
    emit(
        case="read",
        schema=inferred.schema.simpleString(),
        rows=rows(inferred),
        count=inferred.count(),
        partitioned_schema=back.schema.simpleString(),
        partitioned=sorted([r.id, r.day] for r in back.select("id", "day").collect()),
        # Spark's own schema JSON (json4s on Jackson): what the inspector and `local` use.
        inferred_json=json.loads(
            jvm.io.github.sparktfrecord.tools.TFRecordInspector.inferSchemaJson(
                strings(spark, [str(p) for p in sorted(plain.glob("part-*"))]), {}
            )
        ),
    )

    folder = Path(write_tfds(df, str(out / "tfds"), "ds", "train", num_shards=2))
    info = json.loads((folder / "dataset_info.json").read_text(encoding="utf-8"))
    features = json.loads((folder / "features.json").read_text(encoding="utf-8"))
    shards = sorted(p.name for p in folder.glob("ds-train.tfrecord-*"))
    emit(
        case="tfds",
        info=info,
        features=features,
        shard_records=[
            jvm.io.github.sparktfrecord.tools.TFRecordInspector.countRecords(str(folder / s))
            for s in shards
        ],
        shards=shards,
        rows=rows(read_tfds(spark, str(folder), "train")),
    )
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
