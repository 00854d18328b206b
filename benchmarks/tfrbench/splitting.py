"""Fresh sessions in child processes of their own: the single file read with ``local[1]`` or
``local[2]`` (splitting), and the narrow files read with ``local[1]`` by us and by Parquet."""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .checks import fingerprint
from .child import emit, run, script
from .data import NARROW_DDL
from .sessions import OURS, load, noop, session, sha256, short
from .timing import interleaved

# The single file is also read in this many equal splits: an even count keeps both cores busy.
EQUAL_SPLITS = 8
# Child sessions per core count and split layout, alternating 1 and 2 cores.
SPLIT_ROUNDS = 3
# Untimed reads of the single file in each child session before the timed ones.
SPLIT_WARMUP = 3

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


def split_in_child(path: Path, cores: int, split_bytes: int, args: argparse.Namespace) -> Split:
    """Reads the single file in a fresh ``local[cores]`` session; ``split_bytes`` (0: Spark's
    default) is ``spark.sql.files.maxPartitionBytes``."""
    cmd = script(
        "run", "--split-child", str(path),
        "--cores", str(cores), "--repeat", str(args.repeat), "--driver-memory", args.driver_memory,
        "--ours-jar", args.ours_jar, "--split-bytes", str(split_bytes),
    )  # fmt: skip
    return Split(**run(cmd))


def split_child(args: argparse.Namespace) -> None:
    """The child's side of ``split_in_child``: emits its ``Split``."""
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
    runs, spent = interleaved(spark, args.repeat, {"": lambda: noop(df)}, warmup=SPLIT_WARMUP)
    rows, digest = fingerprint(df)
    result = Split(runs[""], asdict(spent[""]), splits, rows, digest, sha256(args.ours_jar))
    spark.stop()
    emit(result)


#: The ``local[1]`` child's read of the narrow files as ``recordType`` ByteArray.
BYTE_ARRAY = "bytearray"


@dataclass
class OneCore:
    """What the ``local[1]`` child measured on the narrow files: runs, usage and what was read
    (row count and hash), by format."""

    runs: dict[str, list[float]]
    spent: dict[str, dict[str, float]]
    read: dict[str, list[int]]


def one_core_in_child(out: Path, args: argparse.Namespace) -> OneCore:
    """The narrow full read, ours and Parquet's, and ours of the same files as ByteArray records
    (Spark's row floor), taking turns in a fresh ``local[1]`` session."""
    cmd = script(
        "run", "--one-core-child", str(out),
        "--repeat", str(args.repeat), "--driver-memory", args.driver_memory,
        "--ours-jar", args.ours_jar,
    )  # fmt: skip
    return OneCore(**run(cmd))


def to_noop(df: DataFrame) -> Callable[[], object]:
    return lambda: noop(df)


def one_core_child(args: argparse.Namespace) -> None:
    """The child's side of ``one_core_in_child``: emits its ``OneCore``."""
    spark = session(
        ours=args.ours_jar, cores=1, memory=args.driver_memory, linkedin=None, linkedin_jar=None
    )
    out = Path(args.one_core_child)
    frames = {
        short(OURS): load(spark, OURS, NARROW_DDL, out / "narrow-ours"),
        "parquet": load(spark, "parquet", NARROW_DDL, out / "narrow-parquet"),
        # Spark's row floor for these files: the same records as rows of their bytes, framed
        # and checked as the full read frames them, with no decoding.
        BYTE_ARRAY: spark.read.format(OURS)
        .option("recordType", "ByteArray")
        .load(str(out / "narrow-ours")),
    }
    actions = {name: to_noop(df) for name, df in frames.items()}
    runs, spent = interleaved(spark, args.repeat, actions, warmup=SPLIT_WARMUP)
    read = {name: list(fingerprint(df)) for name, df in frames.items()}
    spark.stop()
    emit(OneCore(runs, {k: asdict(u) for k, u in spent.items()}, read))
