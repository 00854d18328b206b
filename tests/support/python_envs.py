"""Python environments apart from the suite's, for the Spark Connect tests of the Python data
source (test_connect_python_source):

- `connect_client_venv`: a virtual environment holding only Spark Connect's own client,
  ``pyspark-client`` from PyPI, and the package's dependencies, built once into the cache
  (``$SPARK_TFRECORD_CACHE/venv``, as support.maven caches jars); spark-tfrecord is then given
  to it with `package_path`.
- `package_path`: a folder that holds only this package (``spark_tfrecord`` and the top-level
  ``pyspark_tfrecord`` module), linked to the ones this process imports: the wheel's in CI, the
  checkout's otherwise. On a PYTHONPATH it is spark-tfrecord installed.
- `worker_python`: a Python for a server's Python workers, the suite's own packages with or
  without spark-tfrecord (the suite's environment has the wheel installed, so a server whose
  workers must not see it cannot just use this interpreter).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from support import ROOT

CACHE = Path(os.environ.get("SPARK_TFRECORD_CACHE", ROOT / ".cache")) / "venv"
#: The package's dependencies (pyproject.toml's), which a client environment installs with it.
DEPENDENCIES = ("numpy>=1.22", "rich>=13")
#: Top-level names of this package, in an environment's site-packages.
OURS = ("spark_tfrecord", "pyspark_tfrecord")


def connect_client_venv(spark_version: str) -> Path:
    """The Python of an environment with the newest ``pyspark-client`` not newer than
    ``spark_version`` (the index may lack that very release: then the newest earlier one, which
    talks to a server of a later release) and the package's dependencies, and no pyspark."""
    name = f"connect-client-{spark_version}-py{sys.version_info[0]}.{sys.version_info[1]}"
    folder = CACHE / name
    python = folder / "bin" / "python"
    if python.is_file():
        return python
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = CACHE / f"{name}.{os.getpid()}.part"
    shutil.rmtree(partial, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(partial)], check=True)
    done = subprocess.run(
        [str(partial / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-compile",
         "--disable-pip-version-check", f"pyspark-client<={spark_version}", *DEPENDENCIES],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, f"pip install pyspark-client failed:\n{done.stderr[-5000:]}"
    try:
        partial.rename(folder)  # a venv moves whole: its python is a link to the base one
    except OSError:  # another run finished first
        shutil.rmtree(partial, ignore_errors=True)
    return python


def package_path(folder: Path) -> Path:
    """``folder`` made to hold links to this package's two top-level names, as this process
    imports them."""
    import pyspark_tfrecord
    import spark_tfrecord

    folder.mkdir(parents=True)
    (folder / "spark_tfrecord").symlink_to(Path(spark_tfrecord.__file__).resolve().parent)
    (folder / "pyspark_tfrecord.py").symlink_to(Path(pyspark_tfrecord.__file__).resolve())
    return folder


def worker_python(folder: Path, *, with_package: Path | None) -> tuple[str, str]:
    """A Python for a Spark server's Python workers, and the PYTHONPATH to give it: this
    interpreter without its site (``-S``), on links to every package of its environment but this
    one (``folder``), plus ``with_package`` (a `package_path`) when given."""
    site = folder / "site"
    site.mkdir(parents=True)
    seen: set[str] = set()
    for directory in dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]):
        for entry in Path(directory).iterdir():
            name = entry.name.split("-")[0].split(".")[0].lower()
            if name in OURS or entry.suffix == ".pth" or entry.name in seen:
                continue
            seen.add(entry.name)
            (site / entry.name).symlink_to(entry)
    launcher = folder / "python"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    launcher.chmod(0o755)
    path = [str(site)] if with_package is None else [str(with_package), str(site)]
    return str(launcher), os.pathsep.join(path)
