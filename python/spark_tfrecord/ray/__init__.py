"""Ray Data reads and writes of TFRecord folders with the package's codec: no Spark, no JVM."""

from __future__ import annotations

try:
    import ray.data  # noqa: F401
except ModuleNotFoundError as e:  # pragma: no cover - the message is the point
    if (e.name or "").split(".")[0] != "ray":
        raise
    raise ModuleNotFoundError(
        "spark_tfrecord.ray needs Ray Data: pip install 'spark-tfrecord[ray]' (or 'ray[data]')",
        name="ray",
    ) from e

from spark_tfrecord.ray.datasink import TFRecordDatasink, write
from spark_tfrecord.ray.datasource import TFRecordDatasource, read

__all__ = ["TFRecordDatasink", "TFRecordDatasource", "read", "write"]
