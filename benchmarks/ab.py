"""Two builds of our jar, measured in one run on the same files: is a change faster or slower?

    .cache/venv/spark-3.5/bin/python benchmarks/ab.py --before OLD.jar --after NEW.jar

The narrow and wide data sets of ``run.py`` are written once (by the ``--before`` jar). Then each
round starts one fresh ``local[2]`` session per jar, in alternating order, in a process of its
own; each session warms up once and times a narrow write (of ``--rows`` generated rows, cached
first), a full narrow read (to the ``noop`` sink), ``count()`` and one of the 100 wide columns,
``--repeat`` times each. Every read's row count and hash must
be the same for both jars. Prints the median of all runs of each jar, and after/before.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tfrbench.checks import fingerprint
from tfrbench.data import (
    NARROW_DDL,
    PARTITIONS,
    ROOT,
    WIDE_COLUMN,
    WIDE_DDL,
    narrow,
    no_whole_stage_codegen,
    wide,
)
from tfrbench.measure import writer
from tfrbench.sessions import OURS, load, noop, session
from tfrbench.timing import timed

MARK = "AB-RESULT "
MEASUREMENTS = (
    "write, narrow",
    "full read, narrow",
    "count(), narrow",
    f"1 of 100 columns ({WIDE_COLUMN})",
)


def child(args: argparse.Namespace) -> None:
    """One session with one jar: every measurement, ``--repeat`` times after a warm-up."""
    spark = session(
        ours=args.jar, cores=2, memory=args.driver_memory, linkedin=None, linkedin_jar=None
    )
    data = Path(args.data)
    narrow_df = load(spark, OURS, NARROW_DDL, data / "narrow")
    wide_df = load(spark, OURS, WIDE_DDL, data / "wide").select(WIDE_COLUMN)
    # Generated once and cached, so that the write measures the writer, as run.py's does.
    generated = narrow(spark, args.rows, PARTITIONS).cache()
    generated.count()
    actions: dict[str, Callable[[], object]] = {
        MEASUREMENTS[0]: writer(generated, OURS, data / f"written-{os.getpid()}"),
        MEASUREMENTS[1]: lambda: noop(narrow_df),
        MEASUREMENTS[2]: lambda: narrow_df.count(),
        MEASUREMENTS[3]: lambda: noop(wide_df),
    }
    result: dict[str, Any] = {
        "fingerprints": [fingerprint(narrow_df), fingerprint(wide_df)],
    }
    for name, action in actions.items():
        action()  # warm-up: the JIT compiles the decoder on the first pass
        result[name] = timed(spark, args.repeat, action)[0]
    print(MARK + json.dumps(result), flush=True)
    spark.stop()
    shutil.rmtree(data / f"written-{os.getpid()}", ignore_errors=True)


def generate(args: argparse.Namespace) -> None:
    data = Path(args.data)
    if (data / "_DONE").exists():
        return
    spark = session(
        ours=args.before, cores=2, memory=args.driver_memory, linkedin=None, linkedin_jar=None
    )
    with no_whole_stage_codegen(spark):
        writer(narrow(spark, args.rows, PARTITIONS), OURS, data / "narrow")()
        writer(wide(spark, args.rows), OURS, data / "wide")()
    spark.stop()
    (data / "_DONE").write_text("")


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/ab.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--before", help="the jar before the change")
    parser.add_argument("--after", help="the jar after the change")
    parser.add_argument("--rows", type=int, default=2_000_000, help="rows of each data set")
    parser.add_argument("--rounds", type=int, default=3, help="sessions per jar (3)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per session (3)")
    parser.add_argument("--driver-memory", default="6g", help="spark.driver.memory (6g)")
    parser.add_argument("--data", default=str(ROOT / ".cache" / "bench-ab"), help="data directory")
    parser.add_argument("--jar", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if args.jar:
        child(args)
        return 0
    if not (args.before and args.after):
        parser.error("--before and --after are required")
    generate(args)
    runs: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    fingerprints: dict[str, Any] = {}
    started = time.perf_counter()
    for round_ in range(args.rounds):
        order = ("before", "after") if round_ % 2 == 0 else ("after", "before")
        for which in order:
            jar = getattr(args, which)
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--jar",
                    jar,
                    "--data",
                    args.data,
                    "--repeat",
                    str(args.repeat),
                    "--rows",
                    str(args.rows),
                    "--driver-memory",
                    args.driver_memory,
                ],
                capture_output=True,
                text=True,
            )
            lines = [x for x in done.stdout.splitlines() if x.startswith(MARK)]
            if done.returncode != 0 or not lines:
                raise SystemExit(f"the {which} session failed:\n{done.stderr[-4000:]}")
            result = json.loads(lines[0][len(MARK) :])
            fingerprints.setdefault(which, result.pop("fingerprints"))
            for name, times in result.items():
                runs[which].setdefault(name, []).extend(times)
            print(
                f"round {round_ + 1} {which}: "
                + ", ".join(f"{n} {statistics.median(t):.3f}s" for n, t in result.items()),
                flush=True,
            )
    if fingerprints["before"] != fingerprints["after"]:
        raise SystemExit(f"the jars read different rows: {fingerprints}")
    print(
        f"\nmedian of {args.rounds} sessions x {args.repeat} runs per jar, "
        f"{args.rows:,} rows, {time.perf_counter() - started:.0f} s"
    )
    print("| measurement | before (s) | after (s) | after/before |\n|---|---:|---:|---:|")
    for name in MEASUREMENTS:
        before = statistics.median(runs["before"][name])
        after = statistics.median(runs["after"][name])
        print(f"| {name} | {before:.3f} | {after:.3f} | {after / before:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
