"""``spark-tfrecord index``: the index file of each TFRecord file, for PyTorch and DALI."""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable, Iterator
from typing import Any

from spark_tfrecord._format.files.files import Files, LocalFiles, is_url, local_path
from spark_tfrecord.cli.common import EXIT_NOT_FOUND, CliError, fsspec_files, session


def run(args: argparse.Namespace) -> int:
    targets: list[tuple[str, Files]] = []
    for path in args.paths:
        if not is_url(path):
            targets.append((local_path(path), LocalFiles()))
            continue
        files = fsspec_files(path)
        if files is None:  # no fsspec file system for it (s3a://, hdfs://): Spark indexes
            return _index_spark(args)
        targets.append((path, files))
    return _index_python(args, targets)


def _index_spark(args: argparse.Namespace) -> int:
    """``index`` by Spark's tasks, one per file (the jar's ``TFRecordIndex``)."""
    spark = session(args.master, args.conf)
    options = {"compression": args.compression} if args.compression else {}
    jvm: Any = spark._jvm
    start = time.perf_counter()
    lines = jvm.io.github.sparktfrecord.tools.TFRecordIndex.indexFiles(
        spark._jsparkSession, list(args.paths), options
    )
    end = time.perf_counter()
    rows = (str(line).split("\t", 3) for line in lines)
    indexed = ((int(count), int(size), int(took), path) for count, size, took, path in rows)
    return _report(args, indexed, start, end)


def _report(
    args: argparse.Namespace,
    indexed: Iterable[tuple[int, int, int, str]],
    start: float,
    end: float | None = None,
) -> int:
    """Print each file's (records, bytes, nanoseconds, path) as it comes, then the totals."""
    from spark_tfrecord import index_path

    files = records = total = nanos = 0
    for count, size, took, path in indexed:
        files += 1
        records += count
        total += size
        nanos += took
        print(f"{count:>12,} records {size:>16,} bytes  {index_path(path)}")
    if files == 0:
        raise CliError(
            f"no TFRecord files under {', '.join(args.paths)}",
            "is it the right path?",
            EXIT_NOT_FOUND,
        )
    seconds = (end or time.perf_counter()) - start
    print(
        f"indexed {files} files: {records:,} records, {total:,} bytes in {seconds:.1f} s "
        f"({total / 1e6 / max(seconds, 1e-9):,.1f} MB/s; "
        f"{total / 1e6 / max(nanos / 1e9, 1e-9):,.1f} MB/s per task)"
    )
    return 0


HELP = "write index files for PyTorch and DALI"
DESCRIPTION = (
    "Write beside each TFRecord file under PATH its index _<name>.idx (one line "
    "per record: offset and framed size), as the tfrecord package (PyTorch) and NVIDIA DALI "
    "read it; what the writeIndex option writes. Both CRCs of every record checked. Files "
    "are found as Spark finds them (directories, globs, partitions). Local paths and "
    "fsspec URLs (s3://, gs://, with s3fs or gcsfs installed; each index one PUT) are "
    "indexed in plain Python, one file after another, with no JVM; other paths (s3a://, "
    "hdfs://) by Spark, one task per file."
)


def add_arguments(index: argparse.ArgumentParser) -> None:
    index.add_argument("paths", nargs="+", metavar="PATH", help="TFRecord file, directory or glob")
    index.add_argument(
        "--compression",
        choices=("none", "gzip"),
        help="for files without a .gz extension (TensorFlow's GZIP shards): offsets are then "
        "in the uncompressed stream, as the tfrecord package's compression_type='gzip' reads",
    )


def _index_python(args: argparse.Namespace, targets: list[tuple[str, Files]]) -> int:
    """``index`` of local paths and fsspec URLs in plain Python, reporting as Spark does."""
    from spark_tfrecord._format.datasets import folders

    found = {f.path: fs for path, fs in targets for f in folders.list_files_in(path, fs)}
    for path in sorted(found):  # refused before any index is written, as Spark's job does
        folders.index_compression(path, args.compression, found[path])

    def indexed() -> Iterator[tuple[int, int, int, str]]:
        for path in sorted(found):
            began = time.perf_counter_ns()
            count, size = folders.write_index(path, args.compression, found[path])
            yield count, size, time.perf_counter_ns() - began, path

    return _report(args, indexed(), time.perf_counter())
