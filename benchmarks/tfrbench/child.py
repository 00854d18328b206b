"""Child processes: a measurement that needs a fresh process (a session with other cores or
another jar, TensorFlow, a peer's Python) prints one result line, ``MARK`` and JSON, and the
parent reads it back with ``run``."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

MARK = "TFRBENCH-RESULT "
# The exit status of a child whose package (a peer, TensorFlow) is not installed.
MISSING = 3
BENCHMARKS = Path(__file__).resolve().parents[1]


class Missing(Exception):
    """The child could not measure: what it needs is not installed (the message says what)."""


def script(name: str, *args: str) -> list[str]:
    """The command that runs ``benchmarks/NAME.py`` with ``args`` in this Python."""
    return [sys.executable, str(BENCHMARKS / f"{name}.py"), *args]


def emit(result: Any) -> None:
    """The child's side: prints ``result`` (a dataclass or JSON-able value) after ``MARK``."""
    print(MARK + json.dumps(asdict(result) if is_dataclass(result) else result), flush=True)


def run(cmd: list[str], env: dict[str, str] | None = None) -> Any:
    """Runs ``cmd`` and returns the JSON it printed after ``MARK``; raises ``Missing`` for a
    child that exits with ``MISSING``, and ``CheckFailed`` (with its output) for any other
    failure or no result."""
    from .checks import CheckFailed

    print(f"  {shlex.join(cmd)}", flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode == MISSING:
        raise Missing(done.stdout.strip() or f"{cmd[0]} exited with {MISSING}")
    lines = [x for x in done.stdout.splitlines() if x.startswith(MARK)]
    if done.returncode != 0 or not lines:
        raise CheckFailed(
            f"{shlex.join(cmd[1:3])} failed (exit {done.returncode}):\n"
            f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
    return json.loads(lines[-1][len(MARK) :])
