"""The jar-less ``tfrecord`` data source, found by Spark 4 itself: Spark registers the
``DefaultSource`` of every top-level ``pyspark_*`` module once per JVM
(``pyspark/sql/worker/lookup_data_sources.py``). Where the jar is on the class path, Spark's
lookup prefers the jar's ``DataSourceRegister``."""

from spark_tfrecord._source.reader import TFRecordDataSource as DefaultSource

__all__ = ["DefaultSource"]
