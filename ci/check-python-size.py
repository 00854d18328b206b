"""Checks the size of the Python package's modules and functions (issue 57).

- A module has at most MAX_MODULE lines.
- A function has at most MAX_FUNCTION lines of code (from its first statement after the
  docstring to its end), unless a comment right above its ``def`` (above its decorators) that
  starts with ``# long:`` says why it is one piece.
- DEBT lists the modules and functions that were over when the check came, each with the size
  it may not grow past: a debt to pay, not a permission. One that shrinks below the limit must
  leave the list (the check says so), so that the list only gets shorter.

Usage: python3 ci/check-python-size.py [REPO]. Exit 1 naming each violation with its file and
line.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = "spark_tfrecord"
MAX_MODULE = 500
MAX_FUNCTION = 80
#: What was over the limits when the check came (path in the package, or path:function), and
#: the size it may not grow past.
DEBT = {
    "_format/columns/feature_paths.py:leaves": 100,
    "_format/columns/layout.py:_plain_reader": 116,
    "_format/columns/schema.py:columns": 99,
}


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = node.body
    first = body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    if docstring and isinstance(first.value.value, str) and len(body) > 1:
        first = body[1]
    end = node.end_lineno or node.lineno
    return end - first.lineno + 1


def _says_why(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    top = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return top >= 2 and lines[top - 2].strip().startswith("# long:")


def sizes(root: Path) -> list[tuple[str, str, int, int, bool]]:
    """(name in DEBT's form, file:line, size, limit, a comment says why) of every module and
    function over its limit."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text()
        lines = text.splitlines()
        if len(lines) > MAX_MODULE:
            found.append((rel, f"{rel}:1", len(lines), MAX_MODULE, False))
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = _code_lines(node)
                if n > MAX_FUNCTION:
                    where = f"{rel}:{node.lineno}"
                    why = _says_why(lines, node)
                    found.append((f"{rel}:{node.name}", where, n, MAX_FUNCTION, why))
    return found


def main(argv: list[str]) -> int:
    repo = Path(argv[0] if argv else Path(__file__).resolve().parent.parent).resolve()
    root = repo / "python" / PACKAGE
    wrong = []
    over = set()
    for name, where, n, limit, why in sizes(root):
        over.add(name)
        what = "lines" if limit == MAX_MODULE else "lines of code"
        if why:
            continue
        if name in DEBT:
            if n > DEBT[name]:
                debt = DEBT[name]
                wrong.append(f"python/{PACKAGE}/{where}: {n} {what}, more than its debt of {debt}")
            continue
        wrong.append(f"python/{PACKAGE}/{where}: {n} {what}, over {limit}")
    for name in sorted(set(DEBT) - over):
        wrong.append(f"{name}: within the limit now: take it out of DEBT (ci/check-python-size.py)")
    for w in wrong:
        print(w)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
