"""Which heavy modules an import brings in, in a fresh Python.

``python -m support.imported_modules MODULE [--without M ...]`` imports MODULE and prints, as one
JSON line, which of pyspark, py4j, JPype, NumPy, torch and tensorflow are then loaded
(test_python_api: importing spark_tfrecord starts nothing and imports none of them).
``--without`` makes the modules named after it unimportable first, as in an environment that
lacks them. This package itself imports none of them.
"""

from __future__ import annotations

import importlib
import importlib.abc
import json
import sys
from typing import Any

#: What a trainer's snippet must not bring in (`trainer_side`).
HEAVY = ("pyspark", "py4j", "tensorflow")
#: What ``import spark_tfrecord`` must not bring in.
AT_IMPORT = (*HEAVY, "jpype", "numpy", "torch")


class _Missing(importlib.abc.MetaPathFinder):
    """Makes the top-level modules ``names`` (and their sub-modules) unimportable."""

    def __init__(self, names: list[str]) -> None:
        self.names = set(names)

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if fullname.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


def main(module: str, without: list[str] | None = None) -> list[str]:
    if without:
        sys.meta_path.insert(0, _Missing(without))
    importlib.import_module(module)
    return sorted(m for m in AT_IMPORT if m in sys.modules)


if __name__ == "__main__":
    args = sys.argv[1:]
    missing = args[args.index("--without") + 1 :] if "--without" in args else []
    print(json.dumps(main(args[0], missing)))
