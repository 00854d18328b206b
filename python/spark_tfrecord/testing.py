"""pytest fixtures for code that reads or writes TFRecords with Spark.

They need pytest, which spark-tfrecord does not install: ``pip install pytest``, or the ``test``
extra, ``pip install "spark-tfrecord[test]"``. Use them from a ``conftest.py``::

    pytest_plugins = ["spark_tfrecord.testing"]

    def test_my_job(spark, tmp_path):
        spark.range(3).write.format("tfrecord").save(str(tmp_path / "out"))

``spark`` is one local SparkSession for the whole test session, with the bundled jar on its
class path, the UI off, two shuffle partitions and UTC as the session time zone.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def local_session(
    *, app_name: str = "spark-tfrecord-tests", cores: int = 2, conf: dict[str, str] | None = None
) -> SparkSession:
    """A local SparkSession with the tfrecord jar, tuned for small test data."""
    from pyspark.sql import SparkSession

    from spark_tfrecord import configure

    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    session = configure(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One local SparkSession with the tfrecord jar for the whole test session."""
    session = local_session(conf={"spark.driver.memory": "2g"})
    yield session
    session.stop()
