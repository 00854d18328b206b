"""The tables of one run: seconds per epoch (medians), records/s per worker, and the ratios
the issue sets goals for. Nothing here measures."""

from __future__ import annotations

import statistics
from typing import Any

from .batches import LARGE_BATCH
from .data import DataSet
from .measure import (
    CHECKED_READ,
    CHECKSUMS,
    IN_ORDER,
    IN_ORDER_LARGE,
    MEMORY_COPY,
    ONE_WORKER,
    OURS_BESIDE,
    OURS_BESIDE_2,
    PACKAGE,
    PACKAGE_LARGE,
    PETASTORM,
    PETASTORM_2,
    SHUFFLED,
    TWO_WORKERS,
    WORKERS,
)

#: The goals: ours at least this many times the tfrecord package's records/s (on narrow
#: records, in order, issue 57: 10x at batches of 256, 20x at 4096), ...
GOAL = 3.0
NARROW_GOALS = {
    (256, IN_ORDER, PACKAGE): 10.0,
    (LARGE_BATCH, IN_ORDER_LARGE, PACKAGE_LARGE): 20.0,
}
#: ... at least this many times Petastorm's (issue 45), ...
PETASTORM_GOAL = 1.2
#: ... and on image-sized records at least this share of a memory copy of the same bytes.
COPY_GOAL = 0.7
#: Each row's ratio is to this loader's records/s: ours in the same process and workers.
REFERENCE = {PETASTORM: OURS_BESIDE, OURS_BESIDE: OURS_BESIDE}
REFERENCE.update({PETASTORM_2: OURS_BESIDE_2, OURS_BESIDE_2: OURS_BESIDE_2})
REFERENCE.update({PACKAGE_LARGE: IN_ORDER_LARGE, IN_ORDER_LARGE: IN_ORDER_LARGE})


def met(ratio: float, goal: float) -> str:
    return f"goal >= {goal:g}x: {'met' if ratio >= goal else 'NOT met'}"


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
            "| loader | workers | s / epoch | records/s per worker | ours / this | others' cores |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for k in median:
            reference = REFERENCE.get(k, IN_ORDER)
            out.append(
                f"| {k} | {WORKERS[k]} | {median[k]:.2f} | {rate[k]:,.0f} "
                f"| {rate[reference] / rate[k]:.2f}x | {others[k]:.1f} |"
            )
        for ours_name in (IN_ORDER, SHUFFLED):
            ratio = rate[ours_name] / rate[PACKAGE]
            out.append(f"- {ours_name} / the tfrecord package: {ratio:.2f}x ({met(ratio, GOAL)})")
        for (batch, ours_name, theirs), goal in NARROW_GOALS.items():
            if ours_name in rate and name == "narrow":
                ratio = rate[ours_name] / rate[theirs]
                out.append(
                    f"- batches of {batch}, ours in order / the tfrecord package: {ratio:.2f}x "
                    f"({met(ratio, goal)})"
                )
        speedup = median[ONE_WORKER] / median[TWO_WORKERS]
        out.append(f"- 2 workers against 1 (shuffled): {speedup:.2f}x the records/s")
        if MEMORY_COPY in median:
            share = median[MEMORY_COPY] / median[IN_ORDER]
            out.append(
                f"- ours in order / a memory copy of the same bytes: {share:.0%} "
                f"({met(share, COPY_GOAL)})"
            )
        if CHECKED_READ in median:
            bound = median[MEMORY_COPY] / median[CHECKED_READ]
            share = median[CHECKED_READ] / median[IN_ORDER]
            out.append(
                f"- what bounds it: one pread and the checksums of the same bytes run at "
                f"{bound:.0%} of the memory copy; ours in order at {share:.0%} of that"
            )
        if CHECKSUMS in median:
            bound = median[MEMORY_COPY] / median[CHECKSUMS]
            out.append(
                f"- what bounds any checked read: the checksums alone, over the bytes in "
                f"memory, run at {bound:.0%} of the memory copy"
            )
        for theirs in (PETASTORM, PETASTORM_2):
            if theirs in median:
                ratio = median[theirs] / median[REFERENCE[theirs]]
                out.append(
                    f"- {REFERENCE[theirs]} / {theirs}, in the Spark driver's process: "
                    f"{ratio:.2f}x ({met(ratio, PETASTORM_GOAL)})"
                )
        if peer.get("empty"):
            out.append(f"- Petastorm epochs that ended at once, read again: {peer['empty']}")
        if "error" in peer:
            out.append(f"- Petastorm failed: {peer['error']}")
    out.append(
        "\nothers' cores: the CPU other processes used during the epochs (with workers, the "
        "workers' own CPU too)"
    )
    return out
