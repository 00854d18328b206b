"""Fixtures of the install tests: the wheel under test and fresh virtual environments.

These tests install the wheel as users do, into environments of their own, so they run apart
from the Spark suites (ci/test runs them once, from the tools environment, which has no pyspark):
``cd tests/install && python -m pytest``. The wheel is ``$SPARK_TFRECORD_WHEEL``, or the newest
one in ``dist/``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def wheel() -> Path:
    given = os.environ.get("SPARK_TFRECORD_WHEEL")
    if given:
        return Path(given)
    wheels = sorted((ROOT / "dist").glob("spark_tfrecord-*.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        pytest.fail("no wheel: set SPARK_TFRECORD_WHEEL or run `python -m build` first")
    return wheels[-1]


class Venv:
    """A fresh virtual environment; ``pip`` and ``python`` run in it."""

    def __init__(self, path: Path) -> None:
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        self.python = str(path / "bin" / "python")
        self.bin = path / "bin"

    def pip(self, *args: str) -> str:
        # No byte-compiling: the environments live for one test, and compiling pyspark's
        # thousands of files was most of an install's CPU on CI's 2 cores.
        if args[:1] == ("install",):
            args = ("install", "--no-compile", *args[1:])
        done = subprocess.run(
            [self.python, "-m", "pip", "--disable-pip-version-check", *args],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            pytest.fail(f"pip {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def would_install(self, *requirements: str) -> dict[str, str]:
        """What ``pip install --dry-run`` would install for ``requirements``: name -> version."""
        report = self.pip("install", "--dry-run", "--quiet", "--report", "-", *requirements)
        return {
            item["metadata"]["name"].lower(): item["metadata"]["version"]
            for item in json.loads(report)["install"]
        }

    def installed(self) -> dict[str, str]:
        listed = json.loads(self.pip("list", "--format", "json"))
        return {p["name"].lower(): p["version"] for p in listed}

    def run(self, code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.python, "-c", code], capture_output=True, text=True, env=env, cwd="/"
        )


@pytest.fixture
def venv(tmp_path: Path) -> Venv:
    return Venv(tmp_path / "venv")
