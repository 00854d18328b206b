"""Where the time goes: Java Flight Recorder's samples of one workload (the narrow full read
unless ``--profile`` says another), in a child process."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .child import emit, run, script
from .data import NARROW_DDL, WIDE1000_DDL, WIDE1000_SELECTED, image
from .sessions import OURS, jvm, load, noop, session


@dataclass
class Profile:
    """Shares of the execution samples by the method on top of the stack (self time), one by
    one and summed by what the method is part of."""

    workload: str
    samples: int
    self_top: list[tuple[str, float]]
    areas: list[tuple[str, float]]


# What ``--profile`` can choose, and how the report names it.
WORKLOADS = {
    "narrow-read": "the narrow full read",
    "wide1000-select": "the wide-1000 read of 10 of the 1,000 columns",
    "wide1000-read": "the wide-1000 full read of the 1,000 columns",
    "image-write": "our write of the cached image-sized data",
}


# What a method on top of the stack is part of: the first prefix of its class that matches.
READ_AREAS = [
    ("framing: reading records, checking their CRCs", (
        "io.github.sparktfrecord.framing.", "java.util.zip.CRC32C")),
    ("decoding: the wire format into the row", ("io.github.sparktfrecord.",)),
    ("Spark's row and array writers, memory copies", (
        "org.apache.spark.sql.catalyst.expressions.codegen.Unsafe", "org.apache.spark.unsafe.")),
    ("file system and streams", ("org.apache.hadoop.", "java.io.", "java.nio.", "sun.nio.")),
]  # fmt: skip
WRITE_AREAS = [
    ("framing: writing records, their CRCs", (
        "io.github.sparktfrecord.framing.", "java.util.zip.CRC32C")),
    ("encoding: the row into the wire format", ("io.github.sparktfrecord.",)),
    ("Spark's in-memory cache, rows out of it", ("org.apache.spark.sql.execution.columnar.",)),
    ("Spark's rows, memory copies", (
        "org.apache.spark.sql.catalyst.expressions.", "org.apache.spark.unsafe.")),
    ("file system and streams", ("org.apache.hadoop.", "java.io.", "java.nio.", "sun.nio.")),
]  # fmt: skip


def profile_in_child(path: Path, jfr: Path, args: argparse.Namespace) -> Profile | None:
    """Records ``--profile`` in a ``local[1]`` child, on ``path`` (the files it reads, or where
    it writes); None without the JDK's ``jfr`` tool."""
    tool = shutil.which("jfr") or (
        str(Path(os.environ["JAVA_HOME"]) / "bin" / "jfr") if "JAVA_HOME" in os.environ else None
    )
    if tool is None or not Path(tool).exists():
        print("  no `jfr` tool (JDK bin): no profile", flush=True)
        return None
    cmd = script(
        "run", "--profile-child", str(path),
        "--jfr", str(jfr), "--repeat", str(args.repeat), "--driver-memory", args.driver_memory,
        "--ours-jar", args.ours_jar, "--profile", args.profile,
        "--image-rows", str(args.image_rows),
    )  # fmt: skip
    run(cmd)
    printed = subprocess.run(
        [tool, "print", "--json", "--events", "jdk.ExecutionSample", str(jfr)],
        check=True, stdout=subprocess.PIPE, text=True,
    ).stdout  # fmt: skip
    areas = WRITE_AREAS if args.profile.endswith("-write") else READ_AREAS
    events = json.loads(printed)["recording"]["events"]
    return summarize(WORKLOADS[args.profile], events, areas)


def summarize(
    workload: str, events: list[dict[str, Any]], prefixes: list[tuple[str, tuple[str, ...]]]
) -> Profile:
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
        area = next((a for a, starts in prefixes if cls.startswith(starts)), "other")
        areas[area] = areas.get(area, 0) + count
    order = [a for a, _ in prefixes] + ["other"]
    return Profile(
        workload,
        sum(own.values()),
        [(f"{cls.rsplit('.', 1)[-1]}.{m}", c / n) for (cls, m), c in top],
        [(a, areas.get(a, 0) / n) for a in order],
    )


def profile_child(args: argparse.Namespace) -> None:
    """The child's side of ``profile_in_child``: records ``--repeat`` runs of ``--profile`` into
    ``--jfr``, after one untimed run."""
    spark = session(
        ours=args.ours_jar,
        cores=1,
        memory=args.driver_memory,
        linkedin=None,
        linkedin_jar=None,
        # Spark's stacks are deeper than the recorder's default 64 frames, which cuts the bottom;
        # without debug information at every instruction, samples of compiled code are charged
        # to the nearest safepoint's method (a loop's caller, say), not to the one running.
        java_options="-XX:FlightRecorderOptions:stackdepth=512 -XX:+UnlockDiagnosticVMOptions "
        "-XX:+DebugNonSafepoints",
    )
    path = args.profile_child
    if args.profile == "image-write":
        data = image(spark, args.image_rows).cache()
        data.count()

        def action() -> None:
            data.write.format(OURS).mode("overwrite").save(path)

    else:
        if args.profile == "wide1000-select":
            df = load(spark, OURS, WIDE1000_DDL, path).select(*WIDE1000_SELECTED)
        elif args.profile == "wide1000-read":
            df = load(spark, OURS, WIDE1000_DDL, path)
        else:
            df = load(spark, OURS, NARROW_DDL, path)

        def action() -> None:
            noop(df)

    action()  # warm-up, not recorded
    view = jvm(spark)
    recording = view.jdk.jfr.Recording()
    recording.enable("jdk.ExecutionSample").withPeriod(view.java.time.Duration.ofMillis(10))
    recording.start()
    for _ in range(args.repeat):
        action()
    recording.stop()
    recording.dump(view.java.io.File(args.jfr).toPath())
    recording.close()
    spark.stop()
    if args.profile == "image-write":
        shutil.rmtree(path)  # a copy of image-ours, not needed
    emit({"jfr": args.jfr})
