"""The page, ``docs/benchmarks.md``, rendered from a run's results (``benchmarks/results.json``)
by what ``benchmarks/page.toml`` declares (goals, results lines, throughput lines) into the text
of ``benchmarks/page.md``. Nothing here measures: a page can be rendered again from its data."""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

from .data import (
    DEFAULT_ROWS,
    IMAGE_BYTES,
    INFER_FILES,
    NARROW_DDL,
    PARTITIONS,
    SINGLE_COPIES,
    WIDE1000_SELECTED,
    WIDE_COLUMN,
)
from .peers import BATCH as TFX_BATCH
from .peers import RAY_CPUS, RAY_RECORDS
from .profiling import WORKLOADS
from .sessions import LINKEDIN_PACKAGE
from .splitting import EQUAL_SPLITS, SPLIT_ROUNDS, SPLIT_WARMUP
from .tfdata import BATCH, THREADS

BENCHMARKS = Path(__file__).resolve().parents[1]
DECLARED = BENCHMARKS / "page.toml"
TEXT = BENCHMARKS / "page.md"
RESULTS = BENCHMARKS / "results.json"


@dataclass
class Row:
    """One line of the results table: our time against another time of the same work."""

    name: str
    ours: float
    other_label: str
    other: float
    ours_runs: list[float] = field(default_factory=list)
    other_runs: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.other / self.ours


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


class Page:
    """The declarations of ``page.toml`` applied to one run's results."""

    def __init__(self, results: dict[str, Any], declared: Path = DECLARED) -> None:
        self.results = results
        self.declared = tomllib.loads(declared.read_text())
        self.settings: dict[str, Any] = results["settings"]

    def runs(self, key: str, scale_by: list[str] | None = None) -> list[float] | None:
        runs = self.results["runs"].get(key)
        if runs is None or not scale_by:
            return runs
        factor = self.settings[scale_by[0]] / self.settings[scale_by[1]]
        return [t * factor for t in runs]

    def median(self, key: str, scale_by: list[str] | None = None) -> float | None:
        runs = self.runs(key, scale_by)
        return None if runs is None else statistics.median(runs)

    def figure(self, line: dict[str, Any]) -> float | None:
        """``scale * median(of) / median(over)``: their time over ours."""
        of, over = self.median(line["of"], line.get("scale_by")), self.median(line["over"])
        return None if of is None or over is None else line.get("scale", 1) * of / over

    def rows(self) -> list[Row]:
        rows = []
        for line in self.declared["row"]:
            ours, theirs = self.runs(line["ours"]), self.runs(line["theirs"], line.get("scale_by"))
            if ours is not None and theirs is not None:
                medians = statistics.median(ours), statistics.median(theirs)
                rows.append(Row(line["name"], medians[0], line["label"], medians[1], ours, theirs))
        return rows

    def goal_values(self) -> dict[str, float]:
        """Each goal's figure, by goal: what a later run shows as the previous one."""
        values = {g["what"]: self.figure(g) for g in self.declared["goal"] if "of" in g}
        return {what: value for what, value in values.items() if value is not None}

    def goals(self) -> list[Goal]:
        kept_within = self.declared["kept_within"]
        previous: dict[str, float] = self.results.get("previous", {})
        goals = []
        for line in self.declared["goal"]:
            what = line["what"]
            if "summary" in line:
                goals.append(self.summary(what, line["summary"]))
                continue
            fmt = line.get("format", "{:.2f}x")
            if "at_least" in line:
                share = fmt.endswith("%}")
                target = ">= " + (
                    fmt.format(line["at_least"]) if share else f"{line['at_least']:g}x"
                )
            elif line.get("kept"):
                target = f"previous - {kept_within:.0%} or more"
            else:
                target = "no threshold"
            value = self.figure(line)
            if value is None:
                why = self.results.get("missing", {}).get(line.get("needs", ""), "")
                why = why or "the run that made the results file did not measure it"
                goals.append(Goal(what, target, f"not measured ({why})", None))
                continue
            measured = fmt.format(value)
            if line.get("show_seconds"):
                measured += f" ({self.median(line['over']):.3f} s)"
            if line.get("show_scaling"):
                measured += f" (the machine's 2-core scaling: {self.settings['scaling']:.2f}x)"
            before = previous.get(what)
            earlier = "-" if before is None else fmt.format(before)
            met: bool | None = None
            if "at_least" in line:
                met = value >= line["at_least"]
            elif line.get("kept"):
                if before is None:
                    earlier = "not on the previous page"
                else:
                    met = value >= before * (1 - kept_within)
            goals.append(Goal(what, target, measured, met, earlier))
        return goals

    def summary(self, what: str, labels: list[str]) -> Goal:
        others = [r for r in self.rows() if r.other_label in labels]
        faster = sum(r.ratio > 1 for r in others)
        each = "; ".join(f"{r.name} vs {r.other_label} {r.ratio:.2f}x" for r in others)
        measured = f"faster in {faster} of {len(others)}: {each}"
        return Goal(what, "no threshold", measured, None)

    def rates(self) -> dict[str, str]:
        """The throughput table: what, and its time and rate."""
        rates: dict[str, str] = {}
        floor = self.median("floor / ours")
        sizes = self.results["sizes"]
        for line in self.declared["rate"]:
            what = line["what"].format(**self.settings)
            if "fact" in line:
                rates[what] = self.results["facts"][line["fact"]]
            elif "nested" in line:
                label = line["nested"]
                nested = self.median(f"nested {label} / nested")
                flat = self.median(f"nested {label} / flat")
                if nested is not None and flat is not None:
                    rates[what] = f"{flat / nested:.2f}x (nested {nested:.3f} s, flat {flat:.3f} s)"
            elif "of" in line:
                value = self.figure(line)
                if value is not None:
                    rates[what] = f"{value:.2f}x"
            elif (seconds := self.median(line["time"])) is None:
                continue
            elif "floor_share" in line:
                assert floor is not None
                cores = line["floor_share"]
                per = self.settings["rows"] / seconds / cores
                of_floor = self.settings["rows"] / floor
                per_core = " per core" if cores > 1 else ""
                floor_rate = f"the floor {records(of_floor)}"
                rates[what] = f"{per / of_floor:.0%} ({records(per)}{per_core}, {floor_rate})"
            else:
                text = f"{seconds:.{line.get('digits', 2)}f} s"
                parts = []
                if "records" in line:
                    parts.append(records(self.settings[line["records"]] / seconds))
                if "bytes" in line:
                    nbytes = sizes.get(line["bytes"], self.settings.get(line["bytes"]))
                    parts.append(f"{nbytes / seconds / 1e6:.0f} MB/s")
                rates[what] = text + (": " + ", ".join(parts) if parts else "")
        return rates

    def markdown(self, chart: str = "benchmarks.png") -> str:
        r, s = self.results, self.settings
        splits = int(r["facts"].get("splits of the single file, default splits", "0"))
        idle = "one core idle in the last" if splits % 2 else "none with an idle core"
        small = any(s[k] < n for k, n in DEFAULT_ROWS.items())
        values = {
            **s,
            "date": r["facts"]["date"],
            "command": r["command"],
            "goals": goals_table(self.goals()),
            "previous_page": r["facts"].get("previous page", "none"),
            "kept": self.declared["kept_within"],
            "results": table(self.rows()),
            "chart": chart,
            "rates": "\n".join(f"| {k} | {v} |" for k, v in self.rates().items()),
            "profile": profile_section(r.get("profile")),
            "sizes": "\n".join(f"| `{k}` | {v / 1e6:,.1f} MB |" for k, v in r["sizes"].items()),
            "facts": "\n".join(f"| {k} | {v} |" for k, v in r["facts"].items()),
            "notes": "\n".join(f"- {n}" for n in r["notes"]) or "- none",
            "small": (
                " This run used smaller data sets than the defaults: fixed costs (planning a"
                " query of 1,000 columns, starting tasks and sessions) weigh more, so its figures"
                " say little about goals set for the default sizes."
                if small
                else ""
            ),
            "split_note": (
                f"With the default 128 MB split size the file makes {splits} splits:"
                f" {(splits + 1) // 2} waves on 2 cores, {idle}. The second line sets"
                " `spark.sql.files.maxPartitionBytes` to an"
                f" eighth of the file, so each core reads {EQUAL_SPLITS // 2} equal splits."
            ),
            "peer_note": (
                ""
                if s["peers"]
                else "Not measured in this run: no `--peers-python` (`ci/bench --peers`)."
            ),
            "tfdata": (
                f"Median of {s['repeat']} run(s) after an untimed one, all in one child process"
                if s["tfdata"]
                else "Not measured in this run (`--skip-tfdata`)"
            ),
            "selected": ", ".join(f"`{c}`" for c in WIDE1000_SELECTED[:3]) + ", ...",
            "image_gb": s["image_rows"] * IMAGE_BYTES / 1e9,
            "partitions": PARTITIONS,
            "split_warmup": SPLIT_WARMUP,
            "split_rounds": SPLIT_ROUNDS,
            "single_copies": SINGLE_COPIES,
            "tfx_label": "tfx-bsl decoder, 1 thread",
            "tfx_batch": TFX_BATCH,
            "ray_label": "Ray Data, 2 CPUs (scaled)",
            "ray_cpus": RAY_CPUS,
            "ray_subset": RAY_RECORDS,
            "topandas_files": 2,
            "threads": THREADS,
            "batch": BATCH,
            "wide_column": WIDE_COLUMN,
            "infer_files": INFER_FILES,
            "image_bytes": IMAGE_BYTES,
            "narrow_ddl": NARROW_DDL,
            "linkedin_package": LINKEDIN_PACKAGE,
        }
        return TEXT.read_text().format(**values)


def save(results: dict[str, Any], path: Path) -> None:
    """``results`` as JSON, each list of numbers on one line: two runs diff line by line."""
    text = json.dumps(results, indent=1)
    text = re.sub(
        r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text
    )
    path.write_text(text + "\n")


def records(per_second: float) -> str:
    """Records per second, in millions unless that rounds to nothing (small test runs)."""
    if per_second >= 1e5:
        return f"{per_second / 1e6:.2f} M records/s"
    return f"{per_second / 1e3:.1f} k records/s"


def table(rows: list[Row]) -> str:
    """The results as Markdown: medians, with the fastest and slowest run in brackets."""

    def cell(median: float, runs: list[float]) -> str:
        spread = f" ({min(runs):.2f}-{max(runs):.2f})" if len(runs) > 1 else ""
        return f"{median:.2f}{spread}"

    lines = [
        "| measurement | ours (s) | compared with | theirs (s) | ratio theirs / ours |",
        "|---|---:|---|---:|---:|",
    ]
    for r in rows:
        ours, theirs = cell(r.ours, r.ours_runs), cell(r.other, r.other_runs)
        lines.append(f"| {r.name} | {ours} | {r.other_label} | {theirs} | **{r.ratio:.2f}x** |")
    return "\n".join(lines)


def goals_table(goals: list[Goal]) -> str:
    lines = ["| goal | target | measured | previous page | status |", "|---|---|---|---|---|"]
    lines += [
        f"| {g.what} | {g.target} | {g.measured} | {g.previous} | {g.status} |" for g in goals
    ]
    return "\n".join(lines)


def profile_section(profile: dict[str, Any] | None) -> str:
    if profile is None:
        return (
            "## Where the time goes\n\nNot profiled: async-profiler has no build for this "
            "machine, or Maven Central could not be reached."
        )
    areas = "\n".join(f"| {a} | {share:.0%} |" for a, share in profile["areas"])
    top = "\n".join(f"| `{m}` | {share:.1%} |" for m, share in profile["self_top"])
    choices = ", ".join(f"`{w}`" for w in WORKLOADS)
    return f"""## Where the time goes

async-profiler sampled {profile["workload"]} in one thread (`local[1]`, after an untimed run):
{profile["samples"]:,} samples of the task thread, one every half millisecond of CPU time,
native and kernel frames included. The parts count each sample by the nearest Java method on its
stack (the kernel copying a file's bytes is its stream's, the CRC32C intrinsic is
`CRC32C.update`'s); the frames by the one on top, `[k]` marking the kernel's. (`--profile`
chooses what is sampled: {choices}.)

| part | samples |
|---|---:|
{areas}

| frame on top | samples |
|---|---:|
{top}"""
