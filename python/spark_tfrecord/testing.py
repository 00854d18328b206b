"""pytest fixtures for TFRecord code with Spark: ``pytest_plugins = ["spark_tfrecord.testing"]``."""

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
    """Stop :mod:`spark_tfrecord.local`'s JVM before faulthandler resets SIGSEGV, which kills it."""
    from spark_tfrecord.local import stop_jvm

    stop_jvm()
