"""TensorFlow TFRecord files as an Apache Spark data source.

Let :func:`configure` put the bundled jar on ``spark.jars`` (docstrings' ``spark`` is made so),
then use the ``tfrecord`` format, or :func:`read` and :func:`write`::

    >>> import tempfile
    >>> from pyspark.sql import SparkSession
    >>> import spark_tfrecord
    >>> spark = spark_tfrecord.configure(SparkSession.builder.master("local[2]")).getOrCreate()
    >>> df = spark.createDataFrame([(1, [0.5, 1.5], "a")], "id long, x array<float>, s string")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     spark_tfrecord.write(df, tmp + "/people")
    ...     spark_tfrecord.read(spark, tmp + "/people").collect()
    [Row(id=1, x=[0.5, 1.5], s='a')]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spark_tfrecord import errors
from spark_tfrecord._format.columns.values import Ragged, Sparse
from spark_tfrecord._format.files.index import index_path, indexed_files
from spark_tfrecord._format.frames.manifest import DatasetInfo, FileInfo
from spark_tfrecord._version import __version__

if TYPE_CHECKING:
    from spark_tfrecord._format.datasets.datasets import dataset_info
    from spark_tfrecord._format.datasets.schema_inference import infer_schema
    from spark_tfrecord._loaders.api import grain_source, torch_dataset
    from spark_tfrecord._loaders.spec import feature_spec
    from spark_tfrecord._loaders.tf import tf_dataset
    from spark_tfrecord._source.register import register
    from spark_tfrecord._spark.converter import CACHE_DIR_CONF, Converter, make_converter
    from spark_tfrecord._spark.io import RecordType, SaveMode, read, write
    from spark_tfrecord._spark.session import (
        EXTENSIONS,
        SUPPORTED_SPARK,
        ScalaVersion,
        add_jar,
        configure,
        install_exception_handler,
        jar_path,
    )
    from spark_tfrecord._spark.statistics import statistics
    from spark_tfrecord._spark.tfds import TfdsMode, read_tfds, write_tfds
    from spark_tfrecord.arrow import read_arrow

#: Imported on first use (``__getattr__``), so importing the package needs no pyspark or NumPy.
_LAZY = {
    "spark_tfrecord._format.datasets.datasets": ("dataset_info",),
    "spark_tfrecord._format.datasets.schema_inference": ("infer_schema",),
    "spark_tfrecord._loaders.api": ("grain_source", "torch_dataset"),
    "spark_tfrecord._loaders.spec": ("feature_spec",),
    "spark_tfrecord._loaders.tf": ("tf_dataset",),
    "spark_tfrecord._spark.converter": ("CACHE_DIR_CONF", "Converter", "make_converter"),
    "spark_tfrecord._spark.io": ("RecordType", "SaveMode", "read", "write"),
    "spark_tfrecord._spark.session": (
        "EXTENSIONS",
        "SUPPORTED_SPARK",
        "ScalaVersion",
        "add_jar",
        "configure",
        "install_exception_handler",
        "jar_path",
    ),
    "spark_tfrecord._spark.statistics": ("statistics",),
    "spark_tfrecord._spark.tfds": ("TfdsMode", "read_tfds", "write_tfds"),
    "spark_tfrecord._source.register": ("register",),
    "spark_tfrecord.arrow": ("read_arrow",),
}
_LAZY_HOME = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _LAZY_HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    try:
        value = getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in ("pyspark", "py4j"):
            raise
        from spark_tfrecord._spark import no_spark

        raise no_spark(name) from error
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_HOME))


__all__ = [
    "CACHE_DIR_CONF",
    "EXTENSIONS",
    "SUPPORTED_SPARK",
    "Converter",
    "DatasetInfo",
    "FileInfo",
    "Ragged",
    "RecordType",
    "SaveMode",
    "ScalaVersion",
    "Sparse",
    "TfdsMode",
    "__version__",
    "add_jar",
    "configure",
    "dataset_info",
    "errors",
    "feature_spec",
    "grain_source",
    "index_path",
    "indexed_files",
    "infer_schema",
    "install_exception_handler",
    "jar_path",
    "make_converter",
    "read",
    "read_arrow",
    "read_tfds",
    "register",
    "statistics",
    "tf_dataset",
    "torch_dataset",
    "write",
    "write_tfds",
]
