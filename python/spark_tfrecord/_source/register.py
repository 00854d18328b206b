"""``spark_tfrecord.register(spark)``: the jar-less ``tfrecord`` source, registered in a session."""

from __future__ import annotations

from typing import Any


def register(spark: Any) -> None:
    """Registers the jar-less Python ``tfrecord`` data source in ``spark``'s session.
    Makes ``spark.read.format("tfrecord")`` and ``df.write.format("tfrecord")`` (modes append and
    overwrite) work where no jar can be added (Spark 4.0+, Databricks Runtime 15.4+, Spark Connect);
    where the jar already serves ``tfrecord``, it keeps doing so. Raises RuntimeError where pyspark
    has no Python data source API, or where a Connect server's workers cannot import the package.
    """
    try:
        from pyspark.sql.datasource import DataSourceArrowWriter  # noqa: F401
    except ImportError as e:
        import pyspark

        raise RuntimeError(
            f"pyspark {pyspark.__version__} has no Python data source API "
            "(pyspark.sql.datasource with DataSourceArrowWriter, in Spark 4.0+ and Databricks "
            "Runtime 15.4+), so the tfrecord data source without the jar cannot be registered: "
            "add the jar (spark_tfrecord.configure) or use Spark 4"
        ) from e
    from spark_tfrecord._source.reader import TFRecordDataSource

    try:
        spark.dataSource.register(TFRecordDataSource)
    except Exception as e:
        condition = getattr(e, "getCondition", None) or getattr(e, "getErrorClass", None)
        found = condition() if callable(condition) else None
        if found == "DATA_SOURCE_ALREADY_EXISTS" or "DATA_SOURCE_ALREADY_EXISTS" in str(e):
            return  # the jar serves the name
        raise
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        _check_server_workers(spark)


#: What a Python worker says when it cannot unpickle the source: its module is not installed.
_MISSING = ("No module named 'spark_tfrecord'", "No module named 'pyspark_tfrecord'")


def _check_server_workers(spark: Any) -> None:
    """Raises RuntimeError if the Connect server's workers cannot import us (probed by a read)."""
    try:
        _ = spark.read.format("tfrecord").load().schema
    except Exception as e:  # expected; any other error than these is the next read's to show
        if any(missing in str(e) for missing in _MISSING):
            raise RuntimeError(
                "The Spark Connect server's Python workers cannot import spark_tfrecord, so the "
                "tfrecord data source without the jar cannot run there: pip install "
                "spark-tfrecord into the Python environment the server runs its Python workers "
                "with (spark.pyspark.python, PYSPARK_PYTHON), or give the server the jar "
                "(spark_tfrecord.add_jar(spark), or --jars where the server starts)"
            ) from e
