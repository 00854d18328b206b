"""The Spark side: the session and its jars, the read and write helpers, shards, TensorFlow
Datasets folders, the converter, and the translation of Java errors (pyspark and py4j are
imported when used)."""

from __future__ import annotations


def no_spark(name: str, also: str = "") -> ImportError:
    """The error of a Spark helper (``name``) where no pyspark is installed: the package depends
    on none, so that it installs beside whichever Spark client the machine has. ``also`` is
    added to the message."""
    return ImportError(
        f"spark_tfrecord.{name} needs PySpark, and none is installed. spark-tfrecord installs "
        "beside any Spark client and brings none; install the one you use: `pip install pyspark` "
        "(Spark on this machine or a cluster; or `pip install 'spark-tfrecord[spark]'`), `pip "
        "install pyspark-client` (a Spark Connect client), or `pip install databricks-connect` "
        "(Databricks). The trainer's side needs no Spark: torch_dataset, grain_source, "
        "tf_dataset, dataset_info, feature_spec." + also,
        name="pyspark",
    )
