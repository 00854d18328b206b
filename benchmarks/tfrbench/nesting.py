"""The nested reads: ``benchmarks/nested.py`` (a nested DataFrame against the same features as
flat columns) in a child process."""

from __future__ import annotations

from pathlib import Path

from .child import run, script


def nested_in_child(rows: int, repeat: int, out: Path) -> dict[str, tuple[float, float]]:
    """Seconds of nested and of flat by measurement (``write``, ``full read``, ``image.height``,
    ``objects.label``, ``count()``), from ``benchmarks/nested.py`` run on ``rows`` rows."""
    result = run(script("nested", "--rows", str(rows), "--repeat", str(repeat), "--out", str(out)))
    return {what: (nested, flat) for what, (nested, flat) in result.items()}
