"""Lists of lists in Example records, written ragged as TensorFlow Datasets writes a ragged
tensor (x/ragged_flat_values, x/ragged_row_lengths_0 … _{d-2}): parsed by TensorFlow with
feature_spec's tf.io.RaggedFeature, read back by us exactly, read from files TensorFlow wrote,
refused with the column and the row's place when they hold a null, and inferred."""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import Row

import spark_tfrecord
from support import tfrecord_files, write_with_tensorflow
from test_planning_warnings import driver_log

pytestmark = pytest.mark.tensorflow

NAN_BITS = 0x7FC00001  # a NaN with a payload: its bits must survive
NAN = struct.unpack("<f", struct.pack("<I", NAN_BITS))[0]


def f32(x: float) -> float:
    """``x`` rounded to float32, as float_list holds it."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bits(x: Any) -> Any:
    """Floats anywhere in ``x`` as their float32 bits, so that NaN and -0.0 compare exactly."""
    if isinstance(x, float):
        return struct.unpack("<I", struct.pack("<f", x))[0]
    if isinstance(x, (list, tuple)):
        return [bits(v) for v in x]
    return x


def parsed(tf: Any, out: Path, spec: dict[str, Any]) -> dict[str, Any]:
    files = [str(p) for p in tfrecord_files(out)]
    batch = next(iter(tf.data.TFRecordDataset(files).batch(64)))
    return tf.io.parse_example(batch, spec)


DEPTHS = [
    (1, [[1, 2], [], [-(2**63)]], [[[0.5], []], [], [[-0.0, 2.5, NAN]]], [["a", ""], ["é"]]),
    (2, [], [], []),
    (3, [[], []], [[[]], [[], [1.0]]], [[]]),
]
DEPTHS_DDL = "id long not null, x array<array<long>>, y array<array<array<float>>>, " + (
    "s array<array<string>>"
)


def test_depth_2_and_3_parse_example_gives_ragged_tensors_equal_to_the_columns(
    spark, tf, out: Path
) -> None:
    df = spark.createDataFrame(DEPTHS, DEPTHS_DDL)
    spark_tfrecord.write(df.coalesce(1), str(out))
    spec = spark_tfrecord.feature_spec(df.schema)
    assert spec["x"] == tf.io.RaggedFeature(
        tf.int64,
        value_key="x/ragged_flat_values",
        partitions=[tf.io.RaggedFeature.RowLengths("x/ragged_row_lengths_0")],
        row_splits_dtype=tf.int64,
    )
    assert [p.key for p in spec["y"].partitions] == [
        "y/ragged_row_lengths_0",
        "y/ragged_row_lengths_1",
    ]
    got = parsed(tf, out, spec)
    order = got["id"].numpy().tolist()
    assert sorted(order) == [1, 2, 3]
    want = {r[0]: r for r in DEPTHS}
    for column, at in (("x", 1), ("y", 2), ("s", 3)):
        tensor = got[column]
        assert isinstance(tensor, tf.RaggedTensor), column
        assert tensor.ragged_rank == (2 if column != "y" else 3), column
        rows = tensor.to_list()
        expected = [want[i][at] for i in order]
        if column == "s":
            expected = [[[v.encode() for v in inner] for inner in outer] for outer in expected]
        assert bits(rows) == bits(expected), column


def test_lists_inside_arrays_of_structs_parse_per_leaf(spark, tf, out: Path) -> None:
    ddl = "id long not null, x array<struct<n long, tokens array<string>, m array<array<float>>>>"
    rows = [
        (1, [(7, ["a", "b"], [[0.5], []]), (8, [], []), (9, ["c"], [[1.0, -0.0]])]),
        (2, []),
    ]
    df = spark.createDataFrame(rows, ddl)
    spark_tfrecord.write(df.coalesce(1), str(out))
    spec = spark_tfrecord.feature_spec(df.schema)
    assert spec["x/tokens"].value_key == "x/tokens/ragged_flat_values"
    assert [p.key for p in spec["x/m"].partitions] == [
        "x/m/ragged_row_lengths_0",
        "x/m/ragged_row_lengths_1",
    ]
    got = parsed(tf, out, spec)
    order = got["id"].numpy().tolist()
    want = {r[0]: r[1] for r in rows}
    assert got["x/n"].to_list() == [[e[0] for e in want[i]] for i in order]
    assert got["x/tokens"].to_list() == [
        [[t.encode() for t in e[1]] for e in want[i]] for i in order
    ]
    assert bits(got["x/m"].to_list()) == bits([[e[2] for e in want[i]] for i in order])
    # And back through us, as written.
    back = spark_tfrecord.read(spark, str(out), schema=ddl).orderBy("id").collect()
    assert [(r.id, [tuple(e) for e in r.x]) for r in back] == [
        (1, [(7, ["a", "b"], [[0.5], []]), (8, [], []), (9, ["c"], [[1.0, -0.0]])]),
        (2, []),
    ]


def test_files_tensorflow_wrote_in_the_ragged_layout_read_exactly(
    spark, tf, tmp_path: Path
) -> None:
    def ragged_features(name: str, value: Any, kind: str) -> dict[str, Any]:
        """The features TFDS's serializer writes for a ragged value: its flat values and the
        row lengths of each level, from TensorFlow's own RaggedTensor."""
        rt = tf.ragged.constant(value, dtype={"int64": tf.int64, "float": tf.float32}.get(kind))
        flat = rt.flat_values.numpy().tolist() if kind != "bytes" else value_bytes(value)
        lists = {
            "int64": lambda v: tf.train.Feature(int64_list=tf.train.Int64List(value=v)),
            "float": lambda v: tf.train.Feature(float_list=tf.train.FloatList(value=v)),
            "bytes": lambda v: tf.train.Feature(bytes_list=tf.train.BytesList(value=v)),
        }
        out = {f"{name}/ragged_flat_values": lists[kind](flat)}
        for k, lengths in enumerate(rt.nested_row_lengths()):
            out[f"{name}/ragged_row_lengths_{k}"] = lists["int64"](lengths.numpy().tolist())
        return out

    def value_bytes(value: Any) -> list[bytes]:
        return [b for outer in value for b in outer]

    longs = [[-(2**63), 2**63 - 1], [], [0]]
    floats = [[[NAN, -0.0]], [], [[], [float("inf")]]]
    blobs = [[b"\xff\xfe", b""], [b"ok"]]
    example = tf.train.Example(
        features=tf.train.Features(
            feature={
                "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[1])),
                **ragged_features("x", longs, "int64"),
                **ragged_features("f", floats, "float"),
                **ragged_features("b", blobs, "bytes"),
            }
        )
    )
    # An empty outer list: both features, empty.
    empty = tf.train.Example(
        features=tf.train.Features(
            feature={
                "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[2])),
                "x/ragged_flat_values": tf.train.Feature(int64_list=tf.train.Int64List()),
                "x/ragged_row_lengths_0": tf.train.Feature(int64_list=tf.train.Int64List()),
            }
        )
    )
    write_with_tensorflow(tf, tmp_path / "tf", [example, empty])
    schema = "id long, x array<array<long>>, f array<array<array<float>>>, b array<array<binary>>"
    rows = spark_tfrecord.read(spark, str(tmp_path / "tf"), schema=schema).orderBy("id").collect()
    assert rows[0].x == longs
    assert bits(rows[0].f) == bits(floats)
    assert [[bytes(v) for v in inner] for inner in rows[0].b] == blobs
    assert (rows[1].x, rows[1].f, rows[1].b) == ([], None, None)
    # Inferred: one column per list of lists, of its depth (bytes not UTF-8: binary), in the
    # order TensorFlow wrote the features (its own).
    inferred = spark_tfrecord.read(spark, str(tmp_path / "tf"))
    assert {f.name: f.dataType.simpleString() for f in inferred.schema.fields} == {
        "id": "bigint",
        "x": "array<array<bigint>>",
        "f": "array<array<array<float>>>",
        "b": "array<array<binary>>",
    }
    first = inferred.orderBy("id").collect()[0]
    assert (first.x, bits(first.f)) == (longs, bits(floats))


def test_round_trip_keeps_bits_empty_lists_strings_and_binaries(spark, out: Path) -> None:
    ddl = (
        "id long, l array<array<long>>, f array<array<float>>, d array<array<double>>, "
        "s array<array<string>>, b array<array<binary>>, deep array<array<array<int>>>"
    )
    rows = [
        (
            1,
            [[2**63 - 1, -(2**63)], []],
            [[NAN, -0.0, float("-inf")], []],
            [[0.1, -0.0]],
            [["", "漢"], []],
            [[bytearray(b"\xff\x00")], [bytearray()]],
            [[[1], []], [], [[-2, 3]]],
        ),
        (2, [], [], [], [], [], []),
        (3, None, None, None, None, None, None),
    ]
    df = spark.createDataFrame(rows, ddl)
    spark_tfrecord.write(df, str(out))
    back = {r.id: r for r in spark_tfrecord.read(spark, str(out), schema=ddl).collect()}
    one = back[1]
    assert one.l == rows[0][1]
    assert bits(one.f) == bits(rows[0][2])
    # Doubles are written as float32: their rounding, -0.0 kept.
    assert bits(one.d) == bits([[f32(0.1), -0.0]])
    assert math.copysign(1.0, one.d[0][1]) == -1.0
    assert one.s == [["", "漢"], []]
    assert [[bytes(v) for v in inner] for inner in one.b] == [[b"\xff\x00"], [b""]]
    assert one.deep == rows[0][6]
    assert tuple(back[2])[1:] == ([], [], [], [], [], [])
    assert tuple(back[3])[1:] == (None,) * 6


@pytest.mark.parametrize(
    "ddl,value,message",
    [
        ("x array<array<long>>", [[1], None], "Column 'x' holds a null list at [1]"),
        ("x array<array<long>>", [[], [1, None]], "Column 'x' holds a null value at [1][1]"),
        (
            "x array<array<array<string>>>",
            [[["a"], ["b", None]]],
            "Column 'x' holds a null value at [0][1][1]",
        ),
        (
            "x array<struct<tokens array<string>>>",
            [(["a"],), ([None],)],
            "Column 'x.tokens' holds a null value at [1][0]",
        ),
    ],
)
def test_a_null_inner_list_or_element_fails_naming_the_column_and_the_rows_place(
    spark, out: Path, ddl: str, value: Any, message: str
) -> None:
    df = spark.createDataFrame([(1, None), (2, value)], f"id long, {ddl}")
    with pytest.raises(Exception) as err:
        spark_tfrecord.write(df.orderBy("id").coalesce(1), str(out))
    text = str(err.value).splitlines()[0]
    assert message in text, text
    # The row's place: its record would start after the first row's record in the file.
    assert ", in the record at byte offset " in text and ".tfrecord" in text, text
    assert ", in the record at byte offset 0 " not in text, text


def test_malformed_ragged_records_follow_the_read_mode(spark, tf, tmp_path: Path) -> None:
    def example(i: int, lengths: list[int], values: list[int]) -> Any:
        feature = {
            "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
            "x/ragged_row_lengths_0": tf.train.Feature(
                int64_list=tf.train.Int64List(value=lengths)
            ),
            "x/ragged_flat_values": tf.train.Feature(int64_list=tf.train.Int64List(value=values)),
        }
        return tf.train.Example(features=tf.train.Features(feature=feature))

    # Record 2's row lengths add up to 3 for 2 values.
    write_with_tensorflow(tf, tmp_path / "tf", [example(1, [1], [4]), example(2, [2, 1], [5, 6])])
    path, schema = str(tmp_path / "tf"), "id long, x array<array<long>>"
    with pytest.raises(Exception) as err:
        spark_tfrecord.read(spark, path, schema=schema).collect()
    text = str(err.value)
    assert (
        "Column 'x' (array<array<bigint>>) has row lengths in 'x/ragged_row_lengths_0' that add "
        "up to 3, but 'x/ragged_flat_values' holds 2 values, in the record at byte offset "
    ) in text, text
    assert "od.tfrecord" in text
    dropped = spark_tfrecord.read(spark, path, schema=schema, mode="DROPMALFORMED").collect()
    assert [tuple(r) for r in dropped] == [(1, [[4]])]
    permissive = spark_tfrecord.read(
        spark, path, schema=schema + ", _corrupt_record binary", mode="PERMISSIVE"
    ).collect()
    assert [(r.id, r.x, r._corrupt_record is None) for r in permissive] == [
        (1, [[4]], True),
        (None, None, False),
    ]


def test_inference_gives_the_nested_types_back(spark, out: Path) -> None:
    ddl = (
        "id long, x array<array<long>>, y array<array<array<float>>>, "
        "s struct<a array<array<string>>>"
    )
    rows = [(1, [[1], []], [[[0.5]]], Row(a=[["p"], []])), (2, [], [], Row(a=[]))]
    spark_tfrecord.write(spark.createDataFrame(rows, ddl), str(out))
    flat = spark_tfrecord.read(spark, str(out))
    assert flat.schema.simpleString() == (
        "struct<id:bigint,x:array<array<bigint>>,y:array<array<array<float>>>,"
        "s/a:array<array<string>>>"
    )
    nested = spark_tfrecord.read(spark, str(out), inferNesting=True)
    assert nested.schema.simpleString() == (
        "struct<id:bigint,x:array<array<bigint>>,y:array<array<array<float>>>,"
        "s:struct<a:array<array<string>>>>"
    )
    assert [tuple(r) for r in nested.orderBy("id").collect()] == [
        (1, [[1], []], [[[0.5]]], Row(a=[["p"], []])),
        (2, [], [], Row(a=[])),
    ]


def test_sequence_examples_keep_feature_lists_and_refuse_deeper_lists(spark, tf) -> None:
    schema = spark.createDataFrame([], "x array<array<long>>, d array<array<array<long>>>").schema
    with pytest.raises(ValueError, match="Column 'd' is an array of arrays of arrays"):
        spark_tfrecord.feature_spec(schema, record_type="SequenceExample")
    context, sequence = spark_tfrecord.feature_spec(schema[:1], record_type="SequenceExample")
    assert (context, sequence) == (
        {},
        {"x": tf.io.RaggedFeature(tf.int64, row_splits_dtype=tf.int64)},
    )


def test_ragged_columns_are_held_and_an_incomplete_set_warns(spark, tf, tmp_path: Path) -> None:
    out = tmp_path / "ours"
    df = spark.createDataFrame([(1, [[1]])], "id long, x array<array<long>>")
    spark_tfrecord.write(df, str(out))
    with driver_log(spark) as log:
        back = spark_tfrecord.read(spark, str(out), schema=df.schema).collect()
    assert [tuple(r) for r in back] == [(1, [[1]])]
    assert log == []  # the feature "x" is absent, but "x/ragged_flat_values" holds the column

    def int64s(values: list[int]) -> Any:
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    # Levels 0 and 2 without 1: not one column.
    gap = tf.train.Example(
        features=tf.train.Features(
            feature={
                "g/ragged_flat_values": int64s([1]),
                "g/ragged_row_lengths_0": int64s([1]),
                "g/ragged_row_lengths_2": int64s([1]),
            }
        )
    )
    write_with_tensorflow(tf, tmp_path / "gap", [gap])
    with driver_log(spark) as log:
        inferred = spark_tfrecord.read(spark, str(tmp_path / "gap"))
    assert sorted(inferred.columns) == [
        "g/ragged_flat_values",
        "g/ragged_row_lengths_0",
        "g/ragged_row_lengths_2",
    ]
    assert any(
        "are not read as one list of lists 'g'" in line
        and "'g/ragged_row_lengths_1' is missing" in line
        for line in log
    ), log


def test_feature_spec_of_a_struct_leaf_and_of_a_fixed_length_leaf(spark, tf, out: Path) -> None:
    from pyspark.sql.types import (
        ArrayType,
        FloatType,
        LongType,
        StructField,
        StructType,
    )

    box = StructType(
        [
            StructField("bbox", ArrayType(FloatType()), metadata={"tfrecord.listLength": 4}),
            StructField("label", LongType()),
        ]
    )
    schema = StructType(
        [
            StructField("id", LongType(), nullable=False),
            StructField("s", StructType([StructField("a", ArrayType(ArrayType(LongType())))])),
            StructField("objects", ArrayType(box)),
        ]
    )
    rows = [(1, ([[1, 2], []],), [([0.5, 0.25, 1.0, 0.75], 3), ([0.0] * 4, 4)]), (2, ([],), [])]
    df = spark.createDataFrame(rows, schema)
    spark_tfrecord.write(df.coalesce(1), str(out))
    spec = spark_tfrecord.feature_spec(df.schema)
    assert spec["s/a"].value_key == "s/a/ragged_flat_values"
    assert spec["objects/bbox"].partitions == (tf.io.RaggedFeature.UniformRowLength(4),)
    got = parsed(tf, out, spec)
    order = got["id"].numpy().tolist()
    want = {r[0]: r for r in rows}
    assert got["s/a"].to_list() == [want[i][1][0] for i in order]
    assert got["objects/bbox"].to_list() == [[list(o[0]) for o in want[i][2]] for i in order]
    assert got["objects/label"].to_list() == [[o[1] for o in want[i][2]] for i in order]
