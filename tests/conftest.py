"""The fixtures of the suite; the project's own tests use those it ships to users
(spark_tfrecord.testing). Helpers that tests import live in the `support` package."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

pytest_plugins = ["spark_tfrecord.testing"]


@pytest.fixture(scope="session")
def tf() -> object:
    import tensorflow

    return tensorflow


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """A fresh output directory path (not yet created)."""
    return tmp_path / "out"
