"""The Python package's layers (ci/check-python-layers.py, which ci/test runs too): the check
passes on the package, and names each kind of violation with its file and line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support import ROOT

CHECK = ROOT / "ci" / "check-python-layers.py"


def check(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK), str(repo), *args], capture_output=True, text=True
    )


def test_the_package_keeps_its_layers() -> None:
    done = check(ROOT, "--graph")
    assert done.returncode == 0, done.stdout
    graph = dict(line.split(": ", 1) for line in done.stdout.splitlines())
    assert graph["errors"] == "-  | lazy: _spark.errors"
    assert "pyspark" not in graph["_loaders.spec"] and "_spark" not in graph["_loaders.source"]
    assert "_spark" not in graph["_source.reader"] and "py4j" not in graph["_source.reader"]
    assert graph["arrow"] == "-  | lazy: _source.arrow_read  | third-party: pyarrow"


def test_each_violation_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    package = tmp_path / "python" / "spark_tfrecord"
    files = {
        "__init__.py": "import numpy\n",
        "errors.py": "from spark_tfrecord._format import crc\n",
        "_format/__init__.py": "",
        "_format/crc.py": "import pyspark\n\n\ndef f():\n    import fsspec\n",
        "_format/a.py": "from spark_tfrecord._format import b\n",
        "_format/b.py": "from . import a\n",
        "_loaders/__init__.py": "",
        "_loaders/spec.py": "def f():\n    from spark_tfrecord._spark import io\n    import py4j\n",
        "_spark/__init__.py": "",
        "_spark/io.py": "from spark_tfrecord.cli import main\n",
        "_source/__init__.py": "",
        "_source/reader.py": "import py4j\nfrom spark_tfrecord._spark import io\n",
        "cli/__init__.py": "def main():\n    pass\n",
        # read_arrow's module reaching py4j through a lazy import of the data source's reader
        "arrow.py": "def read_arrow():\n    from spark_tfrecord._source import reader\n",
    }
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    done = check(tmp_path)
    assert done.returncode == 1
    assert sorted(done.stdout.splitlines()) == [
        "import cycle: spark_tfrecord._format.a (python/spark_tfrecord/_format/a.py:1) -> "
        "spark_tfrecord._format.b, spark_tfrecord._format.b (python/spark_tfrecord/_format/b.py:1)"
        " -> spark_tfrecord._format.a",
        "python/spark_tfrecord/__init__.py:1: `import spark_tfrecord` imports numpy here",
        "python/spark_tfrecord/_format/crc.py:1: _format imports pyspark at module level",
        "python/spark_tfrecord/_loaders/spec.py:2: _loaders imports spark_tfrecord._spark.io",
        "python/spark_tfrecord/_loaders/spec.py:3: _loaders imports py4j",
        "python/spark_tfrecord/_source/reader.py:1: _source imports py4j",
        "python/spark_tfrecord/_source/reader.py:1: spark_tfrecord.arrow reaches py4j here",
        "python/spark_tfrecord/_source/reader.py:2: _source imports spark_tfrecord._spark.io "
        "(only _format and errors)",
        "python/spark_tfrecord/_spark/io.py:1: _spark imports spark_tfrecord.cli",
        "python/spark_tfrecord/errors.py:1: errors (a leaf) imports spark_tfrecord._format.crc",
    ]
