"""The epochs: each loader's, timed in turns after a warm-up round, each one checked (every id
once, the sums Spark computed). Ours and the ``tfrecord`` package's run in a child process
with no JVM, as in a trainer; Petastorm's in the Spark driver, which its converter needs, with
ours timed again beside it."""

from __future__ import annotations

import contextlib
import math
import platform
import sys
from collections.abc import Iterable
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Callable

from tfrbench.checks import CheckFailed
from tfrbench.timing import interleaved

from .batches import (
    LARGE_BATCH,
    CheckedRead,
    Checksums,
    MemoryCopy,
    Petastorm,
    ours,
    tfrecord_package,
    total,
)
from .data import DataSet

#: The loaders' names, and the worker processes each reads with (the DataLoader's workers, or
#: the process itself). The loaders with workers persist across epochs: the warm-up round
#: starts them.
IN_ORDER, SHUFFLED, PACKAGE = "ours, in order", "ours, shuffled", "tfrecord package"
#: Narrow records in batches of LARGE_BATCH, ours in order and the package's.
IN_ORDER_LARGE = f"ours, in order, batches of {LARGE_BATCH}"
PACKAGE_LARGE = f"tfrecord package, batches of {LARGE_BATCH}"
ONE_WORKER, TWO_WORKERS = "ours, shuffled, 1 worker", "ours, shuffled, 2 workers"
PETASTORM, OURS_BESIDE = "petastorm", "ours, in order, beside Spark"
PETASTORM_2, OURS_BESIDE_2 = "petastorm, 2 threads", "ours, in order, 2 workers, beside Spark"
#: The ceiling (image-sized records): a memory copy of the bytes read, in the same run.
MEMORY_COPY = "memory copy of the same bytes"
#: What bounds a checked read of bytes values below that ceiling: one copy out of the page cache
#: and the checksums (batches.CheckedRead).
CHECKED_READ = "one pread and the checksums"
#: What bounds every checked read: the checksums alone, over the bytes in memory
#: (batches.Checksums).
CHECKSUMS = "the checksums alone"
WORKERS = {IN_ORDER: 1, SHUFFLED: 1, PACKAGE: 1, ONE_WORKER: 1, TWO_WORKERS: 2, PETASTORM: 1}
WORKERS.update({IN_ORDER_LARGE: 1, PACKAGE_LARGE: 1})
WORKERS.update({OURS_BESIDE: 1, PETASTORM_2: 1, OURS_BESIDE_2: 2, MEMORY_COPY: 1})
WORKERS[CHECKED_READ] = WORKERS[CHECKSUMS] = 1


def epoch(batches: Callable[[], Iterable[dict[str, Any]]], data: DataSet, loader: str) -> None:
    """One pass over ``batches()``; raises CheckFailed unless it gave every record once with
    the values Spark wrote."""
    seen: list[int] = []
    value = 0.0
    for batch in batches():
        ids, v = total(batch, data.name)
        seen += ids
        value += v
    if len(seen) != data.records or sorted(seen) != list(range(data.records)):
        raise CheckFailed(f"{loader} on {data.name}: {len(seen)} ids, not each of {data.records}")
    if not math.isclose(value, data.total, rel_tol=1e-9, abs_tol=1e-3):
        raise CheckFailed(f"{loader} on {data.name}: values sum to {value!r}, not {data.total!r}")


def timed(
    loaders: dict[str, Callable[[], Iterable[dict[str, Any]]]],
    data: DataSet,
    repeat: int,
    unchecked: dict[str, Callable[[], object]] | None = None,
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Each loader's seconds per checked epoch, the loaders taking turns after a warm-up round
    (with the ``unchecked`` actions, which give no batches: the memory copy), and the cores
    other processes used meanwhile."""
    actions = {name: partial(epoch, batches, data, name) for name, batches in loaders.items()}
    actions.update(unchecked or {})
    runs, spent = interleaved(None, repeat, actions, warmup=1)
    return runs, {k: u.others for k, u in spent.items()}


def child(sets: dict[str, DataSet], repeat: int) -> dict[str, Any]:
    """The child's measurements: per data set, each loader's seconds per epoch."""
    result: dict[str, Any] = {"sets": {}, "versions": versions()}
    for name, data in sets.items():
        print(f"  {name}: {data.records:,} records", file=sys.stderr, flush=True)
        in_order, shuffled = ours(data.path, shuffle=False), ours(data.path, shuffle=True)
        loaders = {
            IN_ORDER: lambda loader=in_order: loader,
            SHUFFLED: lambda loader=shuffled: loader,
            PACKAGE: partial(tfrecord_package, data.path, data.name),
        }
        if name == "narrow":
            large = ours(data.path, shuffle=False, batch=LARGE_BATCH)
            loaders[IN_ORDER_LARGE] = lambda loader=large: loader
            loaders[PACKAGE_LARGE] = partial(tfrecord_package, data.path, data.name, LARGE_BATCH)
        runs, others = timed(
            loaders,
            data,
            repeat,
            {
                MEMORY_COPY: MemoryCopy(data.path).epoch,
                CHECKED_READ: CheckedRead(data.path).epoch,
                CHECKSUMS: Checksums(data.path).epoch,
            }
            if name == "image"
            else None,
        )
        one = ours(data.path, shuffle=True, workers=1)
        two = ours(data.path, shuffle=False, workers=2)
        scaling, scaling_others = timed(
            {ONE_WORKER: lambda loader=one: loader, TWO_WORKERS: lambda loader=two: loader},
            data,
            repeat,
        )
        del one, two  # their workers end
        result["sets"][name] = {
            "runs": {**runs, **scaling},
            "others": {**others, **scaling_others},
        }
    return result


def beside_spark(
    spark: Any, sets: dict[str, DataSet], frames: dict[str, Any], cache: str, repeat: int
) -> dict[str, Any]:
    """Petastorm's loader against ours, both in the driver's process, per data set; a set
    Petastorm fails on is reported with its error (a peer's failure is a finding)."""
    result: dict[str, Any] = {}
    for name, data in sets.items():
        try:
            peta = Petastorm(spark, frames[name], cache)
        except Exception as e:
            result[name] = {"error": f"{type(e).__name__}: {str(e)[:500]}"}
            continue
        in_order = ours(data.path, shuffle=False)
        two = ours(data.path, shuffle=False, workers=2)
        try:
            runs, others = timed(
                {
                    OURS_BESIDE: lambda loader=in_order: loader,
                    PETASTORM: peta.epoch,
                    OURS_BESIDE_2: lambda loader=two: loader,
                    PETASTORM_2: partial(peta.epoch, 2),
                },
                data,
                repeat,
            )
            result[name] = {"runs": runs, "others": others, "empty": peta.empty}
        except Exception as e:
            result[name] = {"error": f"{type(e).__name__}: {str(e)[:500]}"}
        finally:
            del two  # its workers end
            peta.delete()
    return result


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in ("torch", "numpy", "tfrecord", "protobuf", "petastorm", "spark-tfrecord"):
        with contextlib.suppress(PackageNotFoundError):
            found[package] = version(package)
    return found
