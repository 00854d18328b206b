"""The report: the facts of the machine and the Markdown of ``docs/benchmarks.md``."""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

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
from .goals import KEPT, TFX_LABEL, Goal
from .measure import RAY_LABEL, TOPANDAS_FILES
from .peers import BATCH as TFX_BATCH
from .peers import RAY_CPUS, RAY_RECORDS
from .profiling import WORKLOADS, Profile
from .sessions import LINKEDIN_PACKAGE, sha256
from .splitting import EQUAL_SPLITS, SPLIT_ROUNDS, SPLIT_WARMUP
from .tfdata import BATCH, THREADS
from .timing import Row

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass
class Report:
    """What ``document`` writes and ``draw`` draws."""

    rows: list[Row] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    throughput: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    profile: Profile | None = None
    goals: list[Goal] = field(default_factory=list)


def facts(spark: SparkSession, args: argparse.Namespace) -> dict[str, str]:
    import pyspark

    meminfo = Path("/proc/meminfo").read_text().splitlines()
    mem_kb = next(int(x.split()[1]) for x in meminfo if x.startswith("MemTotal:"))
    cpu = next(
        (x.split(":", 1)[1].strip() for x in Path("/proc/cpuinfo").read_text().splitlines()
         if x.startswith("model name")),
        platform.processor(),
    )  # fmt: skip
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    jar = args.ours_jar
    mtime = dt.datetime.fromtimestamp(Path(jar).stat().st_mtime, dt.timezone.utc)
    built = mtime.strftime("%Y-%m-%d %H:%M UTC")
    if args.skip_linkedin:
        linkedin = "skipped (--skip-linkedin)"
    elif args.linkedin_jar:
        linkedin = f"`{Path(args.linkedin_jar).name}` (sha256 {sha256(args.linkedin_jar)})"
        linkedin += ", a local jar passed with --linkedin-jar"
    else:
        linkedin = f"`{LINKEDIN_PACKAGE}` from Maven Central (spark.jars.packages)"
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cores (nproc)": subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip(),
        "CPU": cpu,
        "memory (MemTotal)": f"{mem_kb / 1024 / 1024:.1f} GiB",
        "Java": java.strip().splitlines()[0] if java.strip() else "unknown",
        "Python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "Spark master": str(spark.sparkContext.master),
        "driver memory": args.driver_memory,
        "ours jar": f"`{Path(jar).name}`, built {built}",
        "ours jar sha256": sha256(jar),
        "linkedin": linkedin,
        "narrow rows": f"{args.rows:,}",
        "wide rows": f"{args.wide_rows:,}",
        "wide-1000 rows": f"{args.wide1000_rows:,}",
        "image-sized rows": f"{args.image_rows:,}",
        "repeat (median of)": str(args.repeat),
        "load average at start (1, 5, 15 min)": load_average(),
    }


def load_average() -> str:
    """Other work on the machine skews every figure: the 1, 5 and 15 minute load averages."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def table(rows: Sequence[Row]) -> str:
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


def goals_table(goals: Sequence[Goal]) -> str:
    """The goals as Markdown: target, measured figure, met or not."""
    lines = ["| goal | target | measured | previous page | status |", "|---|---|---|---|---|"]
    lines += [
        f"| {g.what} | {g.target} | {g.measured} | {g.previous} | {g.status} |" for g in goals
    ]
    return "\n".join(lines)


def profile_section(profile: Profile | None) -> str:
    if profile is None:
        return "## Where the time goes\n\nNot profiled: the JDK's `jfr` tool was not found."
    areas = "\n".join(f"| {a} | {share:.0%} |" for a, share in profile.areas)
    top = "\n".join(f"| `{m}` | {share:.1%} |" for m, share in profile.self_top)
    choices = ", ".join(f"`{w}`" for w in WORKLOADS)
    return f"""## Where the time goes

Java Flight Recorder sampled {profile.workload} in one thread (`local[1]`, after an untimed
run): {profile.samples} samples of the task thread, one every 10 ms, counted by the method on
top of the stack. (`--profile` chooses what is sampled: {choices}.)

| part | samples |
|---|---:|
{areas}

| method | samples |
|---|---:|
{top}

The JVM's CRC32C intrinsic runs outside Java frames, where the sampler does not see it, so
the framing share undercounts it: the floor above measures framing and both checksums alone."""


def document(report: Report, args: argparse.Namespace, command: str, chart: str) -> str:
    mb = {k: f"{v / 1e6:,.1f} MB" for k, v in report.sizes.items()}
    size_lines = "\n".join(f"| `{k}` | {v} |" for k, v in mb.items())
    fact_lines = "\n".join(f"| {k} | {v} |" for k, v in report.facts.items())
    rate_lines = "\n".join(f"| {k} | {v} |" for k, v in report.throughput.items())
    notes = "\n".join(f"- {n}" for n in report.notes) or "- none"
    profile = profile_section(report.profile)
    splits = int(report.facts.get("splits of the single file, default splits", "0"))
    waves = (splits + 1) // 2
    split_note = (
        f"With the default 128 MB split size the file makes {splits} splits: {waves} waves on 2"
        f" cores, {'one core idle in the last' if splits % 2 else 'none with an idle core'}."
        f" The second line sets `spark.sql.files.maxPartitionBytes` to an eighth of the file,"
        f" so each core reads {EQUAL_SPLITS // 2} equal splits."
    )
    selected = ", ".join(f"`{c}`" for c in WIDE1000_SELECTED[:3]) + ", ..."
    sizes = {"rows": args.rows, "wide1000_rows": args.wide1000_rows, "image_rows": args.image_rows}
    small = (
        " This run used smaller data sets than the defaults: fixed costs (planning a query of"
        " 1,000 columns, starting tasks and sessions) weigh more, so its figures say little"
        " about goals set for the default sizes."
        if any(n < DEFAULT_ROWS[k] for k, n in sizes.items())
        else ""
    )
    peer_note = (
        ""
        if args.peers_python
        else "Not measured in this run: no `--peers-python` (`ci/bench --peers`)."
    )
    tfdata = (
        "not measured in this run (`--skip-tfdata`)"
        if args.skip_tfdata
        else f"median of {args.repeat} run(s) after an untimed one, all in one child process"
    )
    return f"""# Benchmarks

Measured by `benchmarks/run.py` on {report.facts["date"]}; every time is the median of
{args.repeat} run(s) after one untimed run, in one local Spark session (`local[2]`) holding
both TFRecord jars, each addressed by its class name (the `local[1]` reads, the single file,
the peers, tf.data and the nested reads: in child processes of their own). Where readers are
compared, they take turns: each round runs ours, then Parquet, then linkedin, once each. A
ratio above 1 means we are faster (on the last two lines: that two cores read one file faster
than one core). The files are in the OS page cache: reads measure CPU, not disk.

<!-- docs-test: not run: the benchmark run that made this page (35 minutes, and a linkedin jar) -->
```bash
{command}
```

## Goals

{goals_table(report.goals)}

Ratios are their time over ours, from the results below; the floor is in "Throughput against
the floor". "previous page" is the same figure on the page this run replaced
({report.facts.get("previous page", "none")}). The "kept" lines are issue 25's "nothing else
gets slower": each should be no more than {KEPT:.0%} below the previous page's figure (the
noise of this VM between runs). Ratios against Parquet are compared as they are; figures
without a competitor as their speed over the floor's of the same run (the floor's time over
theirs), so that a slower or faster day of the machine cancels out; the nested reads as flat
time over nested time.{small}

## Results

{table(report.rows)}

![benchmark chart]({chart})

What each line measures:

- **write, narrow**: `df.write.format(...).save()` of the cached narrow data set
  ({PARTITIONS} files).
- **full read, narrow**: load with the known schema, write to the `noop` sink. Both TFRecord
  readers read the same files (the ones we wrote); Parquet reads its own.
- **full read, narrow, local[1]**: the same reads, ours and Parquet's by turns, in a fresh
  `local[1]` session in a child process ({SPLIT_WARMUP} untimed rounds first).
- **full read, narrow, local[1] vs {TFX_LABEL}**: tfx-bsl's C++
  `ExamplesToRecordBatchDecoder` (with the narrow schema, so into Arrow `large_list` columns)
  decoding every narrow record, in batches of {TFX_BATCH}, on one thread, in a child process
  with the Python of `--peers-python`. The records are read into memory first, untimed: this
  is decoding only, against our whole read through Spark on one core. Checked: the records
  decoded and the sums of `id`, `label`, `f0` and `ids` (and the count of `ids` values) equal
  ours. {peer_note}
- **full read, narrow vs {RAY_LABEL}**: Ray Data's `ray.data.read_tfrecords` with the narrow
  schema as `tf_schema`, `ray.init(num_cpus={RAY_CPUS})`, every batch taken as Arrow, in a
  child process with the Python of `--peers-python`. Ray parses in Python, about a thousand
  records a second per CPU, so it reads a subset: the first {RAY_RECORDS:,} narrow records (or
  fewer), half from each of the first two files, copied to two files; its time is scaled to the
  whole data set (times {args.rows:,} / the subset's records). Checked like tfx-bsl, against our
  read of the subset.
- **toPandas(), narrow**: `toPandas()` with `spark.sql.execution.arrow.pyspark.enabled` on
  (and no fallback) of the first {TOPANDAS_FILES} of the {PARTITIONS} narrow files, ours and
  Parquet's by turns; both must give the same rows and the same sum of `id`.
- **full read, narrow vs tf.data**: TensorFlow's own reader on the same files, in a fresh
  Python process without Spark, with {THREADS} threads (`tf.config.threading` inter- and
  intra-op, and tf.data's own pool): `TFRecordDataset(files, num_parallel_reads={THREADS})`,
  `.batch({BATCH})`, `.map(tf.io.parse_example, num_parallel_calls={THREADS})`, every tensor of
  every batch taken to NumPy. The spec is `spark_tfrecord.feature_spec` of the narrow schema
  with every field required (no value is missing): `FixedLenFeature` for the scalars,
  TensorFlow's fastest, `RaggedFeature` for the arrays.
  {tfdata[0].upper() + tfdata[1:]}.
- **count()**: `load(...).count()` with the known schema.
- **read 1 of 100 columns, wide**: the full 100-column schema given, `select("{WIDE_COLUMN}")`,
  `noop` sink.
- **schema inference**: `load(...)` without a schema on the narrow data written as
  {INFER_FILES} files, then `.schema` (our defaults: 32 files x 1000 records; linkedin reads the
  first non-empty file whole).
- **write, wide-1000**: `save()` of the cached wide-1000 data set ({PARTITIONS} files), by us
  and by Parquet; both times include reading Spark's cache of 1,000 columns, which is slow
  (timed alone under "Throughput"). **full read, wide-1000**: each format reading its own
  files, `noop` sink.
- **read 10 of 1000 columns, wide-1000**: the full 1000-column schema given, `select` of every
  100th column ({selected}), `noop` sink; against Parquet reading the
  same 10 columns of its files, and against our own full read (what reading 10 columns saves).
- **write, image-sized** and **full read, image-sized**: records of about 100 KB, by us and by
  Parquet (its default, snappy), each reading its own files.
- **full read, 1 file**: one uncompressed file holding our narrow files {SINGLE_COPIES} times
  over ({SINGLE_COPIES} x {args.rows:,} rows, concatenated byte for byte), read in
  fresh sessions, `local[1]` and `local[2]` by turns ({SPLIT_ROUNDS} of each, {args.repeat}
  timed reads each after {SPLIT_WARMUP} untimed ones); the ratio is the 2-core speed-up. Its
  ceiling is the machine's own 2-core scaling (below). {split_note}

Times in brackets are the fastest and slowest of the runs: on a shared 2-core VM, expect
differences of 20 % between sessions.

The nested reads (the "kept" goals) come from `benchmarks/nested.py`, run in a child process on
{max(1, args.rows // 4):,} rows: an Object-Detection-like nested DataFrame against the same
features as flat columns, nested and flat by turns; its figures are under "Throughput".

## Throughput against the floor

The floor is `TFRecordInspector.countRecords` over the narrow files, one thread, from the driver:
the framing walked and both CRC32Cs checked, nothing parsed. "Per core / floor" is our full
read's records per second per core as a share of the floor's: with `local[2]`, half of its
records per second; with `local[1]`, all of them. Rates are over the
TFRecord files read: the narrow ones, or the wide, wide-1000 and single files for their lines;
image-sized rates count the image bytes ({IMAGE_BYTES:,} a record), the same for both formats.
The 2-core speed-ups of the single file stand beside the machine's own.

| what | time and rate |
|---|---|
{rate_lines}

{profile}

## Data

Generated from `spark.range`, every value a hash of the row id and a fixed seed (the image
bytes: seeded by the row id), so runs and partitionings give the same rows. The narrow,
wide-1000 and image-sized data are cached in memory before any write is timed (wide-1000
without the cache's compression, which on 1,000 columns takes longer than generating them);
the wide data is written once, untimed, straight from its generator.

- **narrow**: `{NARROW_DDL}`;
  `emb` holds 32 floats, `ids` 0 to 20 values (some empty), `s` 5 to 15 characters.
- **wide**: 100 scalar columns `c000`..`c099`: 50 float, 30 bigint, 10 int, 10 string.
- **wide-1000**: 1,000 scalar columns `w0000`..`w0999`, alternating float and bigint (500
  each), each value `xxhash64(id, seed of the column)` (the bigints cut to 30 bits);
  {args.wide1000_rows:,} rows, {PARTITIONS} files.
- **image-sized**: `id bigint, image binary`, the image {IMAGE_BYTES:,} bytes of Python's
  `random.Random(id).randbytes(...)`, incompressible; {args.image_rows:,} rows
  ({args.image_rows * IMAGE_BYTES / 1e9:.2f} GB of image bytes), {PARTITIONS} files.

| files | size |
|---|---:|
{size_lines}

Checked on every run (the run stops before printing anything if one fails): row counts and an
order-independent hash of every value, for each format reading what it wrote, linkedin reading
our files and we reading linkedin's; `count()` results; the wide column read back; our inferred
schema; the wide-1000 data read whole and its 10 columns, by us and by Parquet, against the
generator; our wide-1000 inferred schema (1,000 fields of the generated types); the image-sized
data read back by us and by Parquet; the narrow files read by us and by Parquet in the
`local[1]` session; toPandas() rows, ours against Parquet's; tfx-bsl's and Ray Data's record
counts and column sums against ours; tf.data's record count and the sum of its `id` values;
`countRecords` totals; the single file read in splits; the nested and flat files byte for
byte the same.

## Machine and versions

| | |
|---|---|
{fact_lines}

## Notes from this run

{notes}

## How to reproduce

<!-- docs-test: not run: 35 minutes of benchmarks (the quick try: several), linkedin's source -->
```bash
ci/bench --peers --linkedin-source PATH    # the page: builds jars + wheel, Spark 3.5 venv,
                                           # linkedin's jar from its source at PATH, the
                                           # peers' venv; default sizes
ci/bench --rows 20000 --wide1000-rows 2000 --image-rows 200 --repeat 1 \\
    --docs /tmp/bench-docs                 # a quick try that keeps docs/ as is
```

`ci/bench` passes its arguments to `benchmarks/run.py` (`--help` lists them): `--rows`,
`--wide-rows`, `--wide1000-rows` and `--image-rows` size the data sets, `--skip-tfdata` leaves
the tf.data reference out (it needs `tensorflow-cpu`, which `ci/bench` installs), and
`--profile` chooses what is profiled. Without `--linkedin-jar`, Spark is asked for
`{LINKEDIN_PACKAGE}`; that artifact is not on Maven Central, so build its jar from a checkout
of its source with `ci/linkedin-jar PATH` (Maven, from Maven Central only; `ci/bench
--linkedin-source PATH` does it and passes the jar), give a jar with `--linkedin-jar PATH`, or
leave it out with `--skip-linkedin`. `ci/bench --peers` installs tfx-bsl and Ray Data into an
environment of their own and passes its Python as `--peers-python`; without it they are left
out. `--skip-nested` leaves `benchmarks/nested.py` out, and `--previous PAGE` names the page
whose figures the goals table shows as the previous ones. Raw timings of every run, and the
goals, go to `OUT/results.json`.
"""
