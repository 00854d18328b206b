"""The project's own tests use the fixtures it ships to users (spark_tfrecord.testing)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

#: JVM options for the drivers of child processes and test servers, which run small queries:
#: the client compiler alone and the serial collector start them in about half the time.
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

pytest_plugins = ["spark_tfrecord.testing"]


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
