"""One local SparkSession for the whole run, with the jar from the installed wheel."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from pyspark.sql import SparkSession

    import spark_tfrecord

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("spark-tfrecord-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.session.timeZone", "UTC")
    )
    session = spark_tfrecord.configure(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def tf() -> object:
    import tensorflow

    return tensorflow


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """A fresh output directory path (not yet created)."""
    return tmp_path / "out"


def tfrecord_files(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*.tfrecord*") if not p.name.startswith((".", "_")))
