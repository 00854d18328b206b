"""Which heavy modules an import brings in, in a fresh Python.

``python -m support.imported_modules MODULE`` imports MODULE and prints, as one JSON line, which
of pyspark, py4j and tensorflow are then loaded (test_python_api: importing spark_tfrecord
starts nothing). This package itself imports none of them.
"""

from __future__ import annotations

import importlib
import json
import sys

HEAVY = ("pyspark", "py4j", "tensorflow")


def main(module: str) -> list[str]:
    importlib.import_module(module)
    return sorted(m for m in HEAVY if m in sys.modules)


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
