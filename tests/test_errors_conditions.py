"""Errors carry Spark's error conditions (docs/errors.md): each case is matched on its condition
and its message parameters, the way a PySpark program matches them, never on the text.

Errors found while planning reach PySpark as its own `IllegalArgumentException`, whose
`getCondition()` (Spark 4) / `getErrorClass()` (3.5) is ours; errors of a task arrive inside
Spark's `FAILED_READ_FILE` / `TASK_WRITE_FAILED`, and `spark_tfrecord.errors` finds ours in the
cause. A Spark Connect client is tested in test_connect.py, the CLI's exit codes in test_cli.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pyspark
import pytest
from pyspark.errors import IllegalArgumentException

from spark_tfrecord import errors
from support.tfrecord_bytes import (
    entry,
    example,
    feature,
    frame,
    int64_list_packed,
    lying_header,
    write_records,
)

SPARK_3 = pyspark.__version__.startswith("3.")
GOOD = frame(example(entry(b"x", feature("int64", int64_list_packed([1, 2, 3])))))


def spark_condition(e: Any) -> str | None:
    """What PySpark itself says the condition is: getCondition on 4.x, getErrorClass on 3.5."""
    return e.getErrorClass() if SPARK_3 else e.getCondition()


def raised(action: Callable[[], object]) -> BaseException:
    with pytest.raises(Exception) as err:
        action()
    return err.value


def test_an_invalid_option_is_pysparks_illegal_argument_with_our_condition(
    spark, tmp_path: Path
) -> None:
    df = spark.createDataFrame([(1,)], "id long")
    e = raised(
        lambda: (
            df.write.format("tfrecord").option("recordType", "Exampel").save(str(tmp_path / "w"))
        )
    )
    assert isinstance(e, IllegalArgumentException), type(e)
    assert spark_condition(e) == errors.INVALID_OPTION
    assert e.getSqlState() == "42K06"
    params = e.getMessageParameters()
    assert (params["option"], params["value"], params["valid"]) == (
        "recordType",
        "Exampel",
        "Example, SequenceExample, ByteArray",
    )
    assert str(e).startswith(
        "[TFRECORD_INVALID_OPTION] Invalid value 'Exampel' for TFRecord option 'recordType'."
    )
    assert errors.condition(e) == errors.INVALID_OPTION
    assert errors.parameters(e) == dict(params)


def test_planning_errors_of_each_kind(spark, tmp_path: Path) -> None:
    nested = spark.createDataFrame([([[[1]]],)], "t array<array<array<long>>>")
    writer = nested.write.format("tfrecord").option("recordType", "SequenceExample")
    e = raised(lambda: writer.save(str(tmp_path / "nested")))
    assert spark_condition(e) == errors.UNSUPPORTED_TYPE
    assert errors.parameters(e)["column"] == "t"
    assert errors.parameters(e)["recordType"] == "SequenceExample"

    two = spark.createDataFrame([(b"a", b"b")], "a binary, b binary")
    e = raised(
        lambda: (
            two.write.format("tfrecord").option("recordType", "ByteArray").save(str(tmp_path / "b"))
        )
    )
    assert spark_condition(e) == errors.INVALID_SCHEMA

    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "a.tfrecord").write_bytes(b"")
    e = raised(lambda: spark.read.format("tfrecord").load(str(tmp_path / "empty")))
    assert spark_condition(e) == errors.CANNOT_INFER_SCHEMA

    e = raised(
        lambda: spark.read.format("tfrecord").option("split", "train").load(str(tmp_path / "empty"))
    )
    assert spark_condition(e) == errors.DATASET_FOLDER


def damaged(tmp_path: Path) -> dict[str, tuple[Path, dict[str, str], int]]:
    """Files whose one error is known: (file, options, offset of the bad record)."""
    offset = len(GOOD)
    bad_length_crc = bytearray(GOOD)
    bad_length_crc[8] ^= 1
    bad_data_crc = bytearray(GOOD)
    bad_data_crc[-1] ^= 1
    files = {
        errors.TRUNCATED: (GOOD + GOOD[:-3], {}),
        errors.LENGTH_CHECKSUM: (GOOD + bytes(bad_length_crc), {}),
        errors.DATA_CHECKSUM: (GOOD + bytes(bad_data_crc), {}),
        errors.RECORD_TOO_LARGE: (GOOD + lying_header(1 << 40), {}),
        errors.MALFORMED_RECORD: (GOOD + frame(b"\x0a\x05\x0a"), {}),
    }
    out = {}
    for condition, (data, options) in files.items():
        path = tmp_path / condition.lower().replace(".", "-") / "part-0.tfrecord"
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        out[condition] = (path, options, offset)
    gz = tmp_path / "not-gzip" / "part-0.tfrecord.gz"
    gz.parent.mkdir()
    gz.write_bytes(GOOD)
    out[errors.UNREADABLE] = (gz, {}, 0)
    return out


@pytest.mark.parametrize(
    "condition",
    [
        errors.TRUNCATED,
        errors.LENGTH_CHECKSUM,
        errors.DATA_CHECKSUM,
        errors.RECORD_TOO_LARGE,
        errors.MALFORMED_RECORD,
        errors.UNREADABLE,
    ],
)
def test_a_damaged_file_names_its_condition_file_and_offset(
    spark, tmp_path: Path, condition: str
) -> None:
    path, options, offset = damaged(tmp_path)[condition]
    reader = spark.read.format("tfrecord").schema("x array<long>").options(**options)
    e = raised(lambda: reader.load(str(path.parent)).collect())
    assert errors.condition(e) == condition
    assert errors.matches(e, errors.CORRUPT_RECORD) == condition.startswith(errors.CORRUPT_RECORD)
    params = errors.parameters(e)
    assert params["path"].endswith(path.name) and params["offset"] == str(offset), params
    # Ours is a cause: on the outside is Spark's own error, as for Parquet or JSON.
    assert errors.from_java(e.java_exception) is None  # type: ignore[attr-defined]
    # count() needs no column: framing errors still fail it, a malformed payload does not.
    if condition == errors.MALFORMED_RECORD:
        assert reader.load(str(path.parent)).count() == 2
    else:
        assert errors.condition(raised(lambda: reader.load(str(path.parent)).count())) == condition


def test_a_value_that_does_not_fit_names_file_offset_and_column(spark, tmp_path: Path) -> None:
    write_records(tmp_path / "d" / "a.tfrecord", [example(), GOOD[12:-4]])
    e = raised(
        lambda: spark.read.format("tfrecord").schema("x long").load(str(tmp_path / "d")).collect()
    )
    assert errors.condition(e) == errors.DATA_MISMATCH
    params = errors.parameters(e)
    assert params["column"] == "x" and params["offset"] == str(len(frame(example()))), params
    assert params["path"].endswith("a.tfrecord")
    assert "is a scalar but the feature holds 3 values" in params["reason"]


def test_a_write_of_a_value_tfrecord_cannot_hold_names_the_column(spark, tmp_path: Path) -> None:
    df = spark.createDataFrame([(1, [1, None])], "id long, a array<long>")
    e = raised(lambda: df.write.format("tfrecord").save(str(tmp_path / "w")))
    assert errors.condition(e) == errors.DATA_MISMATCH
    assert errors.parameters(e)["column"] == "a"
    assert "null element at index 1" in errors.parameters(e)["reason"]
    assert errors.condition(ValueError("not a Spark error")) is None
    assert errors.parameters(ValueError("not a Spark error")) == {}


def test_the_conditions_are_those_docs_errors_md_lists() -> None:
    doc = (Path(__file__).resolve().parent.parent / "docs" / "errors.md").read_text()
    listed = {line.split("`")[1] for line in doc.splitlines() if line.startswith("| `TFRECORD_")}
    assert listed == set(errors.CONDITIONS)
