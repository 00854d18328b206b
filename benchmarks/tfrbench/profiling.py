"""Where the time goes: async-profiler's samples of one workload (the narrow full read unless
``--profile`` says another), in a child process. async-profiler (Maven Central's
``tools.profiler:async-profiler`` jar, which holds its native library) samples native and kernel
frames too: the CRC32C intrinsic, the kernel copying the file's bytes, which Java Flight
Recorder's samples of Java frames do not see."""

from __future__ import annotations

import argparse
import platform
import re
import shutil
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .child import emit, run, script
from .data import NARROW_DDL, WIDE1000_DDL, WIDE1000_SELECTED, image
from .sessions import OURS, jvm, load, noop, session


@dataclass
class Profile:
    """Shares of the task thread's samples by the frame on top of the stack (self time), one by
    one, and summed by what the nearest Java method on the stack is part of."""

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


#: async-profiler's release on Maven Central, and its jar's classifier for this machine.
PROFILER_VERSION = "4.2"
PROFILER_CLASSIFIERS = {"x86_64": "linux-x64", "amd64": "linux-x64", "aarch64": "linux-arm64"}

#: A Java method in a collapsed stack (``io/github/sparktfrecord/wire/EntryHeaders.entryAt``):
#: native and JVM frames have no package path, kernel frames end in ``_[k]``.
JAVA_FRAME = re.compile(r"^[A-Za-z_$][\w$]*(/[\w$]+)+\.\S+$")


def profiler_jar(cache: Path) -> Path | None:
    """async-profiler's jar for this machine, fetched from Maven Central into ``cache`` once;
    None where it has no build (not Linux on x86-64 or ARM64) or it cannot be fetched."""
    classifier = PROFILER_CLASSIFIERS.get(platform.machine().lower())
    if not sys.platform.startswith("linux") or classifier is None:
        print(f"  async-profiler has no build for {sys.platform} {platform.machine()}: no profile")
        return None
    name = f"async-profiler-{PROFILER_VERSION}-{classifier}.jar"
    jar = cache / name
    if not jar.exists():
        url = (
            "https://repo1.maven.org/maven2/tools/profiler/async-profiler/"
            f"{PROFILER_VERSION}/{name}"
        )
        cache.mkdir(parents=True, exist_ok=True)
        part = jar.with_suffix(".part")
        try:
            with urllib.request.urlopen(url, timeout=120) as response, part.open("wb") as f:
                shutil.copyfileobj(response, f)
        except OSError as e:
            print(f"  async-profiler not fetched ({url}: {e}): no profile", flush=True)
            return None
        part.replace(jar)
    return jar


def profile_in_child(path: Path, stacks: Path, args: argparse.Namespace) -> Profile | None:
    """Samples ``--profile`` in a ``local[1]`` child, on ``path`` (the files it reads, or where
    it writes), its stacks collapsed into ``stacks``; None without async-profiler."""
    jar = profiler_jar(Path(args.out) / "tools")
    if jar is None:
        return None
    cmd = script(
        "run", "--profile-child", str(path), "--profiler-jar", str(jar),
        "--stacks", str(stacks), "--repeat", str(args.repeat),
        "--driver-memory", args.driver_memory, "--ours-jar", args.ours_jar,
        "--profile", args.profile, "--image-rows", str(args.image_rows),
    )  # fmt: skip
    run(cmd)
    areas = WRITE_AREAS if args.profile.endswith("-write") else READ_AREAS
    return summarize(WORKLOADS[args.profile], stacks.read_text(), areas)


def summarize(
    workload: str, collapsed: str, prefixes: list[tuple[str, tuple[str, ...]]]
) -> Profile:
    """Counts the samples of Spark's task threads (``threads``: each stack starts with its
    thread's name) by the frame on top, and by the area of the nearest Java method below it (a
    kernel read is its stream's, the CRC32C intrinsic ``CRC32C.update``'s)."""
    own: dict[str, int] = {}
    areas: dict[str, int] = {}
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not frames[0].startswith("[Executor task launch worker"):
            continue
        n = int(count)
        top = frames[-1]
        own[top] = own.get(top, 0) + n
        java = next((f for f in reversed(frames) if JAVA_FRAME.match(f)), "")
        cls = java.rsplit(".", 1)[0].replace("/", ".")
        area = next((a for a, starts in prefixes if cls.startswith(starts)), "other")
        areas[area] = areas.get(area, 0) + n
    total = max(1, sum(own.values()))
    ranked = sorted(own.items(), key=lambda kv: -kv[1])[:15]
    order = [a for a, _ in prefixes] + ["other"]
    return Profile(
        workload,
        sum(own.values()),
        [(short_frame(f), c / total) for f, c in ranked],
        [(a, areas.get(a, 0) / total) for a in order],
    )


def short_frame(frame: str) -> str:
    """A Java frame as ``Class.method``; any other as it is (``updateBytesCRC32C``,
    ``_copy_to_iter_[k]``)."""
    return frame.rsplit("/", 1)[-1] if JAVA_FRAME.match(frame) else frame


def profile_child(args: argparse.Namespace) -> None:
    """The child's side of ``profile_in_child``: samples ``--repeat`` runs of ``--profile``,
    after one untimed run, every half millisecond of CPU time, into ``--stacks``."""
    spark = session(
        ours=args.ours_jar,
        cores=1,
        memory=args.driver_memory,
        linkedin=None,
        linkedin_jar=None,
        # Without debug information at every instruction, samples of compiled code are charged
        # to the nearest safepoint's method (a loop's caller, say), not to the one running.
        java_options="-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints",
        conf={"spark.driver.extraClassPath": args.profiler_jar},
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

    action()  # warm-up, not sampled
    profiler = jvm(spark).one.profiler.AsyncProfiler.getInstance()
    profiler.execute("start,event=cpu,interval=500us,threads")
    for _ in range(args.repeat):
        action()
    profiler.execute("stop")
    Path(args.stacks).write_text(profiler.execute("collapsed"))
    spark.stop()
    if args.profile == "image-write":
        shutil.rmtree(path)  # a copy of image-ours, not needed
    emit({"stacks": args.stacks})
