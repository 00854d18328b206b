"""Ray Data reads and writes TFRecord folders with the package's codec: the jar's schema, rows
and errors on read (:func:`read`, a ``ray.data.Datasource``), the jar's bytes, file names and
manifest on write (:func:`write`, a ``ray.data.Datasink``). No Spark and no JVM: Ray's workers
run the package's Python decoder and encoder.

Ray is an extra (``pip install 'spark-tfrecord[ray]'``); ``import spark_tfrecord`` never imports
this package or Ray. See docs/ray.md.
"""

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
