"""The goals: each target, the figure measured against it, and whether it was met."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .measure import LAYOUTS, two_cores
from .timing import Bench, Row


@dataclass
class Goal:
    """One line of the goals table; ``met`` is None where there is no threshold or no figure."""

    what: str
    target: str
    measured: str
    met: bool | None

    @property
    def status(self) -> str:
        return {True: "met", False: "**not met**", None: "-"}[self.met]


def at_least(what: str, value: float, goal: float, note: str = "") -> Goal:
    """A speed-up (``value`` times) that should be ``goal`` times or more."""
    return Goal(what, f">= {goal:g}x", f"{value:.2f}x{note}", value >= goal)


def goals(bench: Bench, rows: Sequence[Row], scaling: float, tfdata: bool) -> list[Goal]:
    def ratio(what: str, other: str) -> float:
        """Their time over ours: how many times faster we are."""
        return bench.median(what, other) / bench.median(what, "ours")

    per_core = bench.median("floor", "ours") / (2 * bench.median("full read", "ours"))
    wide_share = bench.median("wide-1000 full read", "ours") / bench.median(
        "wide-1000 10 columns", "ours"
    )
    inference = bench.median("wide-1000 inference", "ours")
    listed = [
        at_least("narrow: full read vs Parquet", ratio("full read", "parquet"), 2),
        Goal(
            "narrow: full read per core vs the floor (countRecords, 1 thread)",
            ">= 35%",
            f"{per_core:.0%}",
            per_core >= 0.35,
        ),
        at_least("wide-1000: read 10 of 1000 columns vs our full read", wide_share, 5),
        at_least("wide-1000: full read vs Parquet", ratio("wide-1000 full read", "parquet"), 1.5),
        Goal("wide-1000: schema inference", "< 0.3 s", f"{inference:.2f} s", inference < 0.3),
        at_least(
            "wide-1000: write vs Parquet",
            ratio("wide-1000 write", "parquet"),
            5,
            f" (both include {bench.median('wide-1000 cache read', 'noop'):.2f} s of reading"
            " the cache)",
        ),
        at_least("image-sized: write vs Parquet", ratio("image write", "parquet"), 2.5),
        at_least("image-sized: full read vs Parquet", ratio("image full read", "parquet"), 8),
        *(
            at_least(
                f"one big file, {layout}: 2 cores vs 1",
                two_cores(bench, layout).ratio,
                1.85,
                f" (the machine's 2-core scaling, the ceiling: {scaling:.2f}x)",
            )
            for layout in LAYOUTS
        ),
    ]
    what = "narrow: full read vs tf.data + parse_example, 2 threads"
    if tfdata:
        listed.append(at_least(what, ratio("full read", "tf.data"), 5))
    else:
        listed.append(Goal(what, ">= 5x", "not measured (--skip-tfdata)", None))
    others = [r for r in rows if r.other_label in ("parquet", "linkedin")]
    faster = sum(r.ratio > 1 for r in others)
    each = "; ".join(f"{r.name} vs {r.other_label} {r.ratio:.2f}x" for r in others)
    listed.append(
        Goal(
            "every figure vs linkedin and Parquet kept",
            "no threshold",
            f"faster in {faster} of {len(others)}: {each}",
            None,
        )
    )
    return listed
