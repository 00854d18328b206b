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
    assert graph["errors"] == "-"  # a leaf: not even a lazy import of the package
    assert "pyspark" not in graph["_loaders.spec"] and "_spark" not in graph["_loaders.source"]
    assert "_spark" not in graph["_source.reader"] and "py4j" not in graph["_source.reader"]
    assert graph["arrow"] == "-  | lazy: _source.arrow_read  | third-party: pyarrow"


#: What the check says of the package test_each_violation_is_named_with_its_file_and_line makes.
EXPECTED = [
    "import cycle: spark_tfrecord._format.datasets.d"
    " (python/spark_tfrecord/_format/datasets/d.py:2)"
    " -> spark_tfrecord._format.datasets.e, spark_tfrecord._format.datasets.e"
    " (python/spark_tfrecord/_format/datasets/e.py:2) -> spark_tfrecord._format.datasets.d",
    "import cycle: spark_tfrecord._format.entries.a (python/spark_tfrecord/_format/entries/a.py:1)"
    " -> spark_tfrecord._format.entries.b, spark_tfrecord._format.entries.b"
    " (python/spark_tfrecord/_format/entries/b.py:1) -> spark_tfrecord._format.entries.a",
    "python/spark_tfrecord/__init__.py:1: `import spark_tfrecord` imports numpy here",
    "python/spark_tfrecord/_format/columns/c.py:1: imports _helper, a private name of "
    "spark_tfrecord._format.frames.crc",
    "python/spark_tfrecord/_format/frames/crc.py:1: _format imports pyspark at module level",
    "python/spark_tfrecord/_format/frames/up.py:2: the frames stage imports "
    "spark_tfrecord._format.columns.c, of the later columns stage "
    "(files < frames < entries < columns < datasets)",
    "python/spark_tfrecord/_format/loose.py: a module of _format in none of its stages "
    "(files, frames, entries, columns, datasets)",
    "python/spark_tfrecord/_loaders/spec.py:2: _loaders imports spark_tfrecord._spark.io",
    "python/spark_tfrecord/_loaders/spec.py:3: _loaders imports py4j",
    "python/spark_tfrecord/_source/reader.py:1: _source imports py4j",
    "python/spark_tfrecord/_source/reader.py:1: spark_tfrecord.arrow reaches py4j here",
    "python/spark_tfrecord/_source/reader.py:2: _source imports spark_tfrecord._spark.io "
    "(only _format and errors)",
    "python/spark_tfrecord/_spark/io.py:1: _spark imports spark_tfrecord.cli",
    "python/spark_tfrecord/errors.py:1: errors (a leaf) imports spark_tfrecord._format.frames.crc",
]


def test_each_violation_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    package = tmp_path / "python" / "spark_tfrecord"
    files = {
        "__init__.py": "import numpy\n",
        "errors.py": "from spark_tfrecord._format.frames import crc\n",
        "_format/__init__.py": "",
        "_format/frames/crc.py": "import pyspark\n\n\ndef f():\n    import fsspec\n",
        "_format/entries/a.py": "from spark_tfrecord._format.entries import b\n",
        "_format/entries/b.py": "from . import a\n",
        "_format/columns/c.py": "from spark_tfrecord._format.frames.crc import _helper, __doc__\n",
        "_format/datasets/d.py": "def f():\n    from spark_tfrecord._format.datasets import e\n",
        "_format/datasets/e.py": "def f():\n    from spark_tfrecord._format.datasets import d\n",
        # a module in no stage, and a stage importing a later one (lazily too)
        "_format/loose.py": "",
        "_format/frames/up.py": "def f():\n    from spark_tfrecord._format.columns import c\n",
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
    assert sorted(done.stdout.splitlines()) == EXPECTED


SIZE = ROOT / "ci" / "check-python-size.py"


def test_modules_and_functions_keep_within_their_sizes(tmp_path: Path) -> None:
    """ci/check-python-size.py passes on the package, and names a module over 500 lines, a
    function over 80 lines of code without a ``# long:`` comment, and a debt paid off."""
    done = subprocess.run([sys.executable, str(SIZE), str(ROOT)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
    package = tmp_path / "python" / "spark_tfrecord"
    package.mkdir(parents=True)
    body = "".join(f"    x{i} = {i}\n" for i in range(81))
    (package / "big.py").write_text("x = 1\n" * 501)
    (package / "f.py").write_text(
        f'def f():\n    """Doc."""\n{body}\n\n# long: one piece\ndef g():\n{body}'
    )
    done = subprocess.run(
        [sys.executable, str(SIZE), str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[:2] == [
        "python/spark_tfrecord/big.py:1: 501 lines, over 500",
        "python/spark_tfrecord/f.py:1: 81 lines of code, over 80",
    ]
    assert (
        "_format/columns/schema.py:columns: within the limit now: take it out of DEBT"
        in "\n".join(lines)
    )
