"""The Spark 3.5 / Scala 2.13 jar, loaded in a real JVM on Spark 3.5's Scala 2.13 build.

pyspark ships Spark 3.5 for Scala 2.12 only, so this test starts a JVM of its own (through
JPype, in `support.scala213_driver`) on the Spark 3.5.0 / Scala 2.13 jars that the build
compiles against (the class path `ci/sbt writeTestClasspath` writes), with the jar
`jar_path(..., scala_version="2.13")` picks. A Scala 2.12/2.13 mismatch only shows when classes
load and run: a write, an inferred read, a read with a schema of a file written byte by byte,
and count().
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import spark_tfrecord
from support import child_env, module_command
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    float_list_packed,
    write_records,
)

CLASSPATH = Path(__file__).resolve().parents[1] / "target" / "spark3.5_2.13.classpath"

# What Spark's launcher adds on Java 17 (JavaModuleOptions).
JAVA_OPTIONS = [
    "-XX:+IgnoreUnrecognizedVMOptions",
    *(
        f"--add-opens=java.base/{p}=ALL-UNNAMED"
        for p in (
            "java.lang",
            "java.lang.invoke",
            "java.lang.reflect",
            "java.io",
            "java.net",
            "java.nio",
            "java.util",
            "java.util.concurrent",
            "java.util.concurrent.atomic",
            "sun.nio.ch",
            "sun.nio.cs",
            "sun.security.action",
            "sun.util.calendar",
        )
    ),
    "-Djdk.reflect.useDirectMethodHandle=false",
    "-Xmx1g",
]


def test_scala_2_13_jar_runs_on_spark_3_5_scala_2_13(tmp_path: Path) -> None:
    assert CLASSPATH.is_file(), f"{CLASSPATH} is missing: run 'ci/sbt writeTestClasspath'"
    jar = spark_tfrecord.jar_path("3.5.0", scala_version="2.13")
    data = write_records(
        tmp_path / "in" / "a.tfrecord",
        [
            example(
                entry(b"name", feature("bytes", bytes_list([b"ada"]))),
                entry(b"xs", feature("float", float_list_packed([0.5, -2.0]))),
            ),
            example(entry(b"name", feature("bytes", bytes_list([b"bob"])))),
        ],
    )
    classpath = [jar, *CLASSPATH.read_text().strip().split(os.pathsep)]
    arguments = json.dumps([JAVA_OPTIONS, classpath, str(data), str(tmp_path / "out")])
    done = subprocess.run(
        module_command("scala213_driver", arguments),
        capture_output=True,
        text=True,
        timeout=600,
        env=child_env(),
    )
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-5000:]
    result = json.loads(lines[0][7:])
    assert result["scala"].startswith("2.13.") and result["spark"].startswith("3.5.")
    assert result["jar"] == jar
    assert result["inferred"] == "struct<id:bigint,half:float,s:string>"
    assert result["rows"] == [[i, i / 2, "x" * (i + 1)] for i in range(5)]
    assert result["read"] == [["ada", [0.5, -2.0]], ["bob", None]]
    assert result["count"] == 2
