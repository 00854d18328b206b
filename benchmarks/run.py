"""Benchmarks of the ``tfrecord`` data source against linkedin spark-tfrecord 0.7.0 and Parquet.

Run with the Python of a Spark 3.5 environment that has the wheel and matplotlib installed
(``ci/bench`` makes one and passes its arguments here)::

    .cache/venv/spark-3.5/bin/python benchmarks/run.py --rows 2000000 --repeat 3
    .cache/venv/spark-3.5/bin/python benchmarks/run.py --rows 20000 --repeat 1 --docs /tmp/d

Everything is timed in one local SparkSession holding both jars; each data source is addressed by
its class name, since both register the short name ``tfrecord``. Every figure is the median of
``--repeat`` runs. Reads go to the ``noop`` sink, so they measure decoding, not a consumer.
Correctness is checked along the way (row counts and an order-independent hash of every value),
and a failed check stops the run before any table is printed.

Writes ``docs/benchmarks.md`` and ``docs/benchmarks.png``, and the raw timings to
``OUT/results.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, astuple, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

ROOT = Path(__file__).resolve().parents[1]

OURS = "io.github.sparktfrecord.TFRecordFileFormat"
LINKEDIN = "com.linkedin.spark.datasources.tfrecord.DefaultSource"
LINKEDIN_PACKAGE = "com.linkedin.sparktfrecord:spark-tfrecord_2.12:0.7.0"

#: Partitions (so output files) of the narrow and wide data sets, and files for inference.
PARTITIONS = 8
INFER_FILES = 128
WIDE_COLUMN = "c050"
RESULT_MARK = "BENCH-RESULT "
# The single file holds the narrow files this many times over (an odd number: see the check).
SINGLE_COPIES = 3
# The single file is also read in this many equal splits: an even count keeps both cores busy.
EQUAL_SPLITS = 8
# Child sessions per core count and split layout, alternating 1 and 2 cores.
SPLIT_ROUNDS = 3
# Untimed reads of the single file in each child session before the timed ones.
SPLIT_WARMUP = 3

NARROW_DDL = (
    "id bigint, label bigint, f0 float, f1 float, f2 float, f3 float, "
    "emb array<float>, ids array<bigint>, s string"
)
# Every value is a hash of (id, a fixed seed): the same rows whatever the partitioning. Arrays are
# built with array() and slice(), which Spark compiles, not transform(), which it interprets.
NARROW_EXPRS = [
    "id",
    "pmod(xxhash64(id, 1), 2) AS label",
    *[
        f"CAST(pmod(xxhash64(id, {10 + k}), 2000001) / 1e6 - 1.0 AS FLOAT) AS f{k}"
        for k in range(4)
    ],
    "array("
    + ", ".join(
        f"CAST(pmod(xxhash64(id, 20, {i}), 2000001) / 1e6 - 1.0 AS FLOAT)" for i in range(32)
    )
    + ") AS emb",
    # 0 to 20 values, so some lists are empty.
    "slice(array("
    + ", ".join(f"pmod(xxhash64(id, 22, {i}), 1000000)" for i in range(20))
    + "), 1, CAST(pmod(xxhash64(id, 21), 21) AS INT)) AS ids",
    # 5 to 15 hex digits.
    "substr(concat(hex(xxhash64(id, 23)), hex(xxhash64(id, 24))), 1, "
    "5 + CAST(pmod(xxhash64(id, 25), 11) AS INT)) AS s",
]
# Wide columns by index modulo 10: five float, three bigint, one int, one string.
WIDE_KINDS = ["float"] * 5 + ["bigint"] * 3 + ["int", "string"]


def wide_expr(i: int) -> str:
    value = f"pmod(xxhash64(id, {100 + i}), 1000000007)"
    kind = WIDE_KINDS[i % 10]
    if kind == "float":
        return f"CAST({value} / 1e3 AS FLOAT) AS c{i:03d}"
    if kind == "int":
        return f"CAST(pmod({value}, 100000) AS INT) AS c{i:03d}"
    if kind == "string":
        return f"hex(pmod({value}, 16777216)) AS c{i:03d}"
    return f"{value} AS c{i:03d}"


WIDE_DDL = ", ".join(f"c{i:03d} {WIDE_KINDS[i % 10]}" for i in range(100))


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
class Report:
    rows: list[Row] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    throughput: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    profile: Profile | None = None


class CheckFailed(RuntimeError):
    pass


def check(ok: bool, what: str, detail: str = "") -> None:
    if not ok:
        raise CheckFailed(f"correctness check failed: {what} {detail}".strip())
    print(f"  ok: {what}", flush=True)


# ---------------------------------------------------------------------------------------------
# Spark helpers


def snapshot_jar(out: Path, given: str | None) -> str:
    """A copy of our jar (the installed wheel's unless given): reinstalling the wheel mid-run
    cannot change what is measured."""
    import shutil
    import zipfile

    import spark_tfrecord

    installed = Path(given or spark_tfrecord.jar_path())
    copy = out / "jars" / installed.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(installed, copy)
    with zipfile.ZipFile(copy) as jar:
        bad = jar.testzip()
    if bad is not None:
        raise SystemExit(f"{installed} is damaged at {bad} (being reinstalled?); run again.")
    return str(copy)


def session(
    *,
    ours: str,
    cores: int,
    memory: str,
    linkedin: str | None,
    linkedin_jar: str | None,
    java_options: str = "",
) -> SparkSession:
    """A local session with our jar and, unless ``linkedin`` is None, linkedin's."""
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName("spark-tfrecord-benchmarks")
        .config("spark.driver.memory", memory)
        .config("spark.driver.extraJavaOptions", java_options)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(PARTITIONS))
    )
    builder = builder.config("spark.jars", ",".join(j for j in (ours, linkedin_jar) if j))
    if linkedin is not None and linkedin_jar is None:
        builder = builder.config("spark.jars.packages", linkedin)
    try:
        spark = builder.getOrCreate()
    except Exception as e:
        if linkedin is None and linkedin_jar is None:
            raise
        raise SystemExit(
            f"Spark did not start with linkedin spark-tfrecord ({linkedin_jar or linkedin}):"
            f" {e}\n"
            "When Spark cannot resolve the package (see the Ivy report above), pass its jar "
            "with --linkedin-jar, or run with --skip-linkedin."
        ) from e
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def jvm(spark: SparkSession) -> Any:
    """The py4j view of the driver JVM (untyped)."""
    return spark._jvm


def gc(spark: SparkSession) -> None:
    jvm(spark).java.lang.System.gc()


@dataclass
class Usage:
    """Seconds since boot: wall clock, busy CPU of the whole machine, of this driver (JVM and
    Python), and of the JVM's garbage collections."""

    wall: float
    machine: float
    driver: float
    gc: float

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            self.wall - other.wall,
            self.machine - other.machine,
            self.driver - other.driver,
            self.gc - other.gc,
        )

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(a + b for a, b in zip(astuple(self), astuple(other))))

    @property
    def others(self) -> float:
        """Cores used by other processes meanwhile (the other engineer's tests, say)."""
        return max(0.0, self.machine - self.driver) / self.wall if self.wall > 0 else 0.0


def usage(spark: SparkSession) -> Usage:
    tick = os.sysconf("SC_CLK_TCK")
    cpu = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    busy = sum(cpu) - cpu[3] - cpu[4]  # all but idle and iowait
    view = jvm(spark)
    pid = view.java.lang.ProcessHandle.current().pid()
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    jvm_cpu = (int(stat[11]) + int(stat[12])) / tick  # utime and stime, fields 14 and 15
    beans = view.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
    gc_ms = sum(bean.getCollectionTime() for bean in beans)
    return Usage(time.monotonic(), busy / tick, jvm_cpu + time.process_time(), gc_ms / 1000)


def timed(
    spark: SparkSession, repeat: int, action: Callable[[], object]
) -> tuple[list[float], Usage]:
    """Wall-clock seconds of each of ``repeat`` runs (each after a JVM garbage collection), and
    what was used during them."""
    runs = []
    spent = Usage(0.0, 0.0, 0.0, 0.0)
    for _ in range(repeat):
        gc(spark)
        before = usage(spark)
        start = time.perf_counter()
        action()
        runs.append(time.perf_counter() - start)
        delta = usage(spark) - before
        spent = Usage(*(a + b for a, b in zip(astuple(spent), astuple(delta))))
    return runs, spent


def fingerprint(df: DataFrame) -> tuple[int, int]:
    """Row count and the XOR of a 64-bit hash of every row: equal iff (almost surely) same rows."""
    cols = ", ".join(f"`{c}`" for c in df.columns)
    row = df.selectExpr("count(*) AS n", f"bit_xor(xxhash64({cols})) AS h").collect()[0]
    return int(row["n"]), int(row["h"] or 0)


def noop(df: DataFrame) -> None:
    df.write.format("noop").mode("overwrite").save()


def data_files(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_")))


def size_of(path: Path) -> int:
    return sum(p.stat().st_size for p in data_files(path))


def sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


def short(fmt: str) -> str:
    return {OURS: "ours", LINKEDIN: "linkedin"}.get(fmt, fmt)


# ---------------------------------------------------------------------------------------------
# The measurements


def narrow(spark: SparkSession, rows: int, partitions: int) -> DataFrame:
    return spark.range(0, rows, 1, partitions).selectExpr(*NARROW_EXPRS)


def wide(spark: SparkSession, rows: int) -> DataFrame:
    return spark.range(0, rows, 1, PARTITIONS).selectExpr(*[wide_expr(i) for i in range(100)])


@contextmanager
def no_whole_stage_codegen(spark: SparkSession) -> Iterator[None]:
    """For generating the data only: fused into one method, its 50-odd hash expressions are too
    big for the JIT to compile, and generation would take four times as long."""
    key = "spark.sql.codegen.wholeStage"
    before = spark.conf.get(key) or "true"
    spark.conf.set(key, "false")
    try:
        yield
    finally:
        spark.conf.set(key, before)


@dataclass
class Bench:
    """The session under test, and every measurement's runs by (measurement, format)."""

    spark: SparkSession
    repeat: int
    out: Path
    runs: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    spent: dict[tuple[str, str], Usage] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

    def log(self, message: str) -> None:
        print(f"[{time.perf_counter() - self.started:5.0f} s] {message}", flush=True)

    def time(self, what: str, fmt: str, action: Callable[[], object], warm: bool = True) -> None:
        """Times ``repeat`` runs of ``action``, after an untimed one unless ``warm`` is false
        (the JIT is still compiling a query's code during its first run)."""
        if warm:
            action()
        runs, spent = timed(self.spark, self.repeat, action)
        self.runs[(what, short(fmt))] = runs
        self.spent[(what, short(fmt))] = spent
        listed = ", ".join(f"{r:.2f}" for r in runs)
        self.log(
            f"  {what}, {short(fmt)}: {statistics.median(runs):.2f} s ({listed}); "
            f"GC {spent.gc:.1f} s, other processes {spent.others:.2f} cores"
        )

    def median(self, what: str, fmt: str) -> float:
        return statistics.median(self.runs[(what, fmt)])

    def row(self, name: str, what: str, other: str) -> Row:
        ours, theirs = self.runs[(what, "ours")], self.runs[(what, other)]
        return Row(name, statistics.median(ours), other, statistics.median(theirs), ours, theirs)

    def read(self, fmt: str, ddl: str | None, path: Path) -> DataFrame:
        reader = self.spark.read.format(fmt)  # a new reader each time: readers are mutable
        return (reader.schema(ddl) if ddl else reader).load(str(path))


def writer(df: DataFrame, fmt: str, path: Path) -> Callable[[], object]:
    return lambda: df.write.format(fmt).mode("overwrite").save(str(path))


def reader(
    bench: Bench, fmt: str, ddl: str, path: Path, column: str | None = None
) -> Callable[[], object]:
    if column is None:
        return lambda: noop(bench.read(fmt, ddl, path))
    return lambda: noop(bench.read(fmt, ddl, path).select(column))


def warm_up(bench: Bench, formats: Sequence[str]) -> None:
    """One small write, read and count per format, so the first timed run is not JIT start-up."""
    small = narrow(bench.spark, 20000, 2)
    for fmt in formats:
        path = bench.out / "warmup" / short(fmt)
        writer(small, fmt, path)()
        reader(bench, fmt, NARROW_DDL, path)()
        bench.read(fmt, NARROW_DDL, path).count()


def measure_narrow(bench: Bench, data: DataFrame, formats: Sequence[str]) -> dict[str, int]:
    """Write, full read and count(); both TFRecord readers read the files we wrote."""
    for fmt in formats:
        bench.time("write", fmt, writer(data, fmt, bench.out / f"narrow-{short(fmt)}"), warm=False)
    ours = bench.out / "narrow-ours"
    for fmt in formats:
        path = bench.out / "narrow-parquet" if fmt == "parquet" else ours
        bench.time("full read", fmt, reader(bench, fmt, NARROW_DDL, path))
    counts: dict[str, int] = {}
    for fmt in formats:
        if fmt != "parquet":
            bench.time("count", fmt, counter(bench, fmt, ours, counts))
    return counts


def counter(bench: Bench, fmt: str, path: Path, counts: dict[str, int]) -> Callable[[], object]:
    def count() -> None:
        counts[short(fmt)] = bench.read(fmt, NARROW_DDL, path).count()

    return count


def inferrer(bench: Bench, fmt: str, path: Path, schemas: dict[str, str]) -> Callable[[], object]:
    def infer() -> None:
        schemas[short(fmt)] = bench.read(fmt, None, path).schema.simpleString()

    return infer


def check_narrow(bench: Bench, expected: tuple[int, int], linkedin: bool) -> None:
    """Every format reads back the rows and values it wrote; the TFRecord files interoperate."""
    cases = [(OURS, "ours"), ("parquet", "parquet")]
    if linkedin:
        cases += [(LINKEDIN, "ours"), (LINKEDIN, "linkedin"), (OURS, "linkedin")]
    for fmt, writer_name in cases:
        got = fingerprint(bench.read(fmt, NARROW_DDL, bench.out / f"narrow-{writer_name}"))
        what = f"{short(fmt)} reading the files {writer_name} wrote: {got[0]} rows, same values"
        check(got == expected, what)


def fields(simple: str) -> list[str]:
    """Top-level ``name:type`` items of a ``struct<...>`` simple string."""
    items, depth, start = [], 0, len("struct<")
    for i, ch in enumerate(simple[start:-1], start):
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            items.append(simple[start:i])
            start = i + 1
    return [*items, simple[start:-1]]


def check_inference(schemas: dict[str, str], notes: list[str]) -> None:
    want = "struct<" + ",".join(f.replace(" ", ":", 1) for f in NARROW_DDL.split(", ")) + ">"
    check(schemas["ours"] == want, "our inferred schema", f"{schemas['ours']} is not {want}")
    theirs = schemas.get("linkedin", want)
    if theirs != want:
        same = sorted(fields(theirs)) == sorted(fields(want))
        how = "the same fields and types in another order" if same else "other types"
        notes.append(f"linkedin's inferred schema has {how}: `{theirs}`")


def measure_floor(bench: Bench, rows: int) -> None:
    """``TFRecordFiles.countRecords`` over the narrow files we wrote, one after another."""
    files = [str(f) for f in data_files(bench.out / "narrow-ours") if f.suffix == ".tfrecord"]
    api = jvm(bench.spark).io.github.sparktfrecord.TFRecordFiles
    totals: list[int] = []

    def count() -> None:
        totals[:] = [api.countRecords(f) for f in files]

    bench.time("floor", "ours", count)
    check(sum(totals) == rows, f"countRecords over {len(files)} files: {sum(totals)} records")


def run_all(args: argparse.Namespace) -> Report:
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
    for fmt in tfrecord:
        bench.time("wide", fmt, reader(bench, fmt, WIDE_DDL, wide_path, WIDE_COLUMN))

    bench.log(f"inference: the narrow data as {INFER_FILES} files (untimed write)")
    infer_path = out / "infer-ours"
    with no_whole_stage_codegen(spark):
        writer(narrow(spark, args.rows, INFER_FILES), OURS, infer_path)()
    report.sizes["infer-ours"] = size_of(infer_path)
    schemas: dict[str, str] = {}
    for fmt in tfrecord:
        bench.time("inference", fmt, inferrer(bench, fmt, infer_path, schemas))

    bench.log("checking what was written and read")
    check_narrow(bench, expected, use_linkedin)
    for name, n in counts.items():
        check(n == args.rows, f"count() of {name} = {n}")
    for fmt in tfrecord:
        got = fingerprint(bench.read(fmt, WIDE_DDL, wide_path).select(WIDE_COLUMN))
        check(got == wide_expected, f"{WIDE_COLUMN} of the wide data read by {short(fmt)}")
    check_inference(schemas, report.notes)

    bench.log("the floor: TFRecordFiles.countRecords, one thread")
    measure_floor(bench, args.rows)

    bench.log("splitting: one file, read in fresh sessions with 1 and 2 cores")
    spark.stop()
    report.facts["2-core scaling of the machine"] = machine_scaling(single)
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

    bench.log("profile: the narrow full read in one thread, sampled by Java Flight Recorder")
    report.profile = profile_in_child(out / "narrow-ours", out / "full-read.jfr", args)

    report.rows = table_rows(bench, use_linkedin)
    report.throughput = throughput(bench, report.sizes, args)
    report.facts.update(contention(bench))
    raw = {
        "runs": {f"{what} / {fmt}": runs for (what, fmt), runs in bench.runs.items()},
        "spent": {f"{what} / {fmt}": asdict(u) for (what, fmt), u in bench.spent.items()},
        "sizes": report.sizes,
        "facts": report.facts,
    }
    (out / "results.json").write_text(json.dumps(raw, indent=2) + "\n")
    return report


def concatenate(files: list[Path], target: Path) -> None:
    """One TFRecord file holding the records of ``files`` in order: the framing of each record
    stands alone, so TFRecord files concatenate byte for byte."""
    if target.parent.exists():
        shutil.rmtree(target.parent)
    target.parent.mkdir(parents=True)
    with target.open("wb") as out:
        for f in files:
            with f.open("rb") as part:
                shutil.copyfileobj(part, out, 1 << 20)


def machine_scaling(path: Path) -> str:
    """The speed-up two cores give to two independent CPU-bound processes (``sha256sum`` of the
    single file): the ceiling for any 2-core speed-up measured here. Also leaves the file in the
    page cache for the sessions that read it next."""
    (file,) = [str(f) for f in data_files(path)]

    def wall(processes: int) -> float:
        start = time.perf_counter()
        running = [
            subprocess.Popen(["sha256sum", file], stdout=subprocess.DEVNULL)
            for _ in range(processes)
        ]
        for process in running:
            process.wait()
        return time.perf_counter() - start

    wall(1)  # reads the file into the page cache
    one, two = wall(1), wall(2)
    return f"{2 * one / two:.2f}x (sha256sum: 1 process {one:.2f} s, 2 at once {two:.2f} s)"


def contention(bench: Bench) -> dict[str, str]:
    """How much the timed runs shared the machine, and how much of them was GC."""
    total = Usage(*(sum(col) for col in zip(*(astuple(u) for u in bench.spent.values()))))
    (what, fmt), worst = max(bench.spent.items(), key=lambda item: item[1].others)
    return {
        "other processes during timed runs (cores)": (
            f"{total.others:.2f} on average, at most {worst.others:.2f} ({what}, {fmt})"
        ),
        "JVM GC during timed runs": f"{total.gc:.1f} s of {total.wall:.0f} s",
    }


def table_rows(bench: Bench, linkedin: bool) -> list[Row]:
    rows = [
        bench.row("write, narrow", "write", "parquet"),
        bench.row("full read, narrow", "full read", "parquet"),
    ]
    if linkedin:
        rows += [
            bench.row("write, narrow", "write", "linkedin"),
            bench.row("full read, narrow", "full read", "linkedin"),
            bench.row("count(), narrow", "count", "linkedin"),
            bench.row("read 1 of 100 columns, wide", "wide", "linkedin"),
            bench.row(f"schema inference, {INFER_FILES} files", "inference", "linkedin"),
        ]
    for layout in ("default splits", f"{EQUAL_SPLITS} equal splits"):
        one = bench.runs[(f"one file, {layout}", "local[1]")]
        two = bench.runs[(f"one file, {layout}", "local[2]")]
        name = f"full read, 1 file, {layout}, local[2]"
        rows.append(Row(name, statistics.median(two), "local[1]", statistics.median(one), two, one))
    return rows


def throughput(bench: Bench, sizes: dict[str, int], args: argparse.Namespace) -> dict[str, str]:
    """Records and bytes per second of our reads (and linkedin's), against the floor."""

    def rate(what: str, fmt: str, rows: int = args.rows, nbytes: int = sizes["narrow-ours"]) -> str:
        seconds = bench.median(what, fmt)
        per_s = f"{rows / seconds / 1e6:.2f} M records/s, {nbytes / seconds / 1e6:.0f} MB/s"
        return f"{seconds:.2f} s: {per_s}"

    rates = {
        "countRecords, 1 thread (the floor)": rate("floor", "ours"),
        "count(), local[2]": rate("count", "ours"),
        "full read, local[2]": rate("full read", "ours"),
        **{
            f"full read, 1 file, {layout}, local[{cores}]": rate(
                f"one file, {layout}",
                f"local[{cores}]",
                args.rows * SINGLE_COPIES,
                sizes["single-ours"],
            )
            for layout in ("default splits", f"{EQUAL_SPLITS} equal splits")
            for cores in (1, 2)
        },
        "read 1 of 100 columns, wide, local[2]": rate(
            "wide", "ours", args.wide_rows, sizes["wide-ours"]
        ),
        f"schema inference, {INFER_FILES} files": f"{bench.median('inference', 'ours'):.2f} s",
    }
    if not args.skip_linkedin:
        rates["linkedin: count(), local[2]"] = rate("count", "linkedin")
        rates["linkedin: full read, local[2]"] = rate("full read", "linkedin")
        rates["linkedin: read 1 of 100 columns, wide"] = rate(
            "wide", "linkedin", args.wide_rows, sizes["wide-ours"]
        )
    return rates


# ---------------------------------------------------------------------------------------------
# Splitting, in a child process per core count


@dataclass
class Split:
    """What a child session measured on the single file."""

    runs: list[float]
    spent: dict[str, float]
    splits: int
    rows: int
    hash: int
    jar: str

    @property
    def median(self) -> float:
        return statistics.median(self.runs)


def split_in_child(path: Path, cores: int, split_bytes: int, args: argparse.Namespace) -> Split:
    """Reads the single file in a fresh ``local[cores]`` session; ``split_bytes`` (0: Spark's
    default) is ``spark.sql.files.maxPartitionBytes``."""
    cmd = [
        sys.executable, str(Path(__file__).resolve()), "--split-child", str(path),
        "--cores", str(cores), "--repeat", str(args.repeat), "--driver-memory", args.driver_memory,
        "--ours-jar", args.ours_jar, "--split-bytes", str(split_bytes),
    ]  # fmt: skip
    print(f"  {shlex.join(cmd)}", flush=True)
    done = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
    lines = [x for x in done.stdout.splitlines() if x.startswith(RESULT_MARK)]
    if not lines:
        raise CheckFailed(f"the local[{cores}] child printed no result:\n{done.stdout}")
    return Split(**json.loads(lines[-1][len(RESULT_MARK) :]))


def split_child(args: argparse.Namespace) -> None:
    spark = session(
        ours=args.ours_jar,
        cores=args.cores,
        memory=args.driver_memory,
        linkedin=None,
        linkedin_jar=None,
    )
    if args.split_bytes:
        spark.conf.set("spark.sql.files.maxPartitionBytes", str(args.split_bytes))
    df = spark.read.format(OURS).schema(NARROW_DDL).load(args.split_child)
    splits = df.rdd.getNumPartitions()
    # Warm-up, untimed, until the JIT is done: while it compiles it takes a core, which
    # local[1] does not miss and local[2] does.
    for _ in range(SPLIT_WARMUP):
        noop(df)
    runs, spent = timed(spark, args.repeat, lambda: noop(df))
    rows, digest = fingerprint(df)
    result = Split(runs, asdict(spent), splits, rows, digest, sha256(args.ours_jar))
    spark.stop()
    print(RESULT_MARK + json.dumps(asdict(result)), flush=True)


# ---------------------------------------------------------------------------------------------
# Where the time goes: Java Flight Recorder's samples of one full read


@dataclass
class Profile:
    """Shares of the execution samples by the method on top of the stack (self time), one by
    one and summed by what the method is part of."""

    samples: int
    self_top: list[tuple[str, float]]
    areas: list[tuple[str, float]]


# What a method on top of the stack is part of: the first prefix of its class that matches.
PROFILE_AREAS = [
    ("framing: reading records, checking their CRCs", ("io.github.sparktfrecord.TFRecordReader",
        "io.github.sparktfrecord.TFRecordFraming", "java.util.zip.CRC32C")),
    ("decoding: the wire format into the row", ("io.github.sparktfrecord.",)),
    ("Spark's row and array writers, memory copies", (
        "org.apache.spark.sql.catalyst.expressions.codegen.Unsafe", "org.apache.spark.unsafe.")),
    ("file system and streams", ("org.apache.hadoop.", "java.io.", "java.nio.", "sun.nio.")),
]  # fmt: skip


def profile_in_child(path: Path, jfr: Path, args: argparse.Namespace) -> Profile | None:
    tool = shutil.which("jfr") or (
        str(Path(os.environ["JAVA_HOME"]) / "bin" / "jfr") if "JAVA_HOME" in os.environ else None
    )
    if tool is None or not Path(tool).exists():
        print("  no `jfr` tool (JDK bin): no profile", flush=True)
        return None
    cmd = [
        sys.executable, str(Path(__file__).resolve()), "--profile-child", str(path),
        "--jfr", str(jfr), "--repeat", str(args.repeat), "--driver-memory", args.driver_memory,
        "--ours-jar", args.ours_jar,
    ]  # fmt: skip
    print(f"  {shlex.join(cmd)}", flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    printed = subprocess.run(
        [tool, "print", "--json", "--events", "jdk.ExecutionSample", str(jfr)],
        check=True, stdout=subprocess.PIPE, text=True,
    ).stdout  # fmt: skip
    return summarize(json.loads(printed)["recording"]["events"])


def summarize(events: list[dict[str, Any]]) -> Profile:
    """Counts the samples of Spark's task threads by their top frame (JFR's stacks of Spark tasks
    often stop a few frames down, so only the top frame is used)."""

    def task(event: dict[str, Any]) -> bool:
        thread = event["values"]["sampledThread"] or {}
        return str(thread.get("javaName", "")).startswith("Executor task launch worker")

    own: dict[tuple[str, str], int] = {}
    for e in filter(task, events):
        frames = e["values"]["stackTrace"]["frames"]
        if frames:
            method = frames[0]["method"]
            key = (method["type"]["name"].replace("/", "."), method["name"])
            own[key] = own.get(key, 0) + 1
    n = max(1, sum(own.values()))
    top = sorted(own.items(), key=lambda kv: -kv[1])[:15]
    areas: dict[str, int] = {}
    for (cls, _), count in own.items():
        area = next((a for a, prefixes in PROFILE_AREAS if cls.startswith(prefixes)), "other")
        areas[area] = areas.get(area, 0) + count
    order = [a for a, _ in PROFILE_AREAS] + ["other"]
    return Profile(
        sum(own.values()),
        [(f"{cls.rsplit('.', 1)[-1]}.{m}", c / n) for (cls, m), c in top],
        [(a, areas.get(a, 0) / n) for a in order],
    )


def profile_child(args: argparse.Namespace) -> None:
    spark = session(
        ours=args.ours_jar,
        cores=1,
        memory=args.driver_memory,
        linkedin=None,
        linkedin_jar=None,
        # Spark's stacks are deeper than the recorder's default 64 frames, which cuts the bottom.
        java_options="-XX:FlightRecorderOptions:stackdepth=512",
    )
    df = spark.read.format(OURS).schema(NARROW_DDL).load(args.profile_child)
    noop(df)  # warm-up, not recorded
    view = jvm(spark)
    recording = view.jdk.jfr.Recording()
    recording.enable("jdk.ExecutionSample").withPeriod(view.java.time.Duration.ofMillis(10))
    recording.start()
    for _ in range(args.repeat):
        noop(df)
    recording.stop()
    recording.dump(view.java.io.File(args.jfr).toPath())
    recording.close()
    spark.stop()


# ---------------------------------------------------------------------------------------------
# Facts, table, document, chart


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


def profile_section(profile: Profile | None) -> str:
    if profile is None:
        return "## Where the time goes\n\nNot profiled: the JDK's `jfr` tool was not found."
    areas = "\n".join(f"| {a} | {share:.0%} |" for a, share in profile.areas)
    top = "\n".join(f"| `{m}` | {share:.1%} |" for m, share in profile.self_top)
    return f"""## Where the time goes

Java Flight Recorder sampled the narrow full read in one thread (`local[1]`, after a warm-up
read): {profile.samples} samples of the task thread, one every 10 ms, counted by the method on
top of the stack.

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
    return f"""# Benchmarks

Measured by `benchmarks/run.py` on {report.facts["date"]}; every time is the median of
{args.repeat} run(s) in one local Spark session (`local[2]`) holding both TFRecord jars, each
addressed by its class name; reads, counts and inference are timed after one untimed run.
A ratio above 1 means we are faster (on the last two lines: that two cores read one file faster
than one core). The files are in the OS page cache: reads measure CPU, not disk.

```
{command}
```

{table(report.rows)}

![benchmark chart]({chart})

What each line measures:

- **write, narrow**: `df.write.format(...).save()` of the cached narrow data set
  ({PARTITIONS} files).
- **full read, narrow**: load with the known schema, write to the `noop` sink. Both TFRecord
  readers read the same files (the ones we wrote); Parquet reads its own.
- **count()**: `load(...).count()` with the known schema.
- **read 1 of 100 columns, wide**: the full 100-column schema given, `select("{WIDE_COLUMN}")`,
  `noop` sink.
- **schema inference**: `load(...)` without a schema on the narrow data written as
  {INFER_FILES} files, then `.schema` (our defaults: 32 files x 1000 records; linkedin reads the
  first non-empty file whole).
- **full read, 1 file**: one uncompressed file holding our narrow files {SINGLE_COPIES} times
  over ({SINGLE_COPIES} x {args.rows:,} rows, concatenated byte for byte), read in
  fresh sessions, `local[1]` and `local[2]` by turns ({SPLIT_ROUNDS} of each, {args.repeat}
  timed reads each after {SPLIT_WARMUP} untimed ones); the ratio is the 2-core speed-up. Its
  ceiling is the machine's own 2-core scaling (below). {split_note}

Times in brackets are the fastest and slowest of the runs: on a shared 2-core VM, expect
differences of 20 % between sessions.

## Throughput against the floor

The floor is `TFRecordFiles.countRecords` over the narrow files, one thread, from the driver:
the framing walked and both CRC32Cs checked, nothing parsed. Rates are over the TFRecord files
read: the narrow ones, or the wide ones and the single file for their lines.

| what | time and rate |
|---|---|
{rate_lines}

{profile}

## Data

Generated with Spark SQL from `spark.range`, every value a hash of the row id and a fixed
seed, so runs and partitionings give the same rows. The narrow data is cached in memory before
any write is timed; the wide data is written once, untimed, straight from its generator.

- **narrow**: `{NARROW_DDL}`;
  `emb` holds 32 floats, `ids` 0 to 20 values (some empty), `s` 5 to 15 characters.
- **wide**: 100 scalar columns `c000`..`c099`: 50 float, 30 bigint, 10 int, 10 string.

| files | size |
|---|---:|
{size_lines}

Checked on every run (the run stops before printing anything if one fails): row counts and an
order-independent hash of every value, for each format reading what it wrote, linkedin reading
our files and we reading linkedin's; `count()` results; the wide column read back; our inferred
schema; `countRecords` totals; the single file read in splits.

## Machine and versions

| | |
|---|---|
{fact_lines}

## Notes from this run

{notes}

## How to reproduce

```bash
ci/bench                                   # builds jars + wheel, Spark 3.5 venv, default sizes
ci/bench --rows 20000 --repeat 1 --docs /tmp/bench-docs   # a quick try that keeps docs/ as is
```

`ci/bench` passes its arguments to `benchmarks/run.py` (`--help` lists them). Without
`--linkedin-jar`, Spark is asked for `{LINKEDIN_PACKAGE}`; that artifact is not on Maven
Central, so give linkedin's jar with `--linkedin-jar PATH`, or leave it out with
`--skip-linkedin`. Raw timings of every run go to `OUT/results.json`.
"""


def draw(report: Report, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report.rows
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
    left.set_xlabel("seconds (median), lower is better")
    left.legend(loc="lower right", fontsize=8)
    ratios = [r.ratio for r in rows]
    colors = ["#2ca02c" if x >= 1 else "#d62728" for x in ratios]
    right.barh(y, ratios, color=colors)
    right.axvline(1.0, color="black", linewidth=0.8)
    right.set_yticks(y, [""] * len(rows))
    right.invert_yaxis()
    right.set_xlabel("their time / our time (1-core / 2-core for splitting), higher is better")
    for i, x in zip(y, ratios):
        right.text(x, i, f" {x:.2f}x", va="center", fontsize=8)
    fig.suptitle(
        f"spark-tfrecord, {report.facts['narrow rows']} narrow rows, "
        f"{report.facts['cores (nproc)']} cores, pyspark {report.facts['pyspark']}",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="benchmarks/run.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rows", type=int, default=2_000_000, help="narrow rows (2000000)")
    parser.add_argument(
        "--wide-rows", type=int, default=None, help="wide (100-column) rows (as many as --rows)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (3)")
    parser.add_argument(
        "--out", default=str(ROOT / ".cache" / "bench"), help="data directory (.cache/bench)"
    )
    parser.add_argument(
        "--docs", default=str(ROOT / "docs"), help="where benchmarks.md and .png go (docs/)"
    )
    parser.add_argument("--skip-linkedin", action="store_true", help="leave linkedin out")
    parser.add_argument(
        "--linkedin-jar",
        help=f"a local linkedin jar instead of resolving {LINKEDIN_PACKAGE} from Maven Central",
    )
    parser.add_argument("--driver-memory", default="8g", help="spark.driver.memory (8g)")
    parser.add_argument("--split-child", help=argparse.SUPPRESS)
    parser.add_argument("--profile-child", help=argparse.SUPPRESS)
    parser.add_argument("--jfr", help=argparse.SUPPRESS)
    parser.add_argument("--cores", type=int, default=2, help=argparse.SUPPRESS)
    parser.add_argument("--split-bytes", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--ours-jar", help="our jar to measure (the installed wheel's)")
    parser.add_argument(
        "--note", action="append", default=[], help="a line for the notes of benchmarks.md"
    )
    args = parser.parse_args(argv)
    if args.wide_rows is None:
        args.wide_rows = args.rows
    if min(args.rows, args.wide_rows, args.repeat) < 1:
        parser.error("--rows, --wide-rows and --repeat must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if args.split_child:
        split_child(args)
        return 0
    if args.profile_child:
        profile_child(args)
        return 0
    import matplotlib  # noqa: F401  (fail now, not after twenty minutes)

    started = time.perf_counter()
    report = run_all(args)
    report.facts["harness wall time"] = f"{time.perf_counter() - started:.0f} s"
    report.facts["load average at end"] = load_average()
    command = shlex.join(["benchmarks/run.py", *(sys.argv[1:] if argv is None else argv)])
    print("\n" + table(report.rows))
    print("\n" + "\n".join(f"{k}: {v}" for k, v in report.throughput.items()))
    for note in report.notes:
        print(f"note: {note}")
    docs = Path(args.docs)
    docs.mkdir(parents=True, exist_ok=True)
    draw(report, docs / "benchmarks.png")
    (docs / "benchmarks.md").write_text(document(report, args, command, "benchmarks.png"))
    print(f"\nwrote {docs / 'benchmarks.md'} and {docs / 'benchmarks.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
