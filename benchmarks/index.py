"""Indexing throughput: ``spark-tfrecord index`` against the ``tfrecord`` package's indexer.

    python benchmarks/index.py [--file BIG.tfrecord] [--gb 1.0] [--repeat 3]

Without ``--file`` it writes one uncompressed file of at least ``--gb`` GB of narrow records
(under ``.cache/bench-index``, kept for the next run). It then times, on a warm page cache,
``spark-tfrecord index FILE --master local[2]`` as a user runs it (JVM start included), the
listing and Spark job, and the task that indexes the file (the last two as the command reports
them), each the median of ``--repeat`` runs, and the
``tfrecord`` package's ``create_index`` (pure Python, what PyTorch users run today) once; checks
that both indexes are the same bytes, and prints MB/s and the ratio.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tfrbench.data import ROOT
from tfrbench.timing import interleaved, timed

CLI = [sys.executable, "-m", "spark_tfrecord"]


def make_file(directory: Path, gigabytes: float) -> Path:
    """One uncompressed file of narrow records (about 330 bytes each), written by Spark."""
    target = directory / "big.tfrecord"
    if target.exists() and target.stat().st_size >= gigabytes * 1e9:
        return target
    from pyspark.sql import SparkSession

    import spark_tfrecord

    builder = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    spark = spark_tfrecord.configure(builder).getOrCreate()
    rows = int(gigabytes * 1e9 / 300) + 1
    df = spark.range(rows).selectExpr(
        "id",
        "cast(id % 1000 as int) as label",
        "array(cast(id as float), 0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f) as x",
        "array(id, id + 1, id + 2, id + 3, id + 4, id + 5, id + 6, id + 7) as ids",
        "concat('user-', cast(id % 100000 as string), '-', repeat('x', 120)) as name",
        "cast(id % 7 as double) as score",
    )
    out = directory / "spark"
    spark_tfrecord.write(df.coalesce(1), str(out), mode="overwrite")
    spark.stop()
    (written,) = [p for p in out.iterdir() if p.name.endswith(".tfrecord")]
    written.replace(target)
    shutil.rmtree(out)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, help="an uncompressed TFRecord file to index")
    parser.add_argument("--gb", type=float, default=1.0, help="size of the file to make")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of our command")
    args = parser.parse_args()
    work = ROOT / ".cache" / "bench-index"
    work.mkdir(parents=True, exist_ok=True)
    source = args.file or make_file(work, args.gb)
    # Indexes are written beside the file: index a link to it in a directory of our own.
    data = work / "data" / source.name
    data.parent.mkdir(exist_ok=True)
    if not data.exists():
        os.link(source, data)
    size = data.stat().st_size
    subprocess.run(["cat", str(data)], stdout=subprocess.DEVNULL, check=True)  # warm the cache

    ours = data.parent / f"_{data.name}.idx"
    reported: list[tuple[float, float]] = []  # the job's and the task's seconds, as printed

    def index() -> None:
        done = subprocess.run(
            [*CLI, "index", str(data), "--master", "local[2]"], capture_output=True, text=True
        )
        if done.returncode != 0:
            sys.exit(done.stderr)
        found = re.search(r"in ([\d.]+) s \(.*; ([\d,.]+) MB/s per task", done.stdout)
        assert found, done.stdout
        reported.append(
            (float(found.group(1)), size / 1e6 / float(found.group(2).replace(",", "")))
        )

    runs, _ = interleaved(None, args.repeat, {"command": index}, warmup=1)
    command = statistics.median(runs["command"])
    job, task = (statistics.median(r[i] for r in reported[1:]) for i in (0, 1))

    theirs = work / "theirs.idx"
    create_index = [
        sys.executable,
        "-c",
        "import sys; from tfrecord.tools.tfrecord2idx import create_index; "
        "create_index(sys.argv[1], sys.argv[2])",
        str(data),
        str(theirs),
    ]
    package = timed(None, 1, lambda: subprocess.run(create_index, check=True))[0][0]
    same = ours.read_bytes() == theirs.read_bytes()
    records = ours.read_bytes().count(b"\n")

    def rate(seconds: float) -> str:
        return f"{size / 1e6 / seconds:,.0f} MB/s"

    print(f"file: {data.name}, {size:,} bytes, {records:,} records")
    print(f"spark-tfrecord index (command, JVM start included): {command:.2f} s, {rate(command)}")
    print(f"spark-tfrecord index (listing and Spark job):        {job:.2f} s, {rate(job)}")
    print(f"spark-tfrecord index (the task indexing the file):   {task:.2f} s, {rate(task)}")
    print(f"tfrecord package create_index (Python):             {package:.2f} s, {rate(package)}")
    print(
        f"ratio: command {package / command:.1f}x, job {package / job:.1f}x, "
        f"task {package / task:.1f}x faster"
    )
    print(f"same index bytes: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
