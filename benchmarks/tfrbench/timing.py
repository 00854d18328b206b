"""Timing: the wall clock and CPU time of timed runs, every measurement's runs, and a line of
the results table made from them."""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .sessions import gc, jvm, load, short

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


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

    def now() -> Usage:
        return process_usage() if spark is None else usage(spark)

    runs = []
    spent = Usage(0.0, 0.0, 0.0, 0.0)
    for _ in range(repeat):
        if spark is not None:
            gc(spark)
        before = now()
        start = time.perf_counter()
        action()
        runs.append(time.perf_counter() - start)
        delta = now() - before
        spent = Usage(*(a + b for a, b in zip(astuple(spent), astuple(delta))))
    return runs, spent


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
        return load(self.spark, fmt, ddl, path)
