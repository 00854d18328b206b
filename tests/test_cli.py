"""The spark-tfrecord command: convert, inspect (with and without Spark), errors, help."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from spark_tfrecord import cli
from support.tfrecord_bytes import bytes_list, entry, example, feature, frame, int64_list_packed

CLI = [sys.executable, "-m", "spark_tfrecord"]
GOOD = frame(example(entry(b"id", feature("int64", int64_list_packed([1])))))
#: A sound frame around an Example whose first field claims 5 bytes and has 2.
MALFORMED = frame(b"\x0a\x05\xff\xff")


REPO = Path(__file__).resolve().parent.parent
#: What the JVM itself prints when Spark 4.x's launcher starts it (``--add-modules
#: jdk.incubator.vector``), before any code of Spark or ours runs; no option silences it.
JVM_NOTICE = "WARNING: Using incubator modules: jdk.incubator.vector"


def run(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def stderr_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    """What the command printed on stderr, without the JVM's own notice."""
    return [line for line in done.stderr.splitlines() if line != JVM_NOTICE]


def people_rows(tfds: Any, folder: Path) -> list[dict[str, Any]]:
    builder = tfds.builder_from_directory(str(folder))
    ds = builder.as_dataset(split="train", shuffle_files=False)
    return sorted(tfds.as_numpy(ds), key=lambda e: int(e["id"]))


#: examples/people.csv as TFDS gives it back (height_m as float32, a date as int64 days).
PEOPLE = [
    (1, b"Ada Lovelace", 36, "1.65", b"GB", "2024-01-05"),
    (2, b"Alan Turing", 41, "1.78", b"GB", "2024-01-05"),
    (3, b"Grace Hopper", 85, "1.68", b"US", "2024-01-06"),
    (4, b"Katherine Johnson", 101, "1.60", b"US", "2024-01-06"),
    (5, b"Tu Youyou", 94, "1.55", b"CN", "2024-01-07"),
    (6, b"Sofia Kovalevskaya", 41, "1.58", b"RU", "2024-01-07"),
]


def days(iso: str) -> int:
    import datetime

    return (datetime.date.fromisoformat(iso) - datetime.date(1970, 1, 1)).days


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
    assert done.stdout.splitlines() == [f"wrote {tf_out} (tfrecord) from {csv} (csv)"]
    # Nothing else: no log lines, no stage progress (not a terminal), and no pyspark 4.x
    # "FutureWarning: PySpark does not yet fully support pandas >= 3.0.0".
    assert stderr_lines(done) == []
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
    assert shown.stderr == ""  # no log4j lines, no "INFO CodeGenerator"
    lines = shown.stdout.splitlines()
    assert lines[0] == f"files: 2, {len(records[0]) * 4 + 16 * 4:,} bytes" and "records: 4" in lines
    assert " |-- raw: array<binary> (nullable = true)" in lines  # 0xff: not UTF-8
    rows = [json.loads(line) for line in lines if line.startswith("{")]
    assert rows == [{"id": 0, "raw": ["0xff00", "é"]}, {"id": 1, "raw": ["0xff00", "é"]}]


def test_inspect_prints_the_manifests_counts_without_reading_the_files(tmp_path: Path) -> None:
    from support.manifests import MANIFEST, write_manifest

    data = tmp_path / "d"
    (data / "day=1").mkdir(parents=True)
    (data / "day=1" / "part-0.tfrecord").write_bytes(GOOD * 3)
    (data / "day=1" / "part-1.tfrecord").write_bytes(GOOD)
    write_manifest(
        data, {"day=1/part-0.tfrecord": 3, "day=1/part-1.tfrecord": 1}, partition_columns=("day",)
    )
    expected = [
        f"files: 2, {len(GOOD) * 4:,} bytes",
        f"records: 4 ({MANIFEST})",
        f"           3 records {len(GOOD) * 3:>16,} bytes  day=1/part-0.tfrecord",
        f"           1 records {len(GOOD):>16,} bytes  day=1/part-1.tfrecord",
        "root",
        " |-- id: long (nullable = true)",
        " |-- day: string (nullable = true)",
    ]
    shown = run("inspect", str(data), "-n", "2")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        *expected,
        '{"id": 1, "day": "1"}',
        '{"id": 1, "day": "1"}',
    ]
    # The counts are the manifest's: files of the same sizes that are not TFRecord give the
    # same, and with -n 0 the JVM never starts.
    for part in (data / "day=1").iterdir():
        part.write_bytes(b"\xff" * part.stat().st_size)
    code = (
        "import sys; from spark_tfrecord import cli\n"
        f"rc = cli.main(['inspect', {str(data)!r}, '-n', '0'])\n"
        "jpype = sys.modules.get('jpype')\n"
        "print(rc, jpype is not None and jpype.isJVMStarted())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [*expected, "0 False"]
    # A manifest that the folder no longer matches is not used: the files are read.
    (data / "day=1" / "part-2.tfrecord").write_bytes(GOOD)
    stale = run("inspect", str(data), "-n", "0")
    assert stale.returncode == 4
    assert "Corrupt TFRecord: length checksum mismatch at byte offset 0" in stale.stderr


def test_errors_are_one_line_with_a_hint_and_a_status(tmp_path: Path) -> None:
    missing = run("inspect", str(tmp_path / "nope"))
    assert missing.returncode == 3
    assert missing.stderr.splitlines() == [
        f"spark-tfrecord: error: FileNotFoundException: File {tmp_path}/nope does not exist "
        "(check the path)"
    ]

    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(GOOD + GOOD[:7])
    corrupt = run("inspect", str(bad))
    assert corrupt.returncode == 4, corrupt.stderr
    assert len(corrupt.stderr.splitlines()) == 1
    assert f"Truncated TFRecord: 7 of 12 header bytes at byte offset {len(GOOD)}" in corrupt.stderr
    assert corrupt.stderr.endswith(" (the file is damaged or not TFRecord; see docs/errors.md)\n")

    usage = run("convert", str(bad), str(tmp_path / "o"), "--mode", "sideways")
    assert usage.returncode == 2
    assert usage.stderr.splitlines() == [
        "spark-tfrecord: error: argument --mode: invalid choice: 'sideways' (choose from "
        "append, overwrite, ignore, error, errorifexists) (see spark-tfrecord convert --help)"
    ] or usage.stderr.splitlines() == [  # Python < 3.12 quotes the choices
        "spark-tfrecord: error: argument --mode: invalid choice: 'sideways' (choose from "
        "'append', 'overwrite', 'ignore', 'error', 'errorifexists') (see spark-tfrecord "
        "convert --help)"
    ]

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
    # Spark's logging is off: no stack trace, no log line; the report is one line.
    lines = stderr_lines(spark_error)
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        "spark-tfrecord: error: TFRecordCorruptException: [TFRECORD_CORRUPT_RECORD.TRUNCATED] "
        "Truncated"
    )
    assert lines[0].endswith(" (the file is damaged or not TFRecord; see docs/errors.md)")


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
    assert compressed.stderr.splitlines() == [
        "spark-tfrecord: error: --compression is for --to tfrecord, not --to parquet (Parquet "
        "and ORC take their codec from --conf spark.sql.parquet.compression.codec=... or "
        "spark.sql.orc.compression.codec=...)"
    ]
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
    assert len(lines) == 1 and lines[0].endswith(")"), lines
    assert lines[0].startswith(f"spark-tfrecord: error: {message}"), lines


def test_help_teaches_with_examples() -> None:
    top = run("--help")
    assert top.returncode == 0 and "examples:" in top.stdout and "exit status" in top.stdout
    for command in ("convert", "inspect", "index"):
        text = run(command, "--help").stdout
        assert "spark-tfrecord convert people.csv out/people" in text
        assert "spark-tfrecord index out/tf" in text
    convert = run("convert", "--help").stdout
    assert "--partition-by" in convert
    assert "--features FILE" in convert and "--cast COLUMN:TYPE" in convert
    assert "--cast signup_day:string" in convert
    assert "6 the destination exists (give --mode overwrite or --mode append)" in convert
    inspect = run("inspect", "--help").stdout
    assert "--split NAME" in inspect and "--compression {none,gzip,deflate}" in inspect
    assert "spark-tfrecord inspect /data/tfds/my_ds --split train" in inspect
    assert "about a second" not in inspect
    index = run("index", "--help").stdout
    assert "--compression {none,gzip}" in index and "--record-type" not in index


def test_readme_tfds_example_runs_and_tfds_loads_it(tmp_path: Path) -> None:
    """README's `spark-tfrecord convert examples/people.csv out --tfds people_ds --split train`,
    as written: the date column is written as int64 days, which TFDS loads value for value."""
    import tensorflow_datasets as tfds

    done = run(
        "convert", "examples/people.csv", str(tmp_path / "out"), "--tfds", "people_ds",
        "--split", "train", cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "out" / "people_ds" / "1.0.0"
    assert done.stdout.splitlines() == [
        f"wrote split train of the TFDS dataset {folder} from examples/people.csv "
        "(signup_day: date as int64 days since 1970-01-01)"
    ]
    assert stderr_lines(done) == []
    rows = people_rows(tfds, folder)
    assert [
        (int(r["id"]), r["name"], int(r["age"]), r["height_m"], r["country"], int(r["signup_day"]))
        for r in rows
    ] == [(i, n, a, np.float32(h), c, days(d)) for i, n, a, h, c, d in PEOPLE]

    # inspect: the dataset folder above its one version, and the version folder itself.
    for path in (folder.parent, folder):
        shown = run("inspect", str(path), "-n", "2")
        assert shown.returncode == 0, shown.stderr
        assert shown.stderr == ""
        lines = shown.stdout.splitlines()
        size = sum(f.stat().st_size for f in folder.glob("people_ds-train.tfrecord-*"))
        assert lines[:3] == [
            f"tfds: people_ds 1.0.0, {folder}",
            f"split train: files: 1, {size:,} bytes, records: 6 (dataset_info.json)",
            "records: 6",
        ]
        assert " |-- signup_day: long (nullable = true)" in lines
        assert [json.loads(line) for line in lines if line.startswith("{")] == [
            {"id": 1, "name": "Ada Lovelace", "age": 36, "height_m": 1.65, "country": "GB",
             "signup_day": days("2024-01-05")},
            {"id": 2, "name": "Alan Turing", "age": 41, "height_m": 1.78, "country": "GB",
             "signup_day": days("2024-01-05")},
        ]  # fmt: skip
        assert "" not in lines

    one = run("inspect", str(folder), "--split", "train", "-n", "0")
    assert one.returncode == 0 and one.stdout.splitlines()[1].startswith("split train: ")
    other = run("inspect", str(folder.parent), "--split", "test")
    assert other.returncode == 2
    assert other.stderr.splitlines() == [
        f"spark-tfrecord: error: the TFDS dataset {folder} has no split 'test' (its splits: "
        "train) (give one of them to --split, or leave --split out for all)"
    ]

    # The same split again: refused before Spark starts (SPARK_HOME pointing nowhere).
    again = run(
        "convert", "examples/people.csv", str(tmp_path / "out"), "--tfds", "people_ds",
        "--split", "train", cwd=REPO, env={"SPARK_HOME": "/nonexistent"},
    )  # fmt: skip
    assert again.returncode == 6
    assert again.stderr.splitlines() == [
        f"spark-tfrecord: error: the TFDS dataset {folder} already has the split 'train' (use "
        "--mode overwrite to replace it, or another --split)"
    ]


def test_tfds_cast_and_features(spark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--cast and --features, in this process on the test session; TFDS loads what they wrote."""
    import tensorflow_datasets as tfds

    csv = str(REPO / "examples" / "people.csv")
    data_dir = tmp_path / "tfds"
    as_text = ["convert", csv, str(data_dir), "--tfds", "as_text", "--split", "train"]
    assert cli.main([*as_text, "--cast", "signup_day:string", "--cast", "age:double"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"wrote split train of the TFDS dataset {data_dir}/as_text/1.0.0 from {csv}"
    ]
    rows = people_rows(tfds, data_dir / "as_text" / "1.0.0")
    assert [(r["signup_day"], r["age"]) for r in rows] == [
        (d.encode(), np.float32(a)) for _, _, a, _, _, d in PEOPLE
    ]

    # A date cast to bigint is its days since 1970 (Spark's CAST refuses a date to a number).
    as_days = ["convert", csv, str(data_dir), "--tfds", "as_days", "--split", "train"]
    assert cli.main([*as_days, "--cast", "signup_day:long"]) == 0
    assert capsys.readouterr().out.endswith(f"as_days/1.0.0 from {csv}\n")  # nothing mapped
    rows = people_rows(tfds, data_dir / "as_days" / "1.0.0")
    assert [int(r["signup_day"]) for r in rows] == [days(p[5]) for p in PEOPLE]

    # A timestamp column: int64 microseconds since 1970 (UTC), exact.
    stamps = tmp_path / "stamps.csv"
    stamps.write_text("id,at\n1,2024-01-05 10:00:00.123456\n2,1969-12-31 23:59:59.999999\n")
    micros = [
        r[0]
        for r in spark.sql(
            "SELECT unix_micros(timestamp'2024-01-05 10:00:00.123456') UNION ALL "
            "SELECT unix_micros(timestamp'1969-12-31 23:59:59.999999')"
        ).collect()
    ]
    assert (
        cli.main(["convert", str(stamps), str(data_dir), "--tfds", "at", "--split", "train"]) == 0
    )
    assert capsys.readouterr().out.endswith(
        "(at: timestamp as int64 microseconds since 1970-01-01)\n"
    )
    rows = people_rows(tfds, data_dir / "at" / "1.0.0")
    assert [int(r["at"]) for r in rows] == micros

    # features.json as TFDS writes it (FeaturesDict.save_config): its types, not the defaults.
    features = tfds.features.FeaturesDict(
        {
            "id": tfds.features.Scalar(np.int64),
            "name": tfds.features.Text(),
            "age": tfds.features.Scalar(np.int32),
            "height_m": tfds.features.Scalar(np.float32),
            "country": tfds.features.Text(),
            "signup_day": tfds.features.Text(),
        }
    )
    (tmp_path / "spec").mkdir()
    features.save_config(str(tmp_path / "spec"))
    given = ["convert", csv, str(data_dir), "--tfds", "given", "--split", "train"]
    spec = str(tmp_path / "spec" / "features.json")
    assert cli.main([*given, "--features", spec, "--cast", "signup_day:string"]) == 0
    capsys.readouterr()
    builder = tfds.builder_from_directory(str(data_dir / "given" / "1.0.0"))
    assert builder.info.features["age"].dtype == np.int32
    rows = people_rows(tfds, data_dir / "given" / "1.0.0")
    assert [(int(r["age"]), r["signup_day"]) for r in rows] == [
        (p[2], p[5].encode()) for p in PEOPLE
    ]


def test_tfds_errors_name_the_flags(
    spark, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = str(REPO / "examples" / "people.csv")
    tfds_args = ["convert", csv, str(tmp_path / "t"), "--tfds", "d", "--split", "train"]
    # A decimal has no exact TFDS feature: the message names --cast and --features.
    assert cli.main([*tfds_args, "--cast", "height_m:decimal(4,2)"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "spark-tfrecord: error: TFRecordArgumentException: [TFRECORD_TFDS_FEATURES] Column "
        "'height_m' has type decimal(4,2), which has no TFDS feature that decodes back to it. "
        "Cast it (--cast height_m:bigint, double or string), or give --features FILE. (give "
        "--cast COLUMN:TYPE or --features FILE; see docs/tfds.md)"
    ]
    assert cli.main([*tfds_args, "--cast", "nope:string"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "spark-tfrecord: error: --cast nope:string: no column 'nope' (the columns: id, name, "
        "age, height_m, country, signup_day) (see spark-tfrecord convert --help)"
    ]
    # Through Spark, a TFDS folder needs --split, and the message says so in the flag's words.
    from spark_tfrecord import write_tfds

    folder = write_tfds(spark.range(3), str(tmp_path / "d"), "ids", "train")
    assert cli.main(["inspect", folder, "--spark"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "spark-tfrecord: error: TFRecordArgumentException: [TFRECORD_DATASET_FOLDER] "
        f"file:{folder} is a TensorFlow Datasets folder: choose a split with --split NAME (its "
        "splits: train). (see docs/tfds.md)"
    ]
    assert cli.main(["inspect", folder, "--spark", "--split", "train"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "records: 3"

    not_json = tmp_path / "features.json"
    not_json.write_text("{nope")
    assert cli.main([*tfds_args, "--features", str(not_json)]) == 2
    assert capsys.readouterr().err.startswith(
        f"spark-tfrecord: error: --features {not_json} is not JSON: "
    )


def test_flags_are_checked_before_spark_starts(tmp_path: Path) -> None:
    no_spark = {"SPARK_HOME": "/nonexistent"}
    csv = str(REPO / "examples" / "people.csv")
    cast = run("convert", csv, str(tmp_path / "o"), "--cast", "signup_day", env=no_spark)
    assert cast.returncode == 2
    assert cast.stderr.splitlines() == [
        "spark-tfrecord: error: --cast takes COLUMN:TYPE, got 'signup_day' (a Spark SQL type: "
        "--cast signup_day:string, --cast price:double)"
    ]
    features = run("convert", csv, str(tmp_path / "o"), "--features", "f.json", env=no_spark)
    assert features.returncode == 2
    assert features.stderr.splitlines() == [
        "spark-tfrecord: error: --features need --tfds NAME (spark-tfrecord convert SRC "
        "DATA_DIR --tfds NAME --split train [--shards N])"
    ]
    # An existing destination: its own message and status, before Spark starts.
    (tmp_path / "people").mkdir()
    exists = run("convert", csv, str(tmp_path / "people"), env=no_spark)
    assert exists.returncode == 6
    assert exists.stderr.splitlines() == [
        f"spark-tfrecord: error: {tmp_path}/people already exists (use --mode overwrite or "
        "--mode append)"
    ]


def test_existing_destination_seen_by_spark(
    spark, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the command cannot look first (an object store), Spark's PATH_ALREADY_EXISTS."""
    monkeypatch.setattr(cli.convert, "_refuse_existing", lambda args: None)
    (tmp_path / "people").mkdir()
    csv = str(REPO / "examples" / "people.csv")
    assert cli.main(["convert", csv, str(tmp_path / "people")]) == 6
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "spark-tfrecord: error: AnalysisException: [PATH_ALREADY_EXISTS] Path file:"
    )
    assert lines[0].endswith(" (use --mode overwrite or --mode append)")


def test_the_pandas_warning_is_silenced_in_the_command_only(tmp_path: Path) -> None:
    before = list(warnings.filters)
    assert cli.main(["inspect", str(tmp_path / "nope")]) == 3
    assert warnings.filters == before


def test_inspect_many_files_prints_no_blank_line(tmp_path: Path) -> None:
    """Eight files or more once drew a progress bar on stdout, leaving a blank line."""
    for i in range(9):
        (tmp_path / f"part-{i}.tfrecord").write_bytes(GOOD * (i + 1))
    shown = run("inspect", str(tmp_path), "-n", "1")
    assert shown.returncode == 0, shown.stderr
    assert shown.stderr == ""
    assert shown.stdout.splitlines() == [
        f"files: 9, {len(GOOD) * 45:,} bytes",
        "records: 45",
        "root",
        " |-- id: long (nullable = true)",
        '{"id": 1}',
    ]


def test_inspect_globs_and_compression(tmp_path: Path) -> None:
    """TensorFlow's GZIP shards have no .gz in their names: --compression gzip reads them."""
    for shard in range(2):
        name = f"train.tfrecord-0000{shard}-of-00002"
        (tmp_path / name).write_bytes(gzip.compress(GOOD * (shard + 1)))
    (tmp_path / "other.tfrecord").write_bytes(GOOD)
    shown = run("inspect", f"{tmp_path}/train.tfrecord-*", "--compression", "gzip", "-n", "5")
    assert shown.returncode == 0, shown.stderr
    sizes = sum(p.stat().st_size for p in tmp_path.glob("train.tfrecord-*"))
    assert shown.stdout.splitlines() == [
        f"files: 2, {sizes:,} bytes",
        "records: 3",
        "root",
        " |-- id: long (nullable = true)",
        '{"id": 1}',
        '{"id": 1}',
        '{"id": 1}',
    ]
    none = run("inspect", f"{tmp_path}/test.tfrecord-*")
    assert none.returncode == 3
    assert none.stderr.splitlines() == [
        f"spark-tfrecord: error: no data files under {tmp_path}/test.tfrecord-* (is it the right "
        "path?)"
    ]
    not_tfds = run("inspect", str(tmp_path), "--split", "train")
    assert not_tfds.returncode == 2
    assert not_tfds.stderr.splitlines() == [
        f"spark-tfrecord: error: --split reads a TensorFlow Datasets folder, and {tmp_path} is "
        "not one (no dataset_info.json in it or in its one version folder) (inspect a TFDS "
        "dataset as DATA_DIR/NAME or DATA_DIR/NAME/VERSION)"
    ]


def test_inspect_detects_gzip_without_the_option(tmp_path: Path) -> None:
    """Needs the framing layer's detection of GZIP and ZLIB by their magic bytes (branch
    i30-source, TFRecordCompression / TFRecordReader): passes once it is merged."""
    (tmp_path / "train.tfrecord-00000-of-00001").write_bytes(gzip.compress(GOOD * 2))
    shown = run("inspect", str(tmp_path), "-n", "1")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[1:] == [
        "records: 2",
        "root",
        " |-- id: long (nullable = true)",
        '{"id": 1}',
    ]


def test_progress_goes_to_a_terminal_on_stderr_only(tmp_path: Path) -> None:
    """With stderr a terminal, the progress bar may draw there; stdout keeps the answer alone."""
    import pty

    for i in range(9):
        (tmp_path / f"part-{i}.tfrecord").write_bytes(GOOD)
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [*CLI, "inspect", str(tmp_path), "-n", "0"],
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 0
    assert done.stdout.splitlines() == [
        f"files: 9, {len(GOOD) * 9:,} bytes",
        "records: 9",
        "root",
        " |-- id: long (nullable = true)",
    ]
