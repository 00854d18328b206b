"""The Spark side: session, read/write helpers, shards, TFDS folders, converter, Java errors."""

from __future__ import annotations


def no_spark(name: str, also: str = "") -> ImportError:
    """The ImportError of Spark helper ``name`` with no pyspark installed; ``also`` is appended."""
    return ImportError(
        f"spark_tfrecord.{name} needs PySpark, and none is installed. spark-tfrecord installs "
        "beside any Spark client and brings none; install the one you use: `pip install pyspark` "
        "(Spark on this machine or a cluster; or `pip install 'spark-tfrecord[spark]'`), `pip "
        "install pyspark-client` (a Spark Connect client), or `pip install databricks-connect` "
        "(Databricks). The trainer's side needs no Spark: torch_dataset, grain_source, "
        "tf_dataset, dataset_info, feature_spec." + also,
        name="pyspark",
    )
