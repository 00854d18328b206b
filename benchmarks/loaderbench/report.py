"""The tables of one run: seconds per epoch (medians), records/s per worker, and the ratios
the issue sets goals for. Nothing here measures."""

from __future__ import annotations

import statistics
from typing import Any

from .data import DataSet
from .measure import (
    IN_ORDER,
    ONE_WORKER,
    OURS_BESIDE,
    PACKAGE,
    PETASTORM,
    SHUFFLED,
    TWO_WORKERS,
    WORKERS,
)

#: The issue's goal: ours at least this many times the tfrecord package's records/s.
GOAL = 3.0


def lines(sets: dict[str, DataSet], child: dict[str, Any], peers: dict[str, Any]) -> list[str]:
    out = []
    for name, data in sets.items():
        runs = dict(child["sets"][name]["runs"])
        others = dict(child["sets"][name]["others"])
        peer = peers.get(name, {})
        runs.update(peer.get("runs", {}))
        others.update(peer.get("others", {}))
        median = {k: statistics.median(v) for k, v in runs.items()}
        rate = {k: data.records / median[k] / WORKERS[k] for k in median}
        out += [
            "",
            f"{name}: {data.records:,} records, batches of 256, median of "
            f"{len(runs[IN_ORDER])} epochs after a warm-up",
            "| loader | workers | s / epoch | records/s per worker | ours in order / this "
            "| others' cores |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for k in median:
            reference = OURS_BESIDE if k in (PETASTORM, OURS_BESIDE) else IN_ORDER
            out.append(
                f"| {k} | {WORKERS[k]} | {median[k]:.2f} | {rate[k]:,.0f} "
                f"| {rate[reference] / rate[k]:.2f}x | {others[k]:.1f} |"
            )
        for ours_name in (IN_ORDER, SHUFFLED):
            ratio = rate[ours_name] / rate[PACKAGE]
            met = "met" if ratio >= GOAL else "NOT met"
            out.append(
                f"- {ours_name} / the tfrecord package: {ratio:.2f}x (goal >= {GOAL:g}x: {met})"
            )
        speedup = median[ONE_WORKER] / median[TWO_WORKERS]
        out.append(f"- 2 workers against 1 (shuffled): {speedup:.2f}x the records/s")
        if PETASTORM in median:
            ratio = rate[OURS_BESIDE] / rate[PETASTORM]
            out.append(f"- ours / Petastorm, both in the Spark driver's process: {ratio:.2f}x")
        elif "error" in peer:
            out.append(f"- Petastorm failed: {peer['error']}")
    out.append(
        "\nothers' cores: the CPU other processes used during the epochs (with workers, the "
        "workers' own CPU too)"
    )
    return out
