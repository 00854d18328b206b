"""pytest fixtures for code that reads or writes TFRecords with Spark.

They need pytest, which spark-tfrecord does not install: ``pip install pytest``, or the ``test``
extra, ``pip install "spark-tfrecord[test]"``. Use them from a ``conftest.py``::

    pytest_plugins = ["spark_tfrecord.testing"]

    def test_my_job(spark, tmp_path):
        spark.range(3).write.format("tfrecord").save(str(tmp_path / "out"))

``spark`` is one local SparkSession for the whole test session, with the bundled jar on its
class path, the UI off, two shuffle partitions and UTC as the session time zone.

The plugin also stops, at the end of the session, the JVM that :mod:`spark_tfrecord.local` (or
``spark-tfrecord inspect`` of local files, called in the tests' process) started: see
:func:`spark_tfrecord.local.stop_jvm`.
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


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Stops the in-process JVM of :mod:`spark_tfrecord.local`, if one runs, before pytest's
    ``faulthandler`` plugin puts back the SIGSEGV handler it found at start-up. The JVM catches
    its own SIGSEGVs (its null checks are made that way); without its handler, JPype stopping
    the JVM at exit kills the process after the last test, about one run in three."""
    from spark_tfrecord.local import stop_jvm

    stop_jvm()
