"""A column that cannot be read or written as asked fails naming it: maps (at any depth), nested
columns (structs, arrays of structs, path-named features) and SequenceExample feature lists, and
TensorFlow feature specs.

Maps: refused with our own condition, naming the column and what to store instead: a feature is
a flat list of one kind, and a map has no TensorFlow kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import Row

import spark_tfrecord
from spark_tfrecord import errors
from support import write_with_tensorflow
from test_sequence_example import ROWS, SCHEMA  # the SequenceExample rows the tests there write

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


# --- nested columns ----------------------------------------------------------------------------


def test_leaf_and_prefix_is_an_error_naming_both(spark, tf, tmp_path: Path) -> None:
    example = tf.train.Example(
        features=tf.train.Features(
            feature={
                "a": tf.train.Feature(int64_list=tf.train.Int64List(value=[1])),
                "a/b": tf.train.Feature(int64_list=tf.train.Int64List(value=[2])),
            }
        )
    )
    write_with_tensorflow(tf, tmp_path / "t", [example])
    with pytest.raises(Exception, match=r"'a' is a feature and also the path of the feature 'a/b'"):
        spark_tfrecord.read(spark, str(tmp_path / "t"), inferNesting=True).schema  # noqa: B018
    # Without inferNesting: today's flat columns.
    assert sorted(spark_tfrecord.read(spark, str(tmp_path / "t")).columns) == ["a", "a/b"]


def test_unequal_lists_are_an_error_naming_column_and_file(spark, tf, tmp_path: Path) -> None:
    def example(n: int, xs: list[float], labels: list[int]) -> object:
        return tf.train.Example(
            features=tf.train.Features(
                feature={
                    "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[n])),
                    "boxes/x": tf.train.Feature(float_list=tf.train.FloatList(value=xs)),
                    "boxes/label": tf.train.Feature(int64_list=tf.train.Int64List(value=labels)),
                }
            )
        )

    write_with_tensorflow(
        tf,
        tmp_path / "t",
        [example(1, [0.5], [1]), example(2, [0.5, 1.0], [1]), example(3, [], [])],
    )
    schema = "id long, boxes array<struct<x float, label bigint>>"
    path = str(tmp_path / "t")
    with pytest.raises(
        Exception, match=r"Column 'boxes' .*'boxes/x' 2, 'boxes/label' 1.*od\.tfrecord"
    ):
        spark_tfrecord.read(spark, path, schema=schema).collect()
    dropped = spark_tfrecord.read(spark, path, schema=schema, mode="DROPMALFORMED")
    assert sorted(tuple(r) for r in dropped.collect()) == [(1, [(0.5, 1)]), (3, [])]
    permissive = spark_tfrecord.read(
        spark, path, schema=schema + ", _corrupt_record binary", mode="PERMISSIVE"
    ).collect()
    bad = [r for r in permissive if r._corrupt_record is not None]
    assert len(bad) == 1 and bad[0].id is None and bad[0].boxes is None
    # A missing list leaves the field null in every element.
    only_x = spark_tfrecord.read(
        spark, path, schema="id long, boxes array<struct<x float, y float>>"
    )
    assert sorted(tuple(r) for r in only_x.where("id = 1").collect()) == [(1, [(0.5, None)])]


def test_what_cannot_be_written_fails_naming_the_column(spark, out: Path) -> None:
    deep = spark.createDataFrame(
        [(1, [([(1,)],)])], "id long, boxes array<struct<xs array<struct<y long>>>>"
    )
    with pytest.raises(
        Exception, match=r"Column 'boxes.xs' has type array<struct<y:bigint>>: an array of structs"
    ):
        spark_tfrecord.write(deep, str(out))
    assert not out.exists()
    # A list in an array of structs: ragged in an Example (test_ragged.py), a sequence of steps
    # in a SequenceExample.
    lists = spark.createDataFrame(
        [(1, [([1, 2],)])], "id long, boxes array<struct<xs array<long>>>"
    )
    spark_tfrecord.write(lists, str(out), record_type="SequenceExample")
    back = spark_tfrecord.read(
        spark, str(out), record_type="SequenceExample", schema=lists.schema
    ).collect()
    assert [tuple(r) for r in back] == [(1, [Row(xs=[1, 2])])]
    nulls = spark.createDataFrame([(1, [(1,), None])], "id long, boxes array<struct<x long>>")
    with pytest.raises(
        Exception, match=r"Column 'boxes.x': element 1 of its array of structs is null"
    ):
        spark_tfrecord.write(nulls, str(out / "nulls"))
    same = spark.createDataFrame([(1, (2,))], "`a/b` long, a struct<b long>")
    with pytest.raises(Exception, match=r"Columns 'a/b' and 'a.b' would both be the feature 'a/b'"):
        spark_tfrecord.write(same, str(out / "same"))
    # Another separator resolves it.
    spark_tfrecord.write(same, str(out / "dots"), pathSeparator=".")
    back = spark_tfrecord.read(spark, str(out / "dots"), pathSeparator=".", inferNesting=True)
    assert back.schema.simpleString() == "struct<a/b:bigint,a:struct<b:bigint>>"
    assert [tuple(r) for r in back.collect()] == [(1, Row(b=2))]


def test_a_step_with_many_values_for_a_single_field(spark, out: Path) -> None:
    df = spark.createDataFrame(
        [(1, [["a", "b"], []])], "id long, `events/kind` array<array<string>>"
    )
    spark_tfrecord.write(df, str(out), record_type="SequenceExample")
    schema = "id long, events array<struct<kind string>>"
    with pytest.raises(Exception, match=r"step 0 of feature list 'events/kind' holds 2"):
        spark_tfrecord.read(spark, str(out), record_type="SequenceExample", schema=schema).collect()
    fine = spark_tfrecord.read(
        spark,
        str(out),
        record_type="SequenceExample",
        schema="id long, events array<struct<kind array<string>>>",
    )
    assert [tuple(r) for r in fine.collect()] == [(1, [Row(kind=["a", "b"]), Row(kind=[])])]


# --- SequenceExample feature lists -----------------------------------------------------------


def test_shape_mismatches_name_the_column(spark, out: Path) -> None:
    df = spark.createDataFrame(ROWS, SCHEMA)
    spark_tfrecord.write(df, str(out), record_type="SequenceExample")
    with pytest.raises(
        Exception,
        match=r"Column 'frames' \(array<float>\) is read from a single feature",
    ):
        spark_tfrecord.read(
            spark, str(out), record_type="SequenceExample", schema="frames array<float>"
        ).collect()
    with pytest.raises(
        Exception,
        match=r"'tokens' \(array<array<bigint>>\) is read from a SequenceExample feature list",
    ):
        spark_tfrecord.read(
            spark, str(out), record_type="SequenceExample", schema="tokens array<array<long>>"
        ).collect()


def test_null_step_names_the_column(spark, out: Path) -> None:
    df = spark.createDataFrame([([[1], None],)], "steps array<array<long>>")
    with pytest.raises(Exception, match="'steps' holds an array with a null element at index 1"):
        spark_tfrecord.write(df, str(out), record_type="SequenceExample")


# --- TensorFlow feature specs ----------------------------------------------------------------


def test_feature_spec_refuses_what_has_no_layout_naming_the_column(spark) -> None:
    deep = spark.createDataFrame([], "x array<array<array<int>>>").schema
    with pytest.raises(ValueError, match="Column 'x' is an array of arrays of arrays"):
        spark_tfrecord.feature_spec(deep, record_type="SequenceExample")
    inner = spark.createDataFrame([], "e array<struct<x array<array<int>>>>").schema
    with pytest.raises(
        ValueError, match=r"Column 'e\.x': an array of structs in a SequenceExample"
    ):
        spark_tfrecord.feature_spec(inner, record_type="SequenceExample")
