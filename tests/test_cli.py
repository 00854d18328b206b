"""The spark-tfrecord command: convert, inspect (with and without Spark), errors, help."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spark_tfrecord import cli
from support.tfrecord_bytes import bytes_list, entry, example, feature, frame, int64_list_packed

CLI = [sys.executable, "-m", "spark_tfrecord"]
GOOD = frame(example(entry(b"id", feature("int64", int64_list_packed([1])))))
#: A sound frame around an Example whose first field claims 5 bytes and has 2.
MALFORMED = frame(b"\x0a\x05\xff\xff")


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
    assert " |-- raw: array<binary> (nullable = true)" in lines  # 0xff: not UTF-8
    rows = [json.loads(line) for line in lines if line.startswith("{")]
    assert rows == [{"id": 0, "raw": ["0xff00", "é"]}, {"id": 1, "raw": ["0xff00", "é"]}]


def test_errors_are_one_line_with_a_hint_and_a_status(tmp_path: Path) -> None:
    missing = run("inspect", str(tmp_path / "nope"))
    assert missing.returncode == 3
    assert missing.stderr.startswith("spark-tfrecord: error: ")
    assert len(missing.stderr.strip().splitlines()) == 2 and "hint: " in missing.stderr

    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(GOOD + GOOD[:7])
    corrupt = run("inspect", str(bad))
    assert corrupt.returncode == 4, corrupt.stderr
    assert f"Truncated TFRecord: 7 of 12 header bytes at byte offset {len(GOOD)}" in corrupt.stderr

    usage = run("convert", str(bad), str(tmp_path / "o"), "--mode", "sideways")
    assert usage.returncode == 2 and "invalid choice: 'sideways'" in usage.stderr

    spark_error = run(
        "convert",
        str(bad),
        str(tmp_path / "o2"),
        "--master",
        "local[1]",
        "--record-type",
        "bytearray",  # any case, as the option
        "--to",
        "tfrecord",
    )
    assert spark_error.returncode == 4, spark_error.stderr
    # Spark's logging is off: no stack trace, the report is the last two lines.
    lines = spark_error.stderr.strip().splitlines()
    assert not [line for line in lines if line.startswith("\tat ") or " ERROR " in line], lines
    assert lines[-2].startswith(
        "spark-tfrecord: error: TFRecordCorruptException: [TFRECORD_CORRUPT_RECORD.TRUNCATED] "
        "Truncated"
    )
    assert lines[-1].startswith("hint: ")


def test_local_failures_exit_by_condition(tmp_path: Path) -> None:
    """Without Spark: the Java exceptions come through JPype."""
    malformed = tmp_path / "malformed.tfrecord"
    malformed.write_bytes(GOOD + MALFORMED)
    data_error = run("inspect", str(malformed))
    assert data_error.returncode == 4, data_error.stderr
    assert data_error.stderr.startswith(
        "spark-tfrecord: error: TFRecordDataException: [TFRECORD_MALFORMED_RECORD] "
        "Malformed tf.train.Example (length 5 runs "
        f"past its message at byte 1 of the record), in the record at byte offset {len(GOOD)} of "
    )
    empty = tmp_path / "empty.tfrecord"
    empty.write_bytes(b"")
    no_schema = run("inspect", str(empty))
    assert no_schema.returncode == 2, no_schema.stderr
    assert no_schema.stderr.startswith(
        "spark-tfrecord: error: TFRecordArgumentException: [TFRECORD_CANNOT_INFER_SCHEMA] "
        "Cannot infer a TFRecord schema: "
    )


def test_arguments_are_checked_before_spark_starts(tmp_path: Path) -> None:
    csv = tmp_path / "in.csv"
    csv.write_text("id\n1\n")
    # SPARK_HOME pointing nowhere: starting Spark would fail with status 5.
    no_spark = {"SPARK_HOME": "/nonexistent"}
    compressed = run(
        "convert",
        str(csv),
        str(tmp_path / "o"),
        "--to",
        "parquet",
        "--compression",
        "gzip",
        env=no_spark,
    )
    assert compressed.returncode == 2, compressed.stderr
    assert compressed.stderr.splitlines()[0] == (
        "spark-tfrecord: error: --compression is for --to tfrecord, not --to parquet"
    )
    assert "spark.sql.parquet.compression.codec" in compressed.stderr
    assert not (tmp_path / "o").exists()
    avro = run("convert", str(csv), str(tmp_path / "o"), "--to", "avro", env=no_spark)
    assert avro.returncode == 2 and "invalid choice: 'avro'" in avro.stderr
    record_type = run("inspect", str(csv), "--record-type", "Examples", env=no_spark)
    assert record_type.returncode == 2
    assert "--record-type: invalid choice: 'Examples'" in record_type.stderr
    assert "SequenceExample" in record_type.stderr


@pytest.mark.parametrize(
    "args,data,status,message",
    [
        (
            ["inspect", "{tmp}/nope", "--spark"],
            GOOD,
            3,
            "AnalysisException: [PATH_NOT_FOUND] Path does not exist: file:",
        ),
        (
            ["inspect", "{data}", "--schema", "m map<string,string>"],
            GOOD,
            2,
            "TFRecordArgumentException: [TFRECORD_UNSUPPORTED_TYPE] Column 'm' has type "
            "map<string,string>, which TFRecord cannot hold",
        ),
        (
            ["inspect", "{data}", "--spark"],
            b"",
            2,
            "TFRecordArgumentException: [TFRECORD_CANNOT_INFER_SCHEMA] Cannot infer a TFRecord "
            "schema: ",
        ),
        (
            ["inspect", "{data}", "--spark"],
            GOOD + MALFORMED,
            4,
            "TFRecordDataException: [TFRECORD_MALFORMED_RECORD] Malformed tf.train.Example "
            "(length 5 runs past its message",
        ),
        (
            ["convert", "{data}", "{data}/out"],
            GOOD,
            5,
            "ParentNotDirectoryException: Parent path is not a directory: file:",
        ),
    ],
    ids=["missing input", "map column", "no records", "malformed record", "output under a file"],
)
def test_spark_failures_exit_by_condition(
    spark,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    data: bytes,
    status: int,
    message: str,
) -> None:
    """In this process, on the test session: the command's getOrCreate() returns it."""
    path = tmp_path / "data.tfrecord"
    path.write_bytes(data)
    assert cli.main([a.format(tmp=tmp_path, data=path) for a in args]) == status
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and lines[1].startswith("hint: "), lines
    assert lines[0].startswith(f"spark-tfrecord: error: {message}"), lines


def test_help_teaches_with_examples() -> None:
    top = run("--help")
    assert top.returncode == 0 and "examples:" in top.stdout and "exit status" in top.stdout
    for command in ("convert", "inspect", "index"):
        text = run(command, "--help").stdout
        assert "spark-tfrecord convert people.csv out/people" in text
        assert "spark-tfrecord index out/tf" in text
    assert "--partition-by" in run("convert", "--help").stdout
    index = run("index", "--help").stdout
    assert "--compression {none,gzip}" in index and "--record-type" not in index
