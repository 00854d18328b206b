"""The README's spark-shell instructions, run for real with pyspark's own spark-shell."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pyspark

import spark_tfrecord

SCRIPT = """
val df = Seq((1L, "a", Seq(0.5f, 1.5f)), (2L, "b", Seq(2.5f))).toDF("id", "lang", "x")
df.write.format("tfrecord").partitionBy("lang").save("{out}")
val back = spark.read.format("tfrecord").load("{out}")
println("SCHEMA " + back.schema.simpleString)
back.orderBy("id").collect().foreach(r => println("ROW " + r.mkString("|")))
"""


def test_spark_shell_with_jars(tmp_path: Path) -> None:
    home = Path(pyspark.__file__).resolve().parent
    out = tmp_path / "tf"
    script = SCRIPT.format(out=out)
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
        input=script,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "SPARK_HOME": str(home)},
    )
    lines = [line.split("scala> ")[-1] for line in result.stdout.splitlines()]
    assert "SCHEMA struct<id:bigint,x:array<float>,lang:string>" in lines, result.stdout[-3000:]
    rows = [line for line in lines if line.startswith("ROW ")]
    assert rows == ["ROW 1|WrappedArray(0.5, 1.5)|a", "ROW 2|WrappedArray(2.5)|b"] or rows == [
        "ROW 1|ArraySeq(0.5, 1.5)|a",
        "ROW 2|ArraySeq(2.5)|b",
    ]
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["lang=a", "lang=b"]
