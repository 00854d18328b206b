"""Builds the jars with sbt when they are missing or older than the Scala sources.

Everything else about the package is in pyproject.toml; this file only hooks the jar build into
``python -m build`` (both the sdist and the wheel carry the jars).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent
JAR_DIR = ROOT / "python" / "spark_tfrecord" / "jars"


def _newest_source() -> float:
    sources = [
        ROOT / "build.sbt",
        ROOT / "project" / "build.properties",
        ROOT / "python" / "spark_tfrecord" / "_version.py",  # the jars' version
    ]
    sources += [p for p in (ROOT / "scala").rglob("*") if p.is_file()]
    return max(p.stat().st_mtime for p in sources if p.exists())


def ensure_jars() -> None:
    jars = list(JAR_DIR.glob("*.jar"))
    has_sources = (ROOT / "scala").is_dir() and (ROOT / "ci" / "sbt").is_file()
    if jars and (not has_sources or min(j.stat().st_mtime for j in jars) >= _newest_source()):
        return
    if not has_sources:
        raise SystemExit(
            "spark-tfrecord: no jars in python/spark_tfrecord/jars and no Scala "
            "sources to build them from"
        )
    subprocess.run(
        ["bash", str(ROOT / "ci" / "sbt"), "stageJars"],
        cwd=ROOT,
        check=True,
        stdin=subprocess.DEVNULL,
    )


class BuildPyWithJars(build_py):
    def run(self) -> None:
        ensure_jars()
        super().run()


class SdistWithJars(sdist):
    def run(self) -> None:
        ensure_jars()
        super().run()


setup(cmdclass={"build_py": BuildPyWithJars, "sdist": SdistWithJars})
