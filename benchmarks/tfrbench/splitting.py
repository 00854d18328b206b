"""Fresh sessions in child processes of their own: the single file read with ``local[1]`` or
``local[2]`` (splitting), and the narrow files read with ``local[1]`` by us and by Parquet."""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .checks import CheckFailed, fingerprint
from .data import NARROW_DDL
from .sessions import OURS, child_command, load, noop, session, sha256, short
from .timing import interleaved, timed

# The single file is also read in this many equal splits: an even count keeps both cores busy.
EQUAL_SPLITS = 8
# Child sessions per core count and split layout, alternating 1 and 2 cores.
SPLIT_ROUNDS = 3
# Untimed reads of the single file in each child session before the timed ones.
SPLIT_WARMUP = 3
RESULT_MARK = "BENCH-RESULT "

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


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
    cmd = child_command(
        "--split-child", str(path),
        "--cores", str(cores), "--repeat", str(args.repeat), "--driver-memory", args.driver_memory,
        "--ours-jar", args.ours_jar, "--split-bytes", str(split_bytes),
    )  # fmt: skip
    print(f"  {shlex.join(cmd)}", flush=True)
    done = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
    lines = [x for x in done.stdout.splitlines() if x.startswith(RESULT_MARK)]
    if not lines:
        raise CheckFailed(f"the local[{cores}] child printed no result:\n{done.stdout}")
    return Split(**json.loads(lines[-1][len(RESULT_MARK) :]))


def split_child(args: argparse.Namespace) -> None:
    """The child's side of ``split_in_child``: prints its ``Split`` after ``RESULT_MARK``."""
    spark = session(
        ours=args.ours_jar,
        cores=args.cores,
        memory=args.driver_memory,
        linkedin=None,
        linkedin_jar=None,
    )
    if args.split_bytes:
        spark.conf.set("spark.sql.files.maxPartitionBytes", str(args.split_bytes))
    df = load(spark, OURS, NARROW_DDL, args.split_child)
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


@dataclass
class OneCore:
    """What the ``local[1]`` child measured on the narrow files: runs, usage and what was read
    (row count and hash), by format."""

    runs: dict[str, list[float]]
    spent: dict[str, dict[str, float]]
    read: dict[str, list[int]]


def one_core_in_child(out: Path, args: argparse.Namespace) -> OneCore:
    """The narrow full read, ours and Parquet's taking turns, in a fresh ``local[1]`` session."""
    cmd = child_command(
        "--one-core-child", str(out),
        "--repeat", str(args.repeat), "--driver-memory", args.driver_memory,
        "--ours-jar", args.ours_jar,
    )  # fmt: skip
    print(f"  {shlex.join(cmd)}", flush=True)
    done = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
    lines = [x for x in done.stdout.splitlines() if x.startswith(RESULT_MARK)]
    if not lines:
        raise CheckFailed(f"the local[1] child printed no result:\n{done.stdout}")
    return OneCore(**json.loads(lines[-1][len(RESULT_MARK) :]))


def to_noop(df: DataFrame) -> Callable[[], object]:
    return lambda: noop(df)


def one_core_child(args: argparse.Namespace) -> None:
    """The child's side of ``one_core_in_child``: prints its ``OneCore`` after ``RESULT_MARK``."""
    spark = session(
        ours=args.ours_jar, cores=1, memory=args.driver_memory, linkedin=None, linkedin_jar=None
    )
    out = Path(args.one_core_child)
    frames = {
        OURS: load(spark, OURS, NARROW_DDL, out / "narrow-ours"),
        "parquet": load(spark, "parquet", NARROW_DDL, out / "narrow-parquet"),
    }
    actions = {short(fmt): to_noop(df) for fmt, df in frames.items()}
    for _ in range(SPLIT_WARMUP):
        for action in actions.values():
            action()
    runs, spent = interleaved(spark, args.repeat, actions)
    read = {short(fmt): list(fingerprint(df)) for fmt, df in frames.items()}
    result = OneCore(runs, {k: asdict(u) for k, u in spent.items()}, read)
    spark.stop()
    print(RESULT_MARK + json.dumps(asdict(result)), flush=True)
