"""The measurement harness: the wall clock and CPU time of timed runs, actions taking turns, and
``Bench``, which keeps every measurement's runs. Every benchmark times through ``interleaved``."""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TypeVar

from .sessions import gc, jvm, load, short

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# The key of an action timed with others: (measurement, format) in ``Bench``.
K = TypeVar("K")


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


def machine_busy() -> float:
    """Seconds of busy CPU of the whole machine since boot."""
    cpu = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    busy = sum(cpu) - cpu[3] - cpu[4]  # all but idle and iowait
    return busy / os.sysconf("SC_CLK_TCK")


def process_usage() -> Usage:
    """``Usage`` of a process without a JVM (the tf.data child): its own CPU, all threads."""
    return Usage(time.monotonic(), machine_busy(), time.process_time(), 0.0)


def usage(spark: SparkSession) -> Usage:
    tick = os.sysconf("SC_CLK_TCK")
    view = jvm(spark)
    pid = view.java.lang.ProcessHandle.current().pid()
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    jvm_cpu = (int(stat[11]) + int(stat[12])) / tick  # utime and stime, fields 14 and 15
    beans = view.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
    gc_ms = sum(bean.getCollectionTime() for bean in beans)
    return Usage(time.monotonic(), machine_busy(), jvm_cpu + time.process_time(), gc_ms / 1000)


def timed(
    spark: SparkSession | None, repeat: int, action: Callable[[], object]
) -> tuple[list[float], Usage]:
    """Wall-clock seconds of each of ``repeat`` runs (each after a JVM garbage collection), and
    what was used during them; with ``spark`` None, of this process, which has no JVM."""
    runs, spent = interleaved(spark, repeat, {"": action})
    return runs[""], spent[""]


def interleaved(
    spark: SparkSession | None,
    repeat: int,
    actions: dict[K, Callable[[], object]],
    *,
    warmup: int = 0,
    rotate: bool = False,
    after: Callable[[], object] | None = None,
) -> tuple[dict[K, list[float]], dict[K, Usage]]:
    """``warmup`` untimed rounds (the JIT is still compiling a query's code during its first
    runs), then ``repeat`` rounds, each running every action once in turn (ours, then Parquet,
    then linkedin, say; with ``rotate``, each round starting one further on), so that a slow
    spell of the machine falls on all of them alike: the wall-clock seconds of each action's
    runs, and what was used during them. ``after`` runs, untimed, after every action (to delete
    what it wrote). Each run follows a JVM garbage collection; with ``spark`` None, usage is
    this process's, which has no JVM."""

    def now() -> Usage:
        return process_usage() if spark is None else usage(spark)

    runs: dict[K, list[float]] = {key: [] for key in actions}
    spent = {key: Usage(0.0, 0.0, 0.0, 0.0) for key in actions}
    keys = list(actions)
    for round_ in range(warmup + repeat):
        shift = round_ % len(keys) if rotate else 0
        for key in keys[shift:] + keys[:shift]:
            if spark is not None:
                gc(spark)
            before = now()
            start = time.perf_counter()
            actions[key]()
            seconds = time.perf_counter() - start
            if round_ >= warmup:
                runs[key].append(seconds)
                spent[key] = spent[key] + (now() - before)
            if after is not None:
                after()
    return runs, spent


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

    def time(self, what: str, fmt: str, action: Callable[[], object]) -> None:
        """Times ``repeat`` runs of ``action`` after an untimed one."""
        self.compare({(what, fmt): action})

    def compare(
        self, actions: dict[tuple[str, str], Callable[[], object]], *, at_least: int = 0
    ) -> None:
        """Times the ``actions``, keyed by (measurement, format), interleaved after one untimed
        round: ``--repeat`` rounds, or ``at_least`` when that is more (reads of a second or
        less, whose medians of three moved by a third between runs)."""
        runs, spent = interleaved(self.spark, max(self.repeat, at_least), actions, warmup=1)
        for (what, fmt), times in runs.items():
            key = (what, short(fmt))
            self.runs[key] = times
            self.spent[key] = spent[(what, fmt)]
            listed = ", ".join(f"{r:.2f}" for r in times)
            self.log(
                f"  {what}, {short(fmt)}: {statistics.median(times):.2f} s ({listed}); "
                f"GC {spent[(what, fmt)].gc:.1f} s, other processes "
                f"{spent[(what, fmt)].others:.2f} cores"
            )

    def median(self, what: str, fmt: str) -> float:
        return statistics.median(self.runs[(what, fmt)])

    def read(self, fmt: str, ddl: str | None, path: Path) -> DataFrame:
        return load(self.spark, fmt, ddl, path)
