"""The goals of issue 25: each target, the figure measured against it, the previous page's
figure, and whether it was met."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .measure import LAYOUTS, two_cores
from .previous import Previous
from .timing import Bench, Row

# The label of the tfx-bsl line of the results.
TFX_LABEL = "tfx-bsl decoder, 1 thread"

# "Nothing else gets slower": a figure may be this much below the previous page's (this VM's
# noise between runs) and still count as kept.
KEPT = 0.10
# The nested reads of benchmarks/nested.py on the page: nested time over flat time.
NESTED_READS = ("full read", "image.height", "objects.label")


@dataclass
class Goal:
    """One line of the goals table; ``met`` is None where there is no threshold or no figure."""

    what: str
    target: str
    measured: str
    met: bool | None
    previous: str = "-"

    @property
    def status(self) -> str:
        return {True: "met", False: "**not met**", None: "-"}[self.met]


def times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def at_least(what: str, value: float, goal: float, note: str = "", before: str = "-") -> Goal:
    """A speed-up (``value`` times) that should be ``goal`` times or more."""
    return Goal(what, f">= {goal:g}x", f"{value:.2f}x{note}", value >= goal, before)


def share(what: str, value: float, goal: float, before: float | None) -> Goal:
    """A share (of the floor) that should be ``goal`` or more."""
    earlier = "-" if before is None else f"{before:.0f}%"
    return Goal(what, f">= {goal:.0%}", f"{value:.0%}", value >= goal, earlier)


def kept(what: str, value: float, before: float | None, unit: str = "x", more: str = "") -> Goal:
    """A figure (higher is better) that should stay where the previous page has it."""
    target = f"previous - {KEPT:.0%} or more"
    measured = f"{value:.2f}{unit}{more}"
    if before is None:
        return Goal(what, target, measured, None, "not on the previous page")
    return Goal(what, target, measured, value >= before * (1 - KEPT), f"{before:.2f}{unit}")


def not_measured(what: str, target: str, why: str) -> Goal:
    return Goal(what, target, f"not measured ({why})", None)


def goals(
    bench: Bench,
    rows: Sequence[Row],
    scaling: float,
    previous: Previous,
    missing: dict[str, str],
) -> list[Goal]:
    """The goals from the runs in ``bench``; ``missing`` says why a peer (``tfx-bsl``, ``ray``,
    ``tf.data``, ``nested``, ``linkedin``) was not measured."""

    def median(what: str, fmt: str) -> float:
        return bench.median(what, fmt)

    def ratio(what: str, other: str) -> float:
        """Their time over ours: how many times faster we are."""
        return median(what, other) / median(what, "ours")

    floor = median("floor", "ours")
    one, two = median("full read, local[1]", "ours"), median("full read", "ours")
    narrow = "full read, narrow"
    listed = [
        at_least(
            "narrow: full read vs Parquet, local[1]",
            ratio("full read, local[1]", "parquet"),
            2.5,
            before=times(previous.ratio(f"{narrow}, local[1]", "parquet")),
        ),
        at_least(
            "narrow: full read vs Parquet, local[2]",
            ratio("full read", "parquet"),
            2.5,
            before=times(previous.ratio(narrow, "parquet")),
        ),
        share(
            "narrow: full read per core vs the floor (countRecords, 1 thread), local[1]",
            floor / one,
            0.45,
            previous.number(f"{narrow}, local[1], per core / floor"),
        ),
        share(
            "narrow: full read per core vs the floor, local[2]",
            floor / (2 * two),
            0.45,
            previous.number(f"{narrow}, per core / floor"),
        ),
    ]
    what = "narrow: per core, ours local[1] end to end vs tfx-bsl's decoder on 1 thread"
    if ("decode", "tfx-bsl") in bench.runs:
        tfx = median("decode", "tfx-bsl") / one
        before = times(previous.ratio(f"{narrow}, local[1]", TFX_LABEL))
        listed.append(at_least(what, tfx, 5, before=before))
    else:
        listed.append(not_measured(what, ">= 5x", missing.get("tfx-bsl", "no tfx-bsl")))
    wide_1000 = "full read, wide-1000"
    listed += [
        at_least(
            "wide-1000: read 10 of 1000 columns vs our full read",
            median("wide-1000 full read", "ours") / median("wide-1000 10 columns", "ours"),
            6,
            before=times(previous.ratio("read 10 of 1000 columns, wide-1000", "ours, all 1000")),
        ),
        at_least(
            "wide-1000: full read vs Parquet",
            ratio("wide-1000 full read", "parquet"),
            1.5,
            before=times(previous.ratio(wide_1000, "parquet")),
        ),
        at_least(
            "image-sized: full read vs Parquet",
            ratio("image full read", "parquet"),
            8,
            before=times(previous.ratio("full read, image-sized", "parquet")),
        ),
    ]
    listed += kept_figures(bench, scaling, previous, missing)
    listed += references(bench, rows, missing)
    return listed


def kept_figures(
    bench: Bench, scaling: float, previous: Previous, missing: dict[str, str]
) -> list[Goal]:
    """ "Nothing else gets slower": ratios against Parquet or linkedin as they are; figures
    without a competitor as their speed over the floor's in the same run, so that a slower or
    faster day of the machine cancels out."""
    floor = bench.median("floor", "ours")
    floor_before = previous.number("countRecords, 1 thread (the floor)")

    def over_floor(label: str, seconds: float, what_before: str) -> Goal:
        before = previous.number(what_before)
        relative = floor / seconds
        earlier = None if before is None or floor_before is None else floor_before / before
        return kept(label, relative, earlier, "x", f" ({seconds:.3f} s)")

    listed = [
        kept(
            f"kept: write, {name} vs Parquet",
            bench.median(what, "parquet") / bench.median(what, "ours"),
            previous.ratio(f"write, {name}", "parquet"),
        )
        for name, what in (
            ("narrow", "write"),
            ("wide-1000", "wide-1000 write"),
            ("image-sized", "image write"),
        )
    ]
    listed += [
        over_floor(
            "kept: count(), narrow, local[2], speed over the floor's",
            bench.median("count", "ours"),
            "count(), local[2]",
        ),
        over_floor(
            "kept: read 1 of 100 columns, wide, speed over the floor's",
            bench.median("wide", "ours"),
            "read 1 of 100 columns, wide, local[2]",
        ),
        over_floor(
            "kept: schema inference, 128 files, speed over the floor's",
            bench.median("inference", "ours"),
            "schema inference, 128 files",
        ),
        over_floor(
            "kept: schema inference, wide-1000, speed over the floor's",
            bench.median("wide-1000 inference", "ours"),
            "schema inference, wide-1000 (1000 columns)",
        ),
        *(
            kept(
                f"kept: one big file, {layout}: 2 cores vs 1",
                two_cores(bench, layout).ratio,
                previous.ratio(f"full read, 1 file, {layout}, local[2]", "local[1]"),
                more=f" (the machine's 2-core scaling: {scaling:.2f}x)",
            )
            for layout in LAYOUTS
        ),
    ]
    for label in NESTED_READS:
        what = f"kept: nested read ({label}), flat time over nested time"
        key = (f"nested {label}", "flat")
        if key not in bench.runs:
            listed.append(not_measured(what, "previous - 10% or more", missing.get("nested", "")))
            continue
        value = bench.median(*key) / bench.median(f"nested {label}", "nested")
        listed.append(kept(what, value, previous.number(f"nested, {label}: flat / nested")))
    return listed


def references(bench: Bench, rows: Sequence[Row], missing: dict[str, str]) -> list[Goal]:
    """Lines without a threshold: toPandas(), tf.data, Ray Data, and every ratio against
    linkedin and Parquet."""
    listed = [
        Goal(
            "toPandas() of narrow files, Arrow on: ours vs Parquet",
            "no threshold",
            f"{bench.median('toPandas', 'parquet') / bench.median('toPandas', 'ours'):.2f}x",
            None,
        )
    ]
    what = "narrow: full read, local[2], vs tf.data + parse_example, 2 threads"
    if ("full read", "tf.data") in bench.runs:
        value = bench.median("full read", "tf.data") / bench.median("full read", "ours")
        listed.append(Goal(what, "no threshold", f"{value:.2f}x", None))
    else:
        listed.append(not_measured(what, "no threshold", missing.get("tf.data", "")))
    what = "narrow: full read, local[2], vs Ray Data read_tfrecords, 2 CPUs, per record"
    ray = [r for r in rows if r.other_label.startswith("Ray Data")]
    if ray:
        listed.append(Goal(what, "no threshold", f"{ray[0].ratio:,.0f}x", None))
    else:
        listed.append(not_measured(what, "no threshold", missing.get("ray", "")))
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
