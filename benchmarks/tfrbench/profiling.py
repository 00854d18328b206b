"""Where the time goes: Java Flight Recorder's samples of one full read, in a child process."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .data import NARROW_DDL
from .sessions import OURS, child_command, jvm, load, noop, session


@dataclass
class Profile:
    """Shares of the execution samples by the method on top of the stack (self time), one by
    one and summed by what the method is part of."""

    samples: int
    self_top: list[tuple[str, float]]
    areas: list[tuple[str, float]]


# What a method on top of the stack is part of: the first prefix of its class that matches.
PROFILE_AREAS = [
    ("framing: reading records, checking their CRCs", ("io.github.sparktfrecord.TFRecordReader",
        "io.github.sparktfrecord.TFRecordFraming", "java.util.zip.CRC32C")),
    ("decoding: the wire format into the row", ("io.github.sparktfrecord.",)),
    ("Spark's row and array writers, memory copies", (
        "org.apache.spark.sql.catalyst.expressions.codegen.Unsafe", "org.apache.spark.unsafe.")),
    ("file system and streams", ("org.apache.hadoop.", "java.io.", "java.nio.", "sun.nio.")),
]  # fmt: skip


def profile_in_child(path: Path, jfr: Path, args: argparse.Namespace) -> Profile | None:
    tool = shutil.which("jfr") or (
        str(Path(os.environ["JAVA_HOME"]) / "bin" / "jfr") if "JAVA_HOME" in os.environ else None
    )
    if tool is None or not Path(tool).exists():
        print("  no `jfr` tool (JDK bin): no profile", flush=True)
        return None
    cmd = child_command(
        "--profile-child", str(path),
        "--jfr", str(jfr), "--repeat", str(args.repeat), "--driver-memory", args.driver_memory,
        "--ours-jar", args.ours_jar,
    )  # fmt: skip
    print(f"  {shlex.join(cmd)}", flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    printed = subprocess.run(
        [tool, "print", "--json", "--events", "jdk.ExecutionSample", str(jfr)],
        check=True, stdout=subprocess.PIPE, text=True,
    ).stdout  # fmt: skip
    return summarize(json.loads(printed)["recording"]["events"])


def summarize(events: list[dict[str, Any]]) -> Profile:
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
        area = next((a for a, prefixes in PROFILE_AREAS if cls.startswith(prefixes)), "other")
        areas[area] = areas.get(area, 0) + count
    order = [a for a, _ in PROFILE_AREAS] + ["other"]
    return Profile(
        sum(own.values()),
        [(f"{cls.rsplit('.', 1)[-1]}.{m}", c / n) for (cls, m), c in top],
        [(a, areas.get(a, 0) / n) for a in order],
    )


def profile_child(args: argparse.Namespace) -> None:
    """The child's side of ``profile_in_child``: records ``--repeat`` full reads into ``--jfr``."""
    spark = session(
        ours=args.ours_jar,
        cores=1,
        memory=args.driver_memory,
        linkedin=None,
        linkedin_jar=None,
        # Spark's stacks are deeper than the recorder's default 64 frames, which cuts the bottom.
        java_options="-XX:FlightRecorderOptions:stackdepth=512",
    )
    df = load(spark, OURS, NARROW_DDL, args.profile_child)
    noop(df)  # warm-up, not recorded
    view = jvm(spark)
    recording = view.jdk.jfr.Recording()
    recording.enable("jdk.ExecutionSample").withPeriod(view.java.time.Duration.ofMillis(10))
    recording.start()
    for _ in range(args.repeat):
        noop(df)
    recording.stop()
    recording.dump(view.java.io.File(args.jfr).toPath())
    recording.close()
    spark.stop()
