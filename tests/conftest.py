"""The fixtures of the suite; the project's own tests use those it ships to users
(spark_tfrecord.testing). Helpers that tests import live in the `support` package."""

from __future__ import annotations

import os
from importlib.metadata import version
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

pytest_plugins = ["spark_tfrecord.testing"]

# Files of one Spark line, which the other lines' suites do not collect (nothing is skipped):
# test_old_jackson puts the class path of issue 41 first, Spark 3.5's jackson-databind with an
# older jackson-core.
collect_ignore = [] if version("pyspark").startswith("3.") else ["test_old_jackson.py"]
# The codec's differential tests (the Python codec against the jar's, through JPype and Spark):
# ci/test leaves them out of the Spark 4.0 suite when its matrix also holds a newer Spark 4,
# whose suite runs the same spark4_2.13 jar through them (SPARK_TFRECORD_CODEC_TESTS=0), for
# CI's time. Run alone, every suite collects them.
if os.environ.get("SPARK_TFRECORD_CODEC_TESTS", "1") == "0":
    collect_ignore += [
        "test_codec_differential.py",
        "test_loader_parity.py",
        "test_python_encoder.py",
        "test_python_inference.py",
    ]


@pytest.fixture(scope="session")
def tf() -> object:
    import tensorflow

    return tensorflow


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """A fresh output directory path (not yet created)."""
    return tmp_path / "out"
