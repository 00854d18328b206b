"""A map column, at any depth, is refused with our own condition, naming the column and what to
store instead: a feature is a flat list of one kind, and a map has no TensorFlow kind."""

from __future__ import annotations

from pathlib import Path

import pytest

import spark_tfrecord
from spark_tfrecord import errors

INSTEAD = "Store its keys and values as two array columns"

CASES = [
    ("id long, props map<string,bigint>", "props", "Column 'props' has type map<string,bigint>"),
    (
        "id long, meta struct<n long, tags map<string,string>>",
        "meta.tags",
        "Field 'meta.tags' of column 'meta' has type map<string,string>",
    ),
    (
        "id long, boxes array<struct<tags map<string,float>>>",
        "boxes.tags",
        "Field 'boxes.tags' of column 'boxes' has type map<string,float>",
    ),
    (
        "id long, many array<map<string,bigint>>",
        "many",
        "Column 'many' (array<map<string,bigint>>) holds a map<string,bigint>",
    ),
]


def _check(err: pytest.ExceptionInfo[BaseException], column: str, first: str) -> None:
    assert errors.condition(err.value) == errors.UNSUPPORTED_TYPE
    assert errors.parameters(err.value)["column"] == column
    message = str(err.value)
    assert f"[TFRECORD_UNSUPPORTED_TYPE] {first}, which TFRecord cannot hold" in message
    assert "a map has no TensorFlow kind" in message and INSTEAD in message
    assert "to_json(" in message


@pytest.mark.parametrize("schema,column,first", CASES)
def test_writing_a_map_names_the_column(spark, out: Path, schema: str, column: str, first):
    df = spark.createDataFrame([], schema)
    with pytest.raises(Exception) as err:
        df.write.format("tfrecord").save(str(out))
    _check(err, column, first)
    assert not out.exists() or not list(out.glob("part-*"))


@pytest.mark.parametrize("schema,column,first", CASES)
def test_reading_with_a_map_names_the_column(spark, tmp_path: Path, schema: str, column, first):
    path = tmp_path / "data"
    spark_tfrecord.write(spark.range(3), str(path))
    with pytest.raises(Exception) as err:
        spark.read.format("tfrecord").schema(schema).load(str(path)).collect()
    _check(err, column, first)
