"""Checks that the Scala packages depend one way, downwards (README.md, "How it is built").

The layers, lowest first: `json` (JSON read and written without Jackson) and `wire` (protobuf
wire primitives), which do not use each other, then `framing` (TFRecord files), `codec`
(rows <-> Example bytes), `sql` (Spark SQL: options, inference, pruning, output writers), then
`tfds` (TFDS folders and sharded writes) and `hadoop` (the mapreduce formats' readers and
writers), which do not use each other, then `tools` (what runs without a Spark job). The root
package `io.github.sparktfrecord` holds the public entry points, which may use every layer, and
the errors and version shims, which every layer may use.

A file's dependencies are what it names of our packages anywhere in its code, strings included
(generated source names classes too), comments excluded; a name of the root package counts when
the file imports it or names it in full outside a string. Exit 1 with each wrong dependency, file and line.
Usage: python3 ci/check-layers.py [REPO]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = "io.github.sparktfrecord"
RANK = {"json": 0, "wire": 0, "framing": 1, "codec": 2, "sql": 3, "tfds": 4, "hadoop": 4, "tools": 5}
# Root files every layer may use: the errors and what differs between Spark versions.
SHARED_ROOT_FILES = {"TFRecordErrors.scala", "SparkShims.scala", "SparkThrowableShim.scala"}
DEFINITION = re.compile(
    r"^(?:private\[\w+\]\s+)?(?:(?:final|sealed|abstract|implicit)\s+)*(?:case\s+)?"
    r"(?:class|object|trait)\s+(\w+)",
    re.M,
)


# `ROOT.{A, B}`, `ROOT.Name`, `ROOT.layer.Name`, `ROOT.layer.{A, B}`: what matters is the first
# part (a layer, or names of the root package).
USE = re.compile(rf"{re.escape(ROOT)}\.(?:\{{(?P<braced>[^}}]*)\}}|(?P<first>\w+))")


def code_of(text: str) -> str:
    """`text` without comments, line breaks kept so that line numbers hold."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))  # noqa: E731
    text = re.sub(r"/\*.*?\*/", blank, text, flags=re.S)
    return re.sub(r"//[^\n]*", blank, text)


def main(repo: Path) -> int:
    sources = sorted(
        p for d in (repo / "scala/src/main").glob("scala*") for p in d.rglob("*.scala")
    )
    layer_of: dict[Path, str] = {}
    shared: set[str] = set()
    for path in sources:
        package = re.search(r"^package ([\w.]+)", path.read_text(), re.M)
        if not package or not (package.group(1) + ".").startswith(ROOT + "."):
            print(f"{path}: not in {ROOT}")
            return 1
        layer = package.group(1)[len(ROOT) + 1 :]
        if layer and layer not in RANK:
            print(f"{path}: package {package.group(1)} is no layer (layers: {', '.join(RANK)})")
            return 1
        layer_of[path] = layer
        if not layer and path.name in SHARED_ROOT_FILES:
            shared.update(DEFINITION.findall(path.read_text()))
    wrong = []
    for path, layer in layer_of.items():
        if not layer:
            continue  # the entry points may use every layer
        for number, line in enumerate(code_of(path.read_text()).split("\n"), 1):
            for m in USE.finditer(line):
                if m.group("first") in RANK:
                    used = m.group("first")
                    if used != layer and RANK[used] >= RANK[layer]:
                        wrong.append(f"{path.relative_to(repo)}:{number}: {layer} uses {used}")
                    continue
                if line[: m.start()].count('"') % 2:
                    continue  # a root name in a string (a logger's name) is no dependency
                names = m.group("braced") or m.group("first")
                for name in (n.strip().split("=>")[0].strip() for n in names.split(",")):
                    if name not in shared:
                        where = f"{path.relative_to(repo)}:{number}"
                        wrong.append(f"{where}: {layer} uses the entry point {name}")
    for line in wrong:
        print(line)
    if wrong:
        print(f"{len(wrong)} dependencies against the layers (see ci/check-layers.py)")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent.parent)))
