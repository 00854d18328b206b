"""The first line a PySpark user reads for each kind of error (docs/errors.md, "What Python
shows"): our condition and message, with the file, the byte offset and the column.

Errors found while planning are PySpark's own `IllegalArgumentException`, whose text is ours.
A task's error is a `Py4JJavaError` whose Java causes hold ours: `configure()` (which made the
suite's session) installs `spark_tfrecord.install_exception_handler`, which raises it as
a `TFRecordJavaError`, a `Py4JJavaError` still, whose text starts with ours. Spark Connect
clients are in test_connect.py.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any, Callable

import py4j.protocol
import pytest
from py4j.protocol import Py4JJavaError

import spark_tfrecord
from spark_tfrecord import errors
from spark_tfrecord._spark.errors import TFRecordJavaError
from support.tfrecord_bytes import entry, example, feature, frame, int64_list_packed

GOOD = frame(example(entry(b"x", feature("int64", int64_list_packed([1, 2, 3])))))
CAPTURED = "pyspark.errors.exceptions.captured"


def raised(action: Callable[[], object]) -> Any:
    with pytest.raises(Exception) as err:
        action()
    return err.value


def first_lines(e: BaseException) -> tuple[str, str]:
    """The first line of str(e), and of the exception's line in a printed traceback."""
    return str(e).splitlines()[0], traceback.format_exception_only(type(e), e)[0].splitlines()[0]


def bad_length_crc(tmp_path: Path) -> Path:
    """A file whose second record's length checksum is wrong, at byte offset len(GOOD)."""
    bad = bytearray(GOOD)
    bad[8] ^= 1
    path = tmp_path / "bad" / "a.tfrecord"
    path.parent.mkdir()
    path.write_bytes(GOOD + bytes(bad))
    return path


def test_a_bad_option_is_pysparks_illegal_argument_with_ours_first(spark, tmp_path: Path) -> None:
    (tmp_path / "a.tfrecord").write_bytes(GOOD)
    e = raised(
        lambda: spark.read.format("tfrecord").option("recordType", "Examples").load(str(tmp_path))
    )
    line = (
        "[TFRECORD_INVALID_OPTION] Invalid value 'Examples' for TFRecord option 'recordType'. "
        "Valid values: Example, SequenceExample, ByteArray."
    )
    assert first_lines(e) == (line, f"{CAPTURED}.IllegalArgumentException: {line}")


@pytest.mark.parametrize("action", ["collect", "count"])
def test_a_corrupt_file_read_names_condition_file_and_offset_first(
    spark, tmp_path: Path, action: str
) -> None:
    path = bad_length_crc(tmp_path)
    df = spark.read.format("tfrecord").schema("x array<long>").load(str(path.parent))
    e = raised(getattr(df, action))
    line = (
        "[TFRECORD_CORRUPT_RECORD.LENGTH_CHECKSUM] Corrupt TFRecord: length checksum mismatch "
        f"at byte offset {len(GOOD)} of file:{path}"
    )
    assert first_lines(e) == (line, f"spark_tfrecord._spark.errors.TFRecordJavaError: {line}")
    # What a program caught before, and everything it had: the Java error, Py4J's text.
    assert isinstance(e, Py4JJavaError) and isinstance(e, TFRecordJavaError)
    assert e.java_exception is e.py4j_error.java_exception
    call = "collectToPython" if action == "collect" else "count"
    assert str(e).splitlines()[1].startswith("An error occurred while calling o")
    assert str(e).splitlines()[1].endswith(f".{call}.")
    assert str(e).endswith(str(e.py4j_error))
    assert e.__cause__ is None and e.__suppress_context__
    assert errors.condition(e) == e.condition == errors.LENGTH_CHECKSUM
    assert errors.matches(e, errors.CORRUPT_RECORD)
    assert errors.parameters(e) == e.parameters
    assert e.parameters["offset"] == str(len(GOOD)) and e.parameters["path"] == f"file:{path}"


def test_inference_over_a_corrupt_file_names_it_first(spark, tmp_path: Path) -> None:
    path = bad_length_crc(tmp_path)
    e = raised(lambda: spark.read.format("tfrecord").load(str(path.parent)))
    assert first_lines(e)[0] == (
        "[TFRECORD_CORRUPT_RECORD.LENGTH_CHECKSUM] Corrupt TFRecord: length checksum mismatch "
        f"at byte offset {len(GOOD)} of file:{path}"
    )


def test_a_value_that_does_not_fit_on_read_names_column_file_and_offset_first(
    spark, tmp_path: Path
) -> None:
    (tmp_path / "a.tfrecord").write_bytes(GOOD)
    e = raised(lambda: spark.read.format("tfrecord").schema("x long").load(str(tmp_path)).collect())
    assert first_lines(e)[0] == (
        "[TFRECORD_DATA_MISMATCH] Column 'x' (bigint) is a scalar but the feature holds 3 "
        "values; read it as array<bigint> to get them all, in the record at byte offset 0 of "
        f"file:{tmp_path / 'a.tfrecord'}"
    )


def test_a_value_that_does_not_fit_on_write_names_the_column_first(spark, tmp_path: Path) -> None:
    df = spark.createDataFrame([(1, [1, None])], "id long, a array<long>")
    e = raised(lambda: df.write.format("tfrecord").save(str(tmp_path / "w")))
    # The row's place: where its record would start in the file the task was writing.
    line = (
        "[TFRECORD_DATA_MISMATCH] Column 'a' holds an array with a null element at index 1: "
        "TFRecord feature lists cannot hold nulls. Drop or fill them first (for example with "
        "filter(x -> x IS NOT NULL) or coalesce), in the record at byte offset 0 of file:"
    )
    text, printed = first_lines(e)
    assert text.startswith(line) and text.endswith(".tfrecord"), text
    assert printed == f"spark_tfrecord._spark.errors.TFRecordJavaError: {text}"
    assert str(e).splitlines()[1].endswith(".save.")
    assert errors.parameters(e)["column"] == "a"


def test_a_type_or_schema_error_at_planning_is_ours_first(spark, tmp_path: Path) -> None:
    nested = spark.createDataFrame([([[[1]]],)], "t array<array<array<long>>>")
    writer = nested.write.format("tfrecord").option("recordType", "SequenceExample")
    e = raised(lambda: writer.save(str(tmp_path / "n")))
    text, printed = first_lines(e)
    assert text.startswith(
        "[TFRECORD_UNSUPPORTED_TYPE] Column 't' has type array<array<array<bigint>>>, which "
        "recordType SequenceExample cannot hold. Supported: boolean, "
    ), text
    assert printed == f"{CAPTURED}.IllegalArgumentException: {text}"

    (tmp_path / "a.tfrecord").write_bytes(GOOD)
    reader = spark.read.format("tfrecord").option("recordType", "ByteArray")
    e = raised(lambda: reader.schema("a binary, b binary").load(str(tmp_path)).collect())
    line = (
        "[TFRECORD_INVALID_SCHEMA] recordType ByteArray reads exactly one binary column (named "
        "'byteArray' on read), but the schema is struct<a:binary,b:binary>."
    )
    assert first_lines(e) == (line, f"{CAPTURED}.IllegalArgumentException: {line}")


def test_an_error_that_is_not_ours_is_left_as_it_was(spark, tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.parquet").write_bytes(b"not parquet at all")
    e = raised(lambda: spark.read.schema("x long").parquet(str(tmp_path / "p")).collect())
    assert type(e) is Py4JJavaError
    assert str(e).startswith("An error occurred while calling o")
    assert errors.condition(e) is None


def test_a_session_started_later_keeps_it_and_installing_again_wraps_once(
    spark, tmp_path: Path
) -> None:
    wrapped = py4j.protocol.get_return_value
    spark_tfrecord.install_exception_handler()
    assert py4j.protocol.get_return_value is wrapped
    assert not getattr(wrapped.__wrapped__, "_spark_tfrecord", False)
    # A new session runs PySpark's installer again, over the get_return_value wrapped here.
    other = spark.newSession()
    path = bad_length_crc(tmp_path)
    e = raised(
        lambda: other.read.format("tfrecord").schema("x array<long>").load(str(path)).collect()
    )
    assert isinstance(e, TFRecordJavaError)
    assert first_lines(e)[0].startswith("[TFRECORD_CORRUPT_RECORD.LENGTH_CHECKSUM] ")
