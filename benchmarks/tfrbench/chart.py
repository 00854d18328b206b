"""The chart of the results, ``docs/benchmarks.png``."""

from __future__ import annotations

from pathlib import Path

from .page import Row


def draw(rows: list[Row], facts: dict[str, str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r.name}\nvs {r.other_label}" for r in rows]
    y = list(range(len(rows)))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 0.75 * len(rows) + 1.8))
    h = 0.38
    left.barh([i - h / 2 for i in y], [r.ours for r in rows], h, label="ours", color="#1f77b4")
    left.barh(
        [i + h / 2 for i in y], [r.other for r in rows], h, label="compared with", color="#bbb"
    )
    left.set_yticks(y, labels, fontsize=8)
    left.invert_yaxis()
    seconds = [t for r in rows for t in (r.ours, r.other)]
    if max(seconds) > 30 * min(seconds):  # a linear axis would hide the short times
        left.set_xscale("log")
        left.set_xlabel("seconds (median, log scale), lower is better")
    else:
        left.set_xlabel("seconds (median), lower is better")
    left.legend(loc="lower right", fontsize=8)
    ratios = [r.ratio for r in rows]
    colors = ["#2ca02c" if x >= 1 else "#d62728" for x in ratios]
    right.barh(y, ratios, color=colors)
    right.axvline(1.0, color="black", linewidth=0.8)
    right.set_xlim(0, max(ratios) * 1.12)  # room for the labels
    right.set_yticks(y, [""] * len(rows))
    right.invert_yaxis()
    right.set_xlabel(
        "their time / our time, higher is better\n(splitting: 1 core / 2 cores;"
        " 10 of 1000 columns: our full read / our 10 columns)",
        fontsize=9,
    )
    for i, x in zip(y, ratios):
        right.text(x, i, f" {x:.2f}x", va="center", fontsize=8)
    fig.suptitle(
        f"spark-tfrecord, {facts['narrow rows']} narrow rows, "
        f"{facts['wide-1000 rows']} wide-1000 rows, "
        f"{facts['image-sized rows']} image-sized rows, "
        f"{facts['cores (nproc)']} cores, pyspark {facts['pyspark']}",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
