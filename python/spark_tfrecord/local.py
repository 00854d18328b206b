"""TFRecord files on this machine without Spark: the bundled jar's decoder in a JVM via JPype.

The JVM starts on first use (about a second), with the jar and pyspark's own jars on its class
path; no SparkSession, no cluster. This is what ``spark-tfrecord inspect`` uses for local paths.

Example (a plain example, not a doctest: the JVM it starts would outlive the test)::

    from spark_tfrecord import local
    local.count_records("/data/train/part-00000.tfrecord")  # e.g. 1000
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spark_tfrecord._io import RecordType


@dataclass(frozen=True)
class DataFile:
    """One data file: its path (as Hadoop prints it) and size in bytes."""

    path: str
    size: int


def _tools() -> Any:
    """The JVM class ``io.github.sparktfrecord.TFRecordInspector``, starting the JVM if needed."""
    import jpype

    if not jpype.isJVMStarted():
        import pyspark

        from spark_tfrecord._jars import jar_path

        spark_jars = Path(pyspark.__file__).resolve().parent / "jars"
        jpype.startJVM(
            "-Xmx1g",
            "-Dlog4j2.level=ERROR",
            "-Dlog4j2.StatusLogger.level=OFF",
            classpath=[jar_path(), str(spark_jars / "*")],
            convertStrings=True,
        )
    return jpype.JClass("io.github.sparktfrecord.TFRecordInspector")


def _options(record_type: RecordType, options: dict[str, str] | None) -> Any:
    import jpype

    java_map = jpype.JClass("java.util.HashMap")()
    java_map.put("recordType", record_type)
    for key, value in (options or {}).items():
        java_map.put(key, value)
    return java_map


def list_files(path: str) -> list[DataFile]:
    """The data files under ``path`` (or ``path`` itself), skipping ``_*`` and ``.*`` names."""
    files = []
    for line in _tools().listFiles(path):
        size, name = str(line).split("\t", 1)
        files.append(DataFile(name, int(size)))
    return files


def count_records(path: str) -> int:
    """Records in one file, walking the framing and checking both checksums of each."""
    return int(_tools().countRecords(path))


def infer_schema(
    paths: list[str], *, record_type: RecordType = "Example", **options: str
) -> dict[str, Any]:
    """The schema the data source infers, as Spark's JSON form of a ``StructType``."""
    import jpype

    array = jpype.JArray(jpype.JString)(paths)
    text = _tools().inferSchemaJson(array, _options(record_type, options))
    result: dict[str, Any] = json.loads(str(text))
    return result


def head(
    paths: list[str],
    schema: dict[str, Any],
    n: int,
    *,
    record_type: RecordType = "Example",
    **options: str,
) -> list[dict[str, Any]]:
    """The first ``n`` records as dicts; bytes as text when valid UTF-8, else ``0x…`` hex."""
    import jpype

    array = jpype.JArray(jpype.JString)(paths)
    rows = _tools().readRecordsJson(array, json.dumps(schema), _options(record_type, options), n)
    return [json.loads(str(r)) for r in rows]
