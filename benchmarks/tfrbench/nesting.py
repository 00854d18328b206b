"""The nested reads: ``benchmarks/nested.py`` (a nested DataFrame against the same features as
flat columns) in a child process, its table read back."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from .checks import CheckFailed

NESTED = Path(__file__).resolve().parents[1] / "nested.py"


def nested_in_child(rows: int, repeat: int, out: Path) -> dict[str, tuple[float, float]]:
    """Seconds of nested and of flat by measurement (``write``, ``full read``, ``image.height``,
    ``objects.label``, ``count()``), from ``benchmarks/nested.py`` run on ``rows`` rows."""
    cmd = [sys.executable, str(NESTED), "--rows", str(rows), "--repeat", str(repeat)]
    cmd += ["--out", str(out)]
    print(f"  {shlex.join(cmd)}", flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise CheckFailed(f"benchmarks/nested.py failed (exit {done.returncode}):\n{done.stderr}")
    results: dict[str, tuple[float, float]] = {}
    for line in done.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 4 and cells[1].replace(".", "").isdigit():
            results[cells[0]] = (float(cells[1]), float(cells[2]))
    if "full read" not in results:
        raise CheckFailed(f"benchmarks/nested.py printed no table:\n{done.stdout}")
    return results
