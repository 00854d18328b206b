"""The README's spark-shell instructions, run for real with pyspark's own spark-shell."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pyspark

import spark_tfrecord
from support import TESTS


def test_spark_shell_with_jars(tmp_path: Path) -> None:
    home = Path(pyspark.__file__).resolve().parent
    out = tmp_path / "tf"
    result = subprocess.run(
        [
            str(home / "bin" / "spark-shell"),
            "--master",
            "local[1]",
            "--jars",
            spark_tfrecord.jar_path(),
            "--conf",
            "spark.ui.enabled=false",
        ],
        input=(TESTS / "support" / "spark_shell_input.scala").read_text(),
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "SPARK_HOME": str(home), "TFRECORD_OUT": str(out)},
    )
    lines = [line.split("scala> ")[-1] for line in result.stdout.splitlines()]
    assert "SCHEMA struct<id:bigint,x:array<float>,lang:string>" in lines, result.stdout[-3000:]
    rows = [line for line in lines if line.startswith("ROW ")]
    assert rows == ["ROW 1|WrappedArray(0.5, 1.5)|a", "ROW 2|WrappedArray(2.5)|b"] or rows == [
        "ROW 1|ArraySeq(0.5, 1.5)|a",
        "ROW 2|ArraySeq(2.5)|b",
    ]
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["lang=a", "lang=b"]
    # The Scala TFDS helper: a dataset folder TFDS loads (tested in test_tfds), read back.
    folder = f"{out}-tfds/shell_ds/1.0.0"
    assert f"TFDS {folder} 2" in lines, result.stdout[-3000:]
    info = json.loads(Path(folder, "dataset_info.json").read_text())
    assert [(s["name"], len(s["shardLengths"])) for s in info["splits"]] == [("train", 3)]
    assert sum(int(n) for n in info["splits"][0]["shardLengths"]) == 2


def test_spark_submit_with_packages_from_a_maven_repository(tmp_path: Path) -> None:
    """`--packages` resolves the jar from a Maven repository, as from a company's artifact store.

    The repository is laid out as `mvn deploy:deploy-file` would lay it out, with a pom without
    dependencies (Spark and Scala are provided by the cluster), and named by an Ivy settings file
    (`spark.jars.ivySettings`) as the only resolver: Spark's default chain would also ask
    repos.spark-packages.org, which this machine cannot reach (a minute of timeouts).
    """
    home = Path(pyspark.__file__).resolve().parent
    jar = Path(spark_tfrecord.jar_path())
    # spark-tfrecord-spark4_2.13-0.1.0.jar -> artifact spark-tfrecord-spark4_2.13, version 0.1.0
    artifact, version = jar.stem.rsplit("-", 1)
    group = "io.github.sparktfrecord"
    folder = tmp_path / "repo" / group.replace(".", "/") / artifact / version
    folder.mkdir(parents=True)
    (folder / jar.name).write_bytes(jar.read_bytes())
    (folder / f"{artifact}-{version}.pom").write_text(
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        f"<groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
        f"<version>{version}</version><packaging>jar</packaging></project>"
    )
    settings = tmp_path / "ivysettings.xml"
    settings.write_text(
        '<ivysettings><settings defaultResolver="company"/><resolvers>'
        f'<ibiblio name="company" m2compatible="true" root="{(tmp_path / "repo").as_uri()}"/>'
        "</resolvers></ivysettings>"
    )
    result = subprocess.run(
        [
            str(home / "bin" / "spark-submit"),
            "--master",
            "local[1]",
            "--packages",
            f"{group}:{artifact}:{version}",
            "--conf",
            f"spark.jars.ivySettings={settings}",
            "--conf",
            f"spark.jars.ivy={tmp_path / 'ivy'}",
            "--conf",
            "spark.ui.enabled=false",
            str(TESTS / "support" / "spark_submit_job.py"),
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "SPARK_HOME": str(home)},
    )
    assert "ROWS 0:0;1:1;2:0;3:1" in result.stdout.splitlines(), result.stderr[-3000:]
    jars = next(x for x in result.stdout.splitlines() if x.startswith("JARS "))
    assert jars.endswith(f"{group}_{artifact}-{version}.jar"), jars
