"""Checks that the Python package python/spark_tfrecord depends one way, in layers (issue 42).

The layers: ``errors`` (a leaf: the conditions and how to read them), ``_format`` (the file
format: framing, compression, manifest, schema, codec; the standard library and NumPy), then
``_loaders`` (torch, Grain, ``tf.data``, ``feature_spec``: never pyspark, py4j or JPype) and
``_spark`` (the session, the helpers, the translation of Java errors), then ``cli`` and the
public modules on top. The rules:

- ``errors`` imports nothing of the package and no third-party module, not even inside a
  function.
- ``_format`` imports only ``_format`` and ``errors`` of the package, and of third-party modules
  only NumPy at module level, and fsspec, gcsfs, google_crc32c and crc32c inside a function
  (the optional libraries, imported when used; gcsfs for its JSON-only file system class).
- ``_format``'s sub-packages are the pipeline's stages, in its order (STAGES): ``files`` (file
  systems, listing, partition folders), ``frames`` (TFRecord framing and its checksums,
  compression, the record readers and writers, manifests, the read options), ``entries`` (the
  wire format, the one walk of a record's features, the record and batch decoders), ``columns``
  (the schema walk, the type table, the loaders' columns and batches, the encoder), ``datasets``
  (a folder's schema and info, inference, ``inspect``'s rows, TFDS folders). A stage imports
  only itself and the stages before it (as the jar's ``wire < framing < codec < sql``); every
  module of ``_format`` is in one.
- ``_loaders`` never imports pyspark, py4j, JPype, ``_spark``, ``cli`` or the public modules
  ``local`` and ``testing``.
- ``_spark`` never imports ``cli``.
- ``_source`` (the jar-less Python data source, issue 43) imports only ``_format``, ``errors``
  and ``_source`` of the package, and of third-party modules only pyspark, pyarrow and NumPy:
  never py4j or JPype (no JVM of its own: it runs in Spark's Python workers and on Connect).
- ``ray`` (Ray Data's datasource and datasink, issue 58: a consumer on top of the jar-less
  read and the encoder) imports only ``ray``, ``_source``, ``_format`` and ``errors`` of the
  package, and of third-party modules only Ray, pyarrow and NumPy (RAY_THIRD_PARTY); nothing
  below imports it.
- ``import spark_tfrecord`` loads, through its module-level imports, none of pyspark, py4j,
  JPype, NumPy, torch, TensorFlow, Ray (HEAVY).
- The public modules in NO_SPARK (``arrow``: ``read_arrow``, which a trainer with no Spark
  calls; ``ray``: Ray's workers have no Spark) reach none of pyspark, py4j and JPype, through any import of theirs or of the modules
  they import, those in function bodies included (a function of a module imported is taken as
  called); a package above a module imported counts by its module-level imports, which are
  what importing the module runs. ``_source`` may import pyspark (its data source's modules
  do), so this is the rule that keeps ``read_arrow``'s part of ``_source`` free of it.
- No import cycles among the package's modules, counting every import: at module level,
  under ``if TYPE_CHECKING:`` (mypy follows them) and inside a function body (issue 57: a lazy
  import cannot meet a half-initialized module, but a circle of them is still two modules that
  each need the other, which no reader can follow one way).
- No private name (``_x``, not ``__x__``) of a module imported into another: a name two modules
  share is public in the one that defines it (issue 57).

Every ``import`` and ``from ... import`` is an edge, wherever it is in the file: at module
level, under ``if TYPE_CHECKING:``, or in a function body. ``from spark_tfrecord.x import y``
is an edge to ``spark_tfrecord.x.y`` when that is a module, else to ``spark_tfrecord.x``.

Usage: python3 ci/check-python-layers.py [REPO] [--graph]
  --graph  prints each module's imports of the package (module-level; ``typing:`` those under
           ``if TYPE_CHECKING:``, ``lazy:`` those in a function body) and of third-party
           modules, then checks. Exit 1 naming each violation
           with its file and line.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "spark_tfrecord"
#: What the root package must not load when imported.
HEAVY = ("pyspark", "py4j", "jpype", "numpy", "torch", "tensorflow", "ray")
#: Third-party modules the format package may import: at module level, and inside a function.
FORMAT_MODULE_LEVEL = {"numpy"}
FORMAT_LAZY = {"numpy", "fsspec", "gcsfs", "google_crc32c", "crc32c"}
#: The stages of ``_format``, in the pipeline's order: each imports only those before it.
STAGES = ("files", "frames", "entries", "columns", "datasets")
#: Third-party modules the jar-less data source may import.
SOURCE_THIRD_PARTY = {"pyspark", "pyarrow", "numpy"}
#: Third-party modules Ray Data's datasource and datasink may import.
RAY_THIRD_PARTY = {"ray", "pyarrow", "numpy"}
#: The public modules that must reach no Spark (SPARK), lazily neither: read_arrow's.
NO_SPARK = (f"{PACKAGE}.arrow", f"{PACKAGE}.ray")
SPARK = ("pyspark", "py4j", "jpype")
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


@dataclass(frozen=True)
class Edge:
    source: str  # the importing module
    target: str  # a module of the package, or a third-party top-level name
    path: Path
    line: int
    lazy: bool  # inside a function body
    typing: bool  # under ``if TYPE_CHECKING:``
    internal: bool
    private: str = ""  # a private name (``_x``) imported from another module of the package


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def edges_of(root: Path, path: Path, modules: set[str]) -> list[Edge]:
    source = module_name(root, path)
    package = source if path.name == "__init__.py" else source.rpartition(".")[0]
    found: list[Edge] = []

    def add(target: str, node: ast.stmt, lazy: bool, typing: bool, private: str = "") -> None:
        internal = target == PACKAGE or target.startswith(PACKAGE + ".")
        if not internal:
            target = target.split(".")[0]
        found.append(Edge(source, target, path, node.lineno, lazy, typing, internal, private))

    def visit(node: ast.AST, lazy: bool, typing: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(alias.name, child, lazy, typing)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    stem = ".".join(base + ([child.module] if child.module else []))
                else:
                    stem = child.module or ""
                for alias in child.names:
                    full = f"{stem}.{alias.name}"
                    name = alias.name
                    private = name if name.startswith("_") and not name.startswith("__") else ""
                    if full in modules:
                        add(full, child, lazy, typing)
                    else:
                        add(stem, child, lazy, typing, private)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, True, typing)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    visit(ast.Module(body=[stmt], type_ignores=[]), lazy, True)
                for stmt in child.orelse:
                    visit(ast.Module(body=[stmt], type_ignores=[]), lazy, typing)
            else:
                visit(child, lazy, typing)

    visit(ast.parse(path.read_text(), str(path)), False, False)
    return found


def layer(module: str) -> str:
    """``errors``, ``_format``, ``_loaders``, ``_source``, ``_spark``, ``cli``, ``ray``, or the
    module's own name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def stage(module: str) -> int:
    """The index in STAGES of a module of ``_format`` (-1: ``_format`` itself or no stage)."""
    parts = module.split(".")
    return STAGES.index(parts[2]) if len(parts) > 3 and parts[2] in STAGES else -1


def stage_violations(edges: list[Edge], modules: set[str], repo: Path) -> list[str]:
    """A ``_format`` module outside the stages, or a stage importing a later one."""
    wrong = []
    packages = {f"{PACKAGE}._format", *(f"{PACKAGE}._format.{s}" for s in STAGES)}
    for m in sorted(modules):
        if layer(m) == "_format" and m not in packages and stage(m) < 0:
            path = "python/" + m.replace(".", "/") + ".py"
            wrong.append(f"{path}: a module of _format in none of its stages ({', '.join(STAGES)})")
    for e in edges:
        if e.internal and layer(e.source) == "_format" and layer(e.target) == "_format":
            src, dst = stage(e.source), stage(e.target)
            if src >= 0 and dst > src:
                where = f"{e.path.relative_to(repo)}:{e.line}"
                wrong.append(
                    f"{where}: the {STAGES[src]} stage imports {e.target}, of the later "
                    f"{STAGES[dst]} stage ({' < '.join(STAGES)})"
                )
    return wrong


def violations(edges: list[Edge], repo: Path) -> list[str]:
    wrong = []
    for e in edges:
        where = f"{e.path.relative_to(repo)}:{e.line}"
        if e.private and e.internal and e.target != e.source:
            wrong.append(f"{where}: imports {e.private}, a private name of {e.target}")
        src, dst = layer(e.source), layer(e.target) if e.internal else None
        if src == "errors":
            if e.internal:
                wrong.append(f"{where}: errors (a leaf) imports {e.target}")
            elif e.target not in STDLIB:
                wrong.append(f"{where}: errors (a leaf) imports the third-party {e.target}")
        elif src == "_format":
            if e.internal and dst not in ("_format", "errors"):
                wrong.append(f"{where}: _format imports {e.target} (only _format and errors)")
            elif not e.internal and e.target not in STDLIB:
                allowed = FORMAT_LAZY if e.lazy else FORMAT_MODULE_LEVEL
                if e.target not in allowed:
                    how = "inside a function" if e.lazy else "at module level"
                    wrong.append(f"{where}: _format imports {e.target} {how}")
        elif src == "_loaders":
            internal = e.internal and dst in ("_spark", "cli", "local", "testing")
            if internal or (not e.internal and e.target in ("pyspark", "py4j", "jpype")):
                wrong.append(f"{where}: _loaders imports {e.target}")
        elif src == "_spark" and e.internal and dst == "cli":
            wrong.append(f"{where}: _spark imports {e.target}")
        elif src == "_source":
            if e.internal and dst not in ("_source", "_format", "errors"):
                wrong.append(f"{where}: _source imports {e.target} (only _format and errors)")
            elif not e.internal and e.target not in STDLIB | SOURCE_THIRD_PARTY:
                wrong.append(f"{where}: _source imports {e.target}")
        elif src == "ray":
            if e.internal and dst not in ("ray", "_source", "_format", "errors"):
                wrong.append(f"{where}: ray imports {e.target} (only _source, _format, errors)")
            elif not e.internal and e.target not in STDLIB | RAY_THIRD_PARTY:
                wrong.append(f"{where}: ray imports {e.target}")
        if e.internal and dst == "ray" and src != "ray":
            wrong.append(f"{where}: {e.source} imports {e.target} (ray is a consumer on top)")
    return wrong


def heavy_at_import(edges: list[Edge], repo: Path) -> list[str]:
    """What ``import spark_tfrecord`` loads of HEAVY, through module-level imports."""
    runtime: dict[str, list[Edge]] = {}
    for e in edges:
        if not e.lazy and not e.typing:
            runtime.setdefault(e.source, []).append(e)
    wrong, seen, todo = [], {PACKAGE}, [PACKAGE]
    while todo:
        for e in runtime.get(todo.pop(), []):
            if not e.internal:
                if e.target in HEAVY:
                    where = f"{e.path.relative_to(repo)}:{e.line}"
                    wrong.append(f"{where}: `import {PACKAGE}` imports {e.target} here")
                continue
            # importing a.b.c runs a/__init__, a/b/__init__ first
            parts = e.target.split(".")
            for k in range(2, len(parts) + 1):
                name = ".".join(parts[:k])
                if name not in seen:
                    seen.add(name)
                    todo.append(name)
    return wrong


def spark_reached(edges: list[Edge], repo: Path) -> list[str]:
    """Where a module of NO_SPARK reaches SPARK: all imports of each module it imports (lazy
    ones too), the module-level ones of the packages above them."""
    runtime: dict[str, list[Edge]] = {}
    for e in edges:
        if not e.typing:
            runtime.setdefault(e.source, []).append(e)
    wrong = []
    for start in NO_SPARK:
        every: dict[str, bool] = {start: True}  # module: whether its lazy imports count
        todo = [start]
        while todo:
            module = todo.pop()
            for e in runtime.get(module, []):
                if e.lazy and not every[module]:
                    continue
                if not e.internal:
                    if e.target in SPARK:
                        where = f"{e.path.relative_to(repo)}:{e.line}"
                        wrong.append(f"{where}: {start} reaches {e.target} here")
                    continue
                parts = e.target.split(".")
                for k in range(2, len(parts) + 1):
                    name, whole = ".".join(parts[:k]), k == len(parts)
                    if name not in every or (whole and not every[name]):
                        every[name] = whole or every.get(name, False)
                        todo.append(name)
    return sorted(set(wrong))


def cycles(edges: list[Edge], repo: Path) -> list[str]:
    """Cycles of imports (TYPE_CHECKING ones and those inside functions included), one line
    each."""
    graph: dict[str, dict[str, Edge]] = {}
    for e in edges:
        if e.internal and e.target != e.source:
            graph.setdefault(e.source, {}).setdefault(e.target, e)
    found: list[str] = []
    reported: set[frozenset[str]] = set()
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, {})):
            if state.get(nxt) == 1:
                loop = [*stack[stack.index(nxt) :], nxt]
                key = frozenset(loop)
                if key not in reported:
                    reported.add(key)
                    steps = []
                    for a, b in zip(loop, loop[1:]):
                        e = graph[a][b]
                        steps.append(f"{a} ({e.path.relative_to(repo)}:{e.line}) -> {b}")
                    found.append("import cycle: " + ", ".join(steps))
            elif nxt not in state:
                walk(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node)
    return found


def print_graph(edges: list[Edge], modules: set[str]) -> None:
    def short(name: str) -> str:
        return name if name == PACKAGE else name[len(PACKAGE) + 1 :]

    for module in sorted(modules):
        mine = [e for e in edges if e.source == module]
        now = sorted({short(e.target) for e in mine if e.internal and not e.lazy and not e.typing})
        typing = {short(e.target) for e in mine if e.internal and not e.lazy and e.typing}
        lazy = {short(e.target) for e in mine if e.internal and e.lazy}
        third = sorted({e.target for e in mine if not e.internal and e.target not in STDLIB})
        line = f"{short(module)}: {', '.join(now) or '-'}"
        if typing - set(now):
            line += f"  | typing: {', '.join(sorted(typing - set(now)))}"
        if lazy - set(now) - typing:
            line += f"  | lazy: {', '.join(sorted(lazy - set(now) - typing))}"
        if third:
            line += f"  | third-party: {', '.join(third)}"
        print(line)


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    repo = Path(args[0] if args else Path(__file__).resolve().parent.parent).resolve()
    root = repo / "python" / PACKAGE
    files = sorted(root.rglob("*.py"))
    modules = {module_name(root, p) for p in files}
    edges = [e for p in files for e in edges_of(root, p, modules)]
    if "--graph" in argv:
        print_graph(edges, modules)
    wrong = violations(edges, repo) + heavy_at_import(edges, repo) + cycles(edges, repo)
    wrong += stage_violations(edges, modules, repo)
    wrong += spark_reached(edges, repo)
    for w in wrong:
        print(w)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
