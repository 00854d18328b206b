"""Where the CPU of a ``spark_tfrecord.ray.read`` goes: Ray's own processes and per-task work
against our decode (its framing: reading records and checking their CRCs; its columns: the
Arrow arrays of ``_source/batch_arrays.py``), on narrow records.

    .cache/venv/spark-4/bin/python benchmarks/ray_overhead.py [--data DIR] [--rows N]

Spark (``local[2]``, the jar) writes ``--rows`` narrow rows (``NARROW_DDL``) in ``--files`` files
under ``--data`` unless an earlier run wrote them. Then, in this process with no Ray, the read's
tasks (planned as Ray's read plans them) run one after the other, timed by CPU clock: the
framing alone, the framing and the columns, and the whole read (Arrow tables too). Then a local
Ray cluster (``ray.init(num_cpus=2)``) reads the folder, the DDL given, consumed as Arrow on the
driver, with Ray's choice of blocks and with ``override_num_blocks=2``; each run's CPU seconds
are summed over every process of the session (driver, raylet, GCS, workers; psutil), so that
other work on the machine does not count. Ray's share is the session's CPU less the decode's.
Medians of ``--repeat`` runs, after one untimed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tfrbench.data import NARROW_DDL, narrow

# This folder holds ray.py: with it on the path, `import ray` would import that.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

#: Ray's planning asks for many blocks; the read plans its tasks for that many (Spark's split
#: sizes): what the in-process decode runs, so that both do the same work.
PLANNED = 200


def write(folder: Path, rows: int, files: int) -> None:
    if (folder / "_SUCCESS").is_file():
        return
    from pyspark.sql import SparkSession

    import spark_tfrecord

    spark = spark_tfrecord.configure(
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    ).getOrCreate()
    narrow(spark, rows, files).write.format("tfrecord").mode("overwrite").save(str(folder))
    spark.stop()


def median_cpu(f: Callable[[], object], repeat: int) -> float:
    f()
    spent = []
    for _ in range(repeat):
        started = time.process_time()
        f()
        spent.append(time.process_time() - started)
    return statistics.median(spent)


def decode(folder: Path, repeat: int) -> dict[str, float]:
    """CPU seconds of the read's tasks run here, one after the other, with no Ray."""
    import numpy as np
    import pyarrow as pa

    from spark_tfrecord._source.arrow_read import prepare

    read = prepare(str(folder), NARROW_DDL, {}, None, "ray_overhead")
    tasks = read.tasks(PLANNED)
    fast = read.columns()[3]
    assert fast is not None, "the narrow records take the batch path"
    slices = [s for t in tasks for s in t.slices]

    def framing() -> None:
        for s in slices:
            for _ in read.chunks(s):
                pass

    def columns() -> None:
        for s in slices:
            for buf, starts, stops, _ in read.chunks(s):
                fast.arrays(buf, np.array(starts, np.int64), np.array(stops, np.int64))

    def whole() -> None:
        for t in tasks:
            for b in read.read(t):
                pa.Table.from_batches([b], read.target)

    return {
        "framing": median_cpu(framing, repeat),
        "framing and columns": median_cpu(columns, repeat),
        "whole read": median_cpu(whole, repeat),
    }


def cpu_by_process() -> dict[str, float]:
    """CPU seconds so far of this process and each below it (Ray's), by role."""
    import psutil

    me = psutil.Process()
    spent: dict[str, float] = {}
    for p in [me, *me.children(recursive=True)]:
        try:
            times, name = p.cpu_times(), p.name()
            words = " ".join(p.cmdline()[:3])
        except psutil.Error:
            continue
        role = "driver" if p.pid == me.pid else name
        if name.startswith("ray::") or "default_worker" in words:
            role = "workers"
        spent[role] = spent.get(role, 0.0) + times.user + times.system
    return spent


def ray_reads(folder: Path, repeat: int) -> dict[str, dict[str, float]]:
    """Per way of reading: the median wall seconds and CPU seconds by role."""
    import ray

    import spark_tfrecord.ray as tfr_ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    ways: dict[str, dict[str, Any]] = {
        "Ray's choice of blocks": {},
        "override_num_blocks=2": {"override_num_blocks": 2},
    }
    out = {}
    for name, kwargs in ways.items():

        def consume(kwargs: dict[str, Any] = kwargs) -> int:
            ds = tfr_ray.read(str(folder), NARROW_DDL, **kwargs)
            batches = ds.iter_batches(batch_size=None, batch_format="pyarrow")
            return sum(b.num_rows for b in batches)

        consume()
        runs: list[dict[str, float]] = []
        for _ in range(repeat):
            before, started = cpu_by_process(), time.perf_counter()
            consume()
            wall = time.perf_counter() - started
            time.sleep(0.5)  # the workers' last CPU accounted
            after = cpu_by_process()
            run = {k: v - before.get(k, 0.0) for k, v in after.items()}
            runs.append({"wall": wall, **run})
        keys = {k for r in runs for k in r}
        out[name] = {k: statistics.median(r.get(k, 0.0) for r in runs) for k in keys}
    ray.shutdown()
    return out


def report(rows: int, ours: dict[str, float], ray: dict[str, dict[str, float]]) -> list[str]:
    framing, decoded = ours["framing"], ours["whole read"]
    lines = [
        f"{rows:,} narrow rows; our decode alone, CPU s: framing {framing:.2f}, framing and "
        f"columns {ours['framing and columns']:.2f}, whole read {decoded:.2f} "
        f"({rows / decoded:,.0f} rows per CPU s)",
    ]
    for name, r in ray.items():
        total = sum(v for k, v in r.items() if k != "wall")
        share = max(total - decoded, 0.0)
        roles = ", ".join(f"{k} {v:.2f}" for k, v in sorted(r.items()) if k != "wall" and v > 0.01)
        lines.append(
            f"Ray, {name}: {r['wall']:.2f} s wall ({rows / r['wall']:,.0f} rows/s), "
            f"{total:.2f} CPU s ({roles}): our decode {decoded / total:.0%} (framing "
            f"{framing / total:.0%}, columns {(decoded - framing) / total:.0%}), Ray's "
            f"{share / total:.0%}"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=".cache/bench-ray-overhead", help="the data's folder")
    parser.add_argument("--rows", type=int, default=200_000, help="narrow rows")
    parser.add_argument("--files", type=int, default=4, help="files")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per measurement")
    args = parser.parse_args()
    folder = Path(args.data) / f"narrow-{args.rows}-{args.files}"
    write(folder, args.rows, args.files)
    import ray

    ours = decode(folder, args.repeat)
    ray_runs = ray_reads(folder, args.repeat)
    print(f"Ray {ray.__version__}")
    print("\n".join(report(args.rows, ours, ray_runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
