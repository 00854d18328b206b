"""Benchmarks of the ``tfrecord`` data source against linkedin spark-tfrecord 0.7.0, Parquet and
TensorFlow's tf.data.

Run with the Python of a Spark 3.5 environment that has the wheel, matplotlib and tensorflow-cpu
installed (``ci/bench`` makes one and passes its arguments here)::

    .cache/venv/spark-3.5/bin/python benchmarks/run.py --repeat 3
    .cache/venv/spark-3.5/bin/python benchmarks/run.py --rows 20000 --wide1000-rows 2000 \\
        --image-rows 200 --repeat 1 --docs /tmp/d

The default sizes (2,000,000 narrow and wide rows, 100,000 wide-1000 rows, 10,000 image-sized
rows of 100 KB) take roughly 25 minutes on 2 cores, most of it Parquet writing 1,000 columns
and the 1- and 2-core child sessions; the small sizes above, 5 to 10 minutes, most of it the
child sessions' start-up.

Everything is timed in one local SparkSession holding both jars; each data source is addressed by
its class name, since both register the short name ``tfrecord``. Only the single-file reads, the
tf.data reference and the profile run in child processes. Every figure is the median of
``--repeat`` runs after one untimed run. Reads go to the ``noop`` sink, so they measure decoding,
not a consumer. Correctness is checked along the way (row counts and an order-independent hash
of every value), and a failed check stops the run before any table is printed.

Writes the run's results (every run's seconds, the sizes, the facts) to ``benchmarks/results.json``
(with ``--docs`` elsewhere: beside the page), and from them ``docs/benchmarks.md`` (by
``benchmarks/page.toml`` and ``benchmarks/page.md``) and ``docs/benchmarks.png``. The goals'
previous figures come from the results file the run replaces. ``--page`` renders the page
again from a results file without measuring anything::

    .cache/venv/spark-3.5/bin/python benchmarks/run.py --page
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .chart import draw
from .checks import (
    check,
    check_inference,
    check_narrow,
    check_wide1000_inference,
    fingerprint,
)
from .data import (
    DEFAULT_ROWS,
    IMAGE_BYTES,
    IMAGE_DDL,
    INFER_FILES,
    NARROW_DDL,
    PARTITIONS,
    ROOT,
    SINGLE_COPIES,
    WIDE1000_DDL,
    WIDE1000_SELECTED,
    WIDE_COLUMN,
    WIDE_DDL,
    concatenate,
    data_files,
    image,
    in_repository,
    narrow,
    no_whole_stage_codegen,
    size_of,
    uncompressed_cache,
    wide,
    wide1000,
)
from .measure import (
    contention,
    facts,
    inferrer,
    load_average,
    machine_scaling,
    measure_floor,
    measure_image,
    measure_narrow,
    measure_topandas,
    measure_wide1000,
    reader,
    warm_up,
    writer,
)
from .nesting import nested_in_child
from .page import RESULTS, Page, goals_table, save, table
from .peers import PEERS, RAY_RECORDS, PeerResult, Totals, peer_in_child, totals_of, write_subset
from .profiling import WORKLOADS, profile_child, profile_in_child
from .sessions import LINKEDIN, LINKEDIN_PACKAGE, OURS, session, short, snapshot_jar
from .splitting import (
    BYTE_ARRAY,
    EQUAL_SPLITS,
    SPLIT_ROUNDS,
    one_core_child,
    one_core_in_child,
    split_child,
    split_in_child,
)
from .tfdata import tfdata_child, tfdata_in_child
from .timing import Bench, Usage


@dataclass
class Report:
    """What a run finds besides its timings: the facts, the sizes of the files, notes."""

    facts: dict[str, str]
    sizes: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="benchmarks/run.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add, hidden, flag = parser.add_argument, argparse.SUPPRESS, "store_true"
    add("--rows", type=int, default=DEFAULT_ROWS["rows"], help="narrow rows (2000000)")
    add("--wide-rows", type=int, help="wide (100-column) rows (as many as --rows)")
    add(
        "--wide1000-rows",
        type=int,
        default=DEFAULT_ROWS["wide1000_rows"],
        help="wide-1000 (1000-column) rows (100000)",
    )
    add(
        "--image-rows",
        type=int,
        default=DEFAULT_ROWS["image_rows"],
        help="image-sized (100 KB) rows (10000)",
    )
    add("--repeat", type=int, default=3, help="runs per measurement (3)")
    add("--out", default=str(ROOT / ".cache" / "bench"), help="data directory (.cache/bench)")
    add("--docs", default=str(ROOT / "docs"), help="where benchmarks.md and .png go (docs/)")
    add("--skip-linkedin", action=flag, help="leave linkedin out")
    add("--skip-tfdata", action=flag, help="leave the tf.data reference out")
    add("--skip-nested", action=flag, help="leave benchmarks/nested.py's reads out")
    add(
        "--profile",
        choices=list(WORKLOADS),
        default="narrow-read",
        help="what async-profiler samples (narrow-read)",
    )
    add("--linkedin-jar", help=f"a local linkedin jar, not {LINKEDIN_PACKAGE} from Maven Central")
    add(
        "--peers-python",
        help="the Python of an environment with tfx-bsl and Ray Data (ci/bench"
        " --peers makes one), measured on our narrow files; without it, left out",
    )
    add(
        "--results",
        help="where the run's results go, and what --page renders"
        " (benchmarks/results.json; with --docs elsewhere, DOCS/results.json)",
    )
    add(
        "--previous",
        default=str(RESULTS),
        help="the results whose figures the goals table shows"
        " as the previous ones (benchmarks/results.json, read before it is replaced)",
    )
    add("--page", action=flag, help="render the page from --results, measuring nothing")
    add("--driver-memory", default="8g", help="spark.driver.memory (8g)")
    add("--ours-jar", help="our jar to measure (the installed wheel's)")
    add("--note", action="append", default=[], help="a line for the notes of benchmarks.md")
    for child in (
        "--split-child",
        "--one-core-child",
        "--profile-child",
        "--tfdata-child",
        "--profiler-jar",
        "--stacks",
    ):
        add(child, help=hidden)
    add("--cores", type=int, default=2, help=hidden)
    add("--split-bytes", type=int, default=0, help=hidden)
    args = parser.parse_args(argv)
    if args.results is None:
        docs = Path(args.docs).resolve() == (ROOT / "docs").resolve()
        args.results = str(RESULTS if docs else Path(args.docs) / "results.json")
    if args.wide_rows is None:
        args.wide_rows = args.rows
    if min(args.rows, args.wide_rows, args.wide1000_rows, args.image_rows, args.repeat) < 1:
        parser.error("--rows, --wide-rows, --wide1000-rows, --image-rows and --repeat must be >= 1")
    return args


def run_wide1000(bench: Bench, report: Report, rows: int) -> None:
    """wide-1000: generated and cached (untimed), then measured, then what was read checked."""
    spark = bench.spark
    bench.log("wide-1000: generating and caching 1000 columns (untimed)")
    with no_whole_stage_codegen(spark), uncompressed_cache(spark):
        data = wide1000(spark, rows).cache()
        expected = fingerprint(data)
        expected_some = fingerprint(data.select(*WIDE1000_SELECTED))
    check(expected[0] == rows, f"wide-1000 data set has {rows} rows")
    bench.log("wide-1000: write, full read, read 10 of 1000 columns, schema inference")
    inferred = measure_wide1000(bench, data)
    data.unpersist()
    for name in ("ours", "parquet"):
        report.sizes[f"wide1000-{name}"] = size_of(bench.out / f"wide1000-{name}")
    for fmt in (OURS, "parquet"):
        path = bench.out / f"wide1000-{short(fmt)}"
        got = fingerprint(bench.read(fmt, WIDE1000_DDL, path))
        check(got == expected, f"{short(fmt)} reading its wide-1000 files: {got[0]} rows")
        got = fingerprint(bench.read(fmt, WIDE1000_DDL, path).select(*WIDE1000_SELECTED))
        check(got == expected_some, f"{short(fmt)} reading 10 of the 1000 columns")
    check_wide1000_inference(inferred, report.notes)


def run_image(bench: Bench, report: Report, rows: int) -> None:
    """image-sized: generated and cached (untimed), then measured, then what was read checked."""
    bench.log(f"image-sized: generating and caching {rows} x {IMAGE_BYTES:,} bytes (untimed)")
    data = image(bench.spark, rows).cache()
    expected = fingerprint(data)
    check(expected[0] == rows, f"image-sized data set has {rows} rows")
    bench.log("image-sized: write, full read")
    measure_image(bench, data)
    data.unpersist()
    for name in ("ours", "parquet"):
        report.sizes[f"image-{name}"] = size_of(bench.out / f"image-{name}")
    for fmt in (OURS, "parquet"):
        got = fingerprint(bench.read(fmt, IMAGE_DDL, bench.out / f"image-{short(fmt)}"))
        check(got == expected, f"{short(fmt)} reading its image-sized files: {got[0]} rows")


def run_tfdata(bench: Bench, report: Report, args: argparse.Namespace) -> None:
    """The tf.data reference on our narrow files, in a child process."""
    bench.log("tf.data: TensorFlow reading our narrow files, 2 threads, in a child process")
    result = tfdata_in_child(bench.out / "narrow-ours", args)
    what = f"tf.data read {result.records} records, the ids summing to {result.id_sum}"
    check((result.records, result.id_sum) == (args.rows, args.rows * (args.rows - 1) // 2), what)
    bench.runs[("full read", "tf.data")] = result.runs
    bench.spent[("full read", "tf.data")] = Usage(**result.spent)
    listed = ", ".join(f"{r:.2f}" for r in result.runs)
    bench.log(f"  full read, tf.data: {result.median:.2f} s ({listed})")
    report.facts["TensorFlow (tf.data reference)"] = result.version


def run_peers(
    bench: Bench, report: Report, args: argparse.Namespace, expected: dict[str, Totals]
) -> dict[str, str]:
    """tfx-bsl and Ray Data in child processes with ``--peers-python``, each checked against
    ``expected`` (what our reader read from the same records). Returns why a peer was left
    out, by name."""
    missing: dict[str, str] = {}
    paths = {"tfx-bsl": bench.out / "narrow-ours", "ray": bench.out / "ray-subset"}
    for name in PEERS:
        if not args.peers_python:
            missing[name] = "no --peers-python"
            continue
        bench.log(f"{name}: on our narrow records, in a child process")
        result = peer_in_child(args.peers_python, name, paths[name], args.repeat)
        if not isinstance(result, PeerResult):
            missing[name] = result
            bench.log(f"  left out: {result}")
            continue
        got = Totals(**result.totals)
        what = f"{name} read {got.records} records, their sums as ours"
        check(got.matches(expected[name]), what, f"({got} against {expected[name]})")
        key = ("decode", "tfx-bsl") if name == "tfx-bsl" else ("read", "ray")
        bench.runs[key] = result.runs
        bench.spent[key] = Usage(**result.spent)
        listed = ", ".join(f"{r:.2f}" for r in result.runs)
        bench.log(f"  {name}: {result.median:.2f} s ({listed})")
        report.facts[f"{name} (peer)"] = f"{result.version}: {result.how}"
    return missing


def run_nested(bench: Bench, args: argparse.Namespace) -> None:
    """benchmarks/nested.py on a quarter of the narrow rows, in a child process."""
    rows = max(1, args.rows // 4)
    bench.log(f"nested: benchmarks/nested.py on {rows:,} rows, in a child process")
    for label, (nested, flat) in nested_in_child(rows, args.repeat, bench.out / "nested").items():
        if label in ("full read", "image.height", "objects.label"):
            bench.runs[(f"nested {label}", "nested")] = [nested]
            bench.runs[(f"nested {label}", "flat")] = [flat]
            bench.log(f"  {label}: nested {nested:.3f} s, flat {flat:.3f} s")


def run_all(args: argparse.Namespace) -> dict[str, Any]:
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    use_linkedin = not args.skip_linkedin
    source = "passed with --ours-jar" if args.ours_jar else "from the installed wheel"
    args.ours_jar = snapshot_jar(out, args.ours_jar)
    spark = session(
        ours=args.ours_jar,
        cores=2,
        memory=args.driver_memory,
        linkedin=LINKEDIN_PACKAGE if use_linkedin else None,
        linkedin_jar=args.linkedin_jar if use_linkedin else None,
    )
    bench = Bench(spark, args.repeat, out)
    report = Report(facts=facts(spark, args), notes=list(args.note))
    previous: dict[str, Any] = {}
    if Path(args.previous).is_file():
        previous = json.loads(Path(args.previous).read_text())
        shown = in_repository(str(args.previous))
        report.facts["previous page"] = f"`{shown}` of {previous['facts']['date']}"
    else:
        report.facts["previous page"] = "none"
    report.facts["ours jar"] += f", {source}"
    tfrecord = [OURS, LINKEDIN] if use_linkedin else [OURS]

    bench.log("generating and caching the narrow data set")
    with no_whole_stage_codegen(spark):
        data = narrow(spark, args.rows, PARTITIONS).cache()
        expected = fingerprint(data)
    check(expected[0] == args.rows, f"narrow data set has {args.rows} rows")
    bench.log("warming up")
    warm_up(bench, [*tfrecord, "parquet"])

    bench.log("narrow: write, full read, count()")
    counts = measure_narrow(bench, data, [OURS, "parquet", *tfrecord[1:]])
    bench.log("narrow: toPandas() with Arrow, ours and Parquet's")
    pandas_rows, _ = measure_topandas(bench)
    expected_totals = {"tfx-bsl": totals_of(data)}
    for name in ("ours", "parquet", "linkedin"):
        if name != "linkedin" or use_linkedin:
            report.sizes[f"narrow-{name}"] = size_of(out / f"narrow-{name}")
    bench.log(f"narrow: one big file for the splitting test, our narrow files x {SINGLE_COPIES}")
    single = out / "single-ours"
    concatenate(data_files(out / "narrow-ours") * SINGLE_COPIES, single / "big.tfrecord")
    report.sizes["single-ours"] = size_of(single)
    data.unpersist()

    # The wide data is written once, untimed, straight from its generator: no cache needed.
    bench.log("wide: write (untimed), then read 1 column of 100")
    wide_path = out / "wide-ours"
    with no_whole_stage_codegen(spark):
        writer(wide(spark, args.wide_rows), OURS, wide_path)()
        wide_expected = fingerprint(wide(spark, args.wide_rows).select(WIDE_COLUMN))
    check(wide_expected[0] == args.wide_rows, f"wide data set has {args.wide_rows} rows")
    report.sizes["wide-ours"] = size_of(wide_path)
    bench.compare(
        {("wide", fmt): reader(bench, fmt, WIDE_DDL, wide_path, WIDE_COLUMN) for fmt in tfrecord}
    )

    bench.log(f"inference: the narrow data as {INFER_FILES} files (untimed write)")
    infer_path = out / "infer-ours"
    with no_whole_stage_codegen(spark):
        writer(narrow(spark, args.rows, INFER_FILES), OURS, infer_path)()
    report.sizes["infer-ours"] = size_of(infer_path)
    schemas: dict[str, str] = {}
    bench.compare(
        {("inference", fmt): inferrer(bench, fmt, infer_path, schemas) for fmt in tfrecord}
    )

    bench.log("checking what was written and read")
    check_narrow(bench, expected, use_linkedin)
    for name, n in counts.items():
        check(n == args.rows, f"count() of {name} = {n}")
    for fmt in tfrecord:
        got = fingerprint(bench.read(fmt, WIDE_DDL, wide_path).select(WIDE_COLUMN))
        check(got == wide_expected, f"{WIDE_COLUMN} of the wide data read by {short(fmt)}")
    check_inference(schemas, report.notes)

    run_wide1000(bench, report, args.wide1000_rows)
    run_image(bench, report, args.image_rows)

    bench.log("the floor: TFRecordInspector.countRecords, one thread")
    measure_floor(bench, args.rows)

    subset = out / "ray-subset"
    ray_records = write_subset(out / "narrow-ours", subset, RAY_RECORDS)
    expected_totals["ray"] = totals_of(bench.read(OURS, NARROW_DDL, subset))

    bench.log("splitting: one file, read in fresh sessions with 1 and 2 cores")
    spark.stop()
    scaling, how = machine_scaling(single)
    scaling_text = f"{scaling:.2f}x ({how})"
    report.facts["2-core scaling of the machine"] = scaling_text
    equal = -(-report.sizes["single-ours"] // EQUAL_SPLITS)
    for layout, split_bytes in (("default splits", 0), (f"{EQUAL_SPLITS} equal splits", equal)):
        # Sessions with 1 and 2 cores take turns, so that a slow spell of the VM falls on both.
        for _ in range(SPLIT_ROUNDS):
            for cores in (1, 2):
                result = split_in_child(single, cores, split_bytes, args)
                what = f"one file with local[{cores}]: {result.rows} rows in {result.splits} splits"
                # An odd number of copies: the XOR of the rows' hashes is the narrow data's.
                check(
                    (result.rows, result.hash) == (expected[0] * SINGLE_COPIES, expected[1]), what
                )
                if result.jar != report.facts["ours jar sha256"]:
                    report.notes.append(f"local[{cores}] child loaded another jar: {result.jar}")
                key = (f"one file, {layout}", f"local[{cores}]")
                bench.runs.setdefault(key, []).extend(result.runs)
                bench.spent[key] = bench.spent.get(key, Usage(0, 0, 0, 0)) + Usage(**result.spent)
        report.facts[f"splits of the single file, {layout}"] = str(result.splits)

    bench.log("narrow: full read in a fresh local[1] session, ours, Parquet's and as ByteArray")
    one = one_core_in_child(out, args)
    for fmt, runs in one.runs.items():
        what = f"{fmt} reading the narrow files in local[1]"
        if fmt == BYTE_ARRAY:  # a row of each record's bytes: as many rows, other values
            check(one.read[fmt][0] == expected[0], what)
        else:
            check(tuple(one.read[fmt]) == expected, what)
        bench.runs[("full read, local[1]", fmt)] = runs
        bench.spent[("full read, local[1]", fmt)] = Usage(**one.spent[fmt])
        listed = ", ".join(f"{r:.2f}" for r in runs)
        bench.log(f"  full read, local[1], {fmt}: {statistics.median(runs):.2f} s ({listed})")

    missing = run_peers(bench, report, args, expected_totals)
    if not args.skip_tfdata:
        run_tfdata(bench, report, args)
    else:
        missing["tf.data"] = "--skip-tfdata"
    if not args.skip_nested:
        run_nested(bench, args)
    else:
        missing["nested"] = "--skip-nested"

    bench.log(f"profile: {WORKLOADS[args.profile]} in one thread, sampled by async-profiler")
    where = {
        "narrow-read": "narrow-ours",
        "wide1000-select": "wide1000-ours",
        "wide1000-read": "wide1000-ours",
    }
    path = out / where.get(args.profile, f"profile-{args.profile}")
    profile = profile_in_child(path, out / f"profile-{args.profile}.collapsed", args)
    report.facts.update(contention(bench))
    settings = {
        "rows": args.rows,
        "wide_rows": args.wide_rows,
        "wide1000_rows": args.wide1000_rows,
        "image_rows": args.image_rows,
        "repeat": args.repeat,
        "single_rows": args.rows * SINGLE_COPIES,
        "nested_rows": max(1, args.rows // 4),
        "image_bytes": args.image_rows * IMAGE_BYTES,
        "ray_records": ray_records,
        "topandas_rows": pandas_rows,
        "scaling": scaling,
        "peers": bool(args.peers_python),
        "tfdata": not args.skip_tfdata,
    }
    return {
        "command": "",
        "settings": settings,
        "missing": missing,
        "facts": report.facts,
        "sizes": report.sizes,
        "runs": {f"{what} / {fmt}": runs for (what, fmt), runs in bench.runs.items()},
        "notes": report.notes,
        "profile": None if profile is None else asdict(profile),
        "previous": Page(previous).goal_values() if previous else {},
        "spent": {f"{what} / {fmt}": asdict(u) for (what, fmt), u in bench.spent.items()},
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if args.split_child:
        split_child(args)
        return 0
    if args.one_core_child:
        one_core_child(args)
        return 0
    if args.profile_child:
        profile_child(args)
        return 0
    if args.tfdata_child:
        tfdata_child(args)
        return 0
    if not args.page:
        import matplotlib  # noqa: F401  (fail now, not after twenty minutes)

    if not args.page and not args.skip_tfdata and importlib.util.find_spec("tensorflow") is None:
        raise SystemExit("tensorflow-cpu is not installed: install it, or pass --skip-tfdata.")

    results_path = Path(args.results)
    if not args.page:
        started = time.perf_counter()
        results = run_all(args)
        results["facts"]["harness wall time"] = f"{time.perf_counter() - started:.0f} s"
        results["facts"]["load average at end"] = load_average()
        given = sys.argv[1:] if argv is None else argv
        results["command"] = shlex.join(["benchmarks/run.py", *map(in_repository, given)])
        results_path.parent.mkdir(parents=True, exist_ok=True)
        save(results, results_path)
    page = Page(json.loads(results_path.read_text()))
    print("\n" + goals_table(page.goals()))
    print("\n" + table(page.rows()))
    print("\n" + "\n".join(f"{k}: {v}" for k, v in page.rates().items()))
    for note in page.results["notes"]:
        print(f"note: {note}")
    docs = Path(args.docs)
    docs.mkdir(parents=True, exist_ok=True)
    if not args.page:
        draw(page.rows(), page.results["facts"], docs / "benchmarks.png")
    (docs / "benchmarks.md").write_text(page.markdown("benchmarks.png"))
    print(f"\nwrote {docs / 'benchmarks.md'} from {results_path}")
    return 0
