"""Splitting: the single file read in a fresh ``local[1]`` or ``local[2]`` session, each in a
child process of its own."""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

from .checks import CheckFailed, fingerprint
from .data import NARROW_DDL
from .sessions import OURS, child_command, load, noop, session, sha256
from .timing import timed

# The single file is also read in this many equal splits: an even count keeps both cores busy.
EQUAL_SPLITS = 8
# Child sessions per core count and split layout, alternating 1 and 2 cores.
SPLIT_ROUNDS = 3
# Untimed reads of the single file in each child session before the timed ones.
SPLIT_WARMUP = 3
RESULT_MARK = "BENCH-RESULT "


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
