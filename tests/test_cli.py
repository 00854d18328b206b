"""The spark-tfrecord command: convert, inspect (with and without Spark), errors, help."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tfrecord_bytes import bytes_list, entry, example, feature, frame, int64_list_packed

CLI = [sys.executable, "-m", "spark_tfrecord"]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env={**os.environ, **(env or {})}
    )


def test_convert_csv_to_tfrecord_and_back(tmp_path: Path) -> None:
    csv = tmp_path / "in.csv"
    csv.write_text("id,name,score,day\n1,ada,0.5,x\n2,bob,1.25,y\n")
    tf_out, pq_out = tmp_path / "tf", tmp_path / "pq"
    done = run(
        "convert",
        str(csv),
        str(tf_out),
        "--master",
        "local[1]",
        "--partition-by",
        "day",
        "--compression",
        "gzip",
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name.split("=")[1] for p in tf_out.glob("day=*")) == ["x", "y"]
    assert all(p.name.endswith(".tfrecord.gz") for p in tf_out.rglob("part-*"))
    back = run("convert", str(tf_out), str(pq_out), "--to", "parquet", "--master", "local[1]")
    assert back.returncode == 0, back.stderr
    assert list(pq_out.glob("part-*.parquet"))
    shown = run("inspect", str(tf_out), "--spark", "--master", "local[1]")
    assert shown.returncode == 0, shown.stderr
    assert "records: 2" in shown.stdout and "|ada " in shown.stdout
    assert "|-- day: string" in shown.stdout
    local = run("inspect", str(tf_out))  # without Spark: partition values from the directories
    assert local.returncode == 0, local.stderr
    assert " |-- day: string (nullable = true)" in local.stdout
    rows = sorted(
        (json.loads(x) for x in local.stdout.splitlines() if x.startswith("{")),
        key=lambda r: r["id"],
    )
    assert [(r["id"], r["name"], r["day"]) for r in rows] == [(1, "ada", "x"), (2, "bob", "y")]


def test_inspect_local_files_without_spark(tmp_path: Path) -> None:
    data = tmp_path / "d"
    data.mkdir()
    records = [
        example(
            entry(b"id", feature("int64", int64_list_packed([i]))),
            entry(b"raw", feature("bytes", bytes_list([b"\xff\x00", "é".encode()]))),
        )
        for i in range(3)
    ]
    (data / "part-0.tfrecord").write_bytes(b"".join(frame(r) for r in records))
    (data / "part-1.tfrecord").write_bytes(frame(records[0]))
    (data / "_SUCCESS").write_bytes(b"")
    # SPARK_HOME pointing nowhere: starting Spark would fail, so this proves it never starts.
    shown = run("inspect", str(data), "-n", "2", env={"SPARK_HOME": "/nonexistent"})
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("files: 2,") and "records: 4" in lines
    assert " |-- raw: array<string> (nullable = true)" in lines
    rows = [json.loads(line) for line in lines if line.startswith("{")]
    assert rows == [{"id": 0, "raw": ["0xff00", "é"]}, {"id": 1, "raw": ["0xff00", "é"]}]


def test_errors_are_one_line_with_a_hint_and_a_status(tmp_path: Path) -> None:
    missing = run("inspect", str(tmp_path / "nope"))
    assert missing.returncode == 3
    assert missing.stderr.startswith("spark-tfrecord: error: ")
    assert len(missing.stderr.strip().splitlines()) == 2 and "hint: " in missing.stderr

    bad = tmp_path / "bad.tfrecord"
    good = frame(example(entry(b"id", feature("int64", int64_list_packed([1])))))
    bad.write_bytes(good + good[:7])
    corrupt = run("inspect", str(bad))
    assert corrupt.returncode == 4, corrupt.stderr
    assert f"Truncated TFRecord: 7 of 12 header bytes at byte offset {len(good)}" in corrupt.stderr

    usage = run("convert", str(bad), str(tmp_path / "o"), "--mode", "sideways")
    assert usage.returncode == 2 and "invalid choice: 'sideways'" in usage.stderr

    spark_error = run(
        "convert",
        str(bad),
        str(tmp_path / "o2"),
        "--master",
        "local[1]",
        "--record-type",
        "ByteArray",
        "--to",
        "tfrecord",
    )
    assert spark_error.returncode == 4, spark_error.stderr
    # Spark's logging is off: no stack trace, the report is the last two lines.
    lines = spark_error.stderr.strip().splitlines()
    assert not [line for line in lines if line.startswith("\tat ") or " ERROR " in line], lines
    assert lines[-2].startswith("spark-tfrecord: error: TFRecordCorruptException: Truncated")
    assert lines[-1].startswith("hint: ")


def test_help_teaches_with_examples() -> None:
    top = run("--help")
    assert top.returncode == 0 and "examples:" in top.stdout and "exit status" in top.stdout
    for command in ("convert", "inspect"):
        text = run(command, "--help").stdout
        assert "spark-tfrecord convert people.csv out/people" in text
    assert "--partition-by" in run("convert", "--help").stdout
