"""The Python schema inference (spark_tfrecord._format.datasets.inference) and TFDS schema
(_format.tfds_features, a folder's read by _format.tfds_dataset) give exactly the jar's schema,
whole JSON for whole JSON, on files written by Spark with the jar, by TensorFlow, by hand
(layouts no writer makes) and by TFDS; and fail where the jar fails, with the same condition."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from spark_tfrecord import errors, local
from spark_tfrecord._format.datasets import json_rows, tfds_dataset
from spark_tfrecord._format.datasets.inference import as_nullable, infer_schema
from spark_tfrecord._format.files.files import LocalFiles
from spark_tfrecord._format.frames.manifest import read_manifest
from support import encoded_tensors
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    float_list_packed,
    float_list_unpacked,
    int64_list_packed,
    int64_list_unpacked,
    ld,
    write_records,
)


def data_files(folder: Path) -> list[str]:
    """The data files of a folder as Spark lists them (hidden names skipped, partitions in)."""
    if folder.is_file():
        return [str(folder)]
    return [str(folder / rel) for rel, _ in LocalFiles().list_data(str(folder))]


def jar_schema(spark: Any, folder: Path, options: dict[str, str]) -> dict[str, Any]:
    """The schema the jar infers, through Spark, without the partition columns Spark adds."""
    schema: dict[str, Any] = (
        spark.read.format("tfrecord").options(**options).load(str(folder)).schema.jsonValue()
    )
    partitions = {d.name.split("=", 1)[0] for d in folder.rglob("*=*") if d.is_dir()}
    schema["fields"] = [f for f in schema["fields"] if f["name"] not in partitions]
    return schema


def same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def assert_same_schema(spark: Any, folder: Path, options: dict[str, str]) -> dict[str, Any]:
    """The jar's inferencer's own schema (``local.infer_schema``, through JPype) is ours, and
    what Spark shows (``spark.read…schema``: made nullable, partition columns added) is ours
    made nullable."""
    paths = data_files(folder)
    try:
        expected = local.infer_schema(paths, **options)
    except Exception as e:  # the jar's refusal: ours is the same
        with pytest.raises((errors.ArgumentError, errors.CorruptFileError)) as ours:
            infer_schema(paths, options)
        assert errors.condition(ours.value) == errors.condition(e) is not None
        assert ours.value.parameters["reason"] == errors.parameters(e)["reason"]
        return {}
    got = infer_schema(paths, options)
    assert same(got, expected)
    assert same(as_nullable(got), jar_schema(spark, folder, options))
    assert_same_rows(spark, paths, got, options)
    manifest = read_manifest(str(folder)) if folder.is_dir() else None
    if manifest is not None and manifest.schema_json is not None:
        assert_same_rows(spark, paths, dict(manifest.schema_json), options)
    return got


def without_nulls(value: Any) -> Any:
    """A row as Spark's ``toJSON`` writes it: no null fields, in structs too."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    return value


def assert_same_rows(
    spark: Any,
    paths: list[str],
    schema: dict[str, Any],
    options: dict[str, str],
    same_reason: bool = False,
) -> list[dict[str, Any]] | None:
    """The rows ``inspect`` prints: the Python reader's are the jar's (``local.head``), or both
    refuse the same record or schema, with the same condition and column (and, with
    ``same_reason``, the same words). The jar's inspector has no Spark ML in its JVM: rows of
    vectors are compared with Spark's JSON of them instead."""
    record_type = options.get("recordType", "Example")
    rest = {k: v for k, v in options.items() if k != "recordType"}
    try:
        got = list(json_rows.head(paths, schema, 40, record_type=record_type, options=rest))
    except (errors.CorruptFileError, errors.ArgumentError) as e:  # the jar refuses the same
        with pytest.raises(Exception) as jar:
            local.head(paths, schema, 40, record_type=record_type, **rest)
        assert errors.condition(jar.value) == e.condition
        assert errors.parameters(jar.value).get("column") == e.parameters.get("column")
        if same_reason:
            assert e.parameters["reason"] == errors.parameters(jar.value)["reason"]
        return None
    if '"udt"' in json.dumps(schema):
        from pyspark.sql.types import StructType

        df = spark.read.format("tfrecord").schema(StructType.fromJson(schema)).load(paths)
        ours = sorted(json.dumps(without_nulls(r)) for r in got)
        assert ours == sorted(json.dumps(json.loads(r)) for r in df.toJSON().collect())
        return got
    expected = local.head(paths, schema, 40, record_type=record_type, decoder="interpreted", **rest)
    assert json.dumps(got) == json.dumps(expected)
    return got


# --- written by Spark with the jar --------------------------------------------------------------

WIDE = (
    "id long, i int, s short, b byte, flag boolean, f float, d double, txt string, bin binary, "
    "day date, ts timestamp, dec decimal(10,2), ids array<long>, fs array<float>, "
    "ds array<double>, names array<string>, blobs array<binary>, one array<int>, "
    "empty array<long>"
)


def _wide_rows() -> list[tuple[Any, ...]]:
    import datetime
    import decimal

    return [
        (
            k,
            k,
            k,
            k % 100,
            k % 2 == 0,
            k / 4,
            k / 8,
            f"t{k}",
            b"\xff\xd8" if k == 3 else b"ok",
            datetime.date(2020, 1, 1 + k),
            datetime.datetime(2020, 1, 1, k),
            decimal.Decimal(f"{k}.25"),
            list(range(k % 3)),
            [0.5] * (k % 2),
            [1.0, 2.0],
            ["a", "b"][: k % 3],
            [b"\x00\x80"] if k else [],
            [k],
            [],
        )
        for k in range(6)
    ]


SPARK_CASES: dict[str, tuple[str, Any, dict[str, str], dict[str, str]]] = {
    # name: (DDL, rows or a callable giving them, write options, read options)
    "every type": (WIDE, _wide_rows, {}, {}),
    "nested structs": (
        "id long, image struct<height: long, width: long, object: struct<bbox: array<float>, "
        "label: array<string>>>, meta struct<src: string>",
        lambda: [(k, (k, 2 * k, ([0.5, 1.5], ["x"])), (f"s{k}",)) for k in range(4)],
        {},
        {},
    ),
    "nested structs, inferNesting": (
        "id long, image struct<height: long, width: long, object: struct<bbox: array<float>, "
        "label: array<string>>>, meta struct<src: string>",
        lambda: [(k, (k, 2 * k, ([0.5, 1.5], ["x"])), (f"s{k}",)) for k in range(4)],
        {},
        {"inferNesting": "true"},
    ),
    "a path separator": (
        "id long, a struct<b: long, c: struct<d: float>>",
        lambda: [(k, (k, (0.5,))) for k in range(3)],
        {"pathSeparator": "."},
        {"pathSeparator": ".", "inferNesting": "true"},
    ),
    "arrays of structs": (
        "id long, objects array<struct<w: float, tag: string, xs: array<long>>>",
        lambda: [(k, [(0.5 * j, f"t{j}", [j] * j) for j in range(k)]) for k in range(4)],
        {},
        {},
    ),
    "arrays of structs in a struct, with structs in them": (
        "id long, a struct<objs: array<struct<p: struct<x: long, y: double>, tags: array<string>, "
        "d: boolean>>, n: int>",
        lambda: [
            (k, ([((j, j / 3), ["u"] * j, j % 2 == 0) for j in range(k)], k) if k != 2 else None)
            for k in range(4)
        ],
        {},
        {},
    ),
    "arrays of structs in SequenceExamples": (
        "id long, steps array<struct<t: long, v: array<float>, s: struct<w: string>>>",
        lambda: [(k, [(j, [0.5] * j, (f"w{j}",)) for j in range(k)]) for k in range(4)],
        {"recordType": "SequenceExample"},
        {"recordType": "SequenceExample"},
    ),
    "ragged lists": (
        "id long, rl array<array<long>>, rf array<array<array<float>>>, rs array<array<string>>",
        lambda: [
            (k, [[1, 2], [3]][: k % 3], [[[0.5]], [[1.5, 2.5], []]], [["a"], []]) for k in range(4)
        ],
        {},
        {},
    ),
    "ragged lists, inferNesting": (
        "id long, a struct<b: array<array<long>>>",
        lambda: [(k, ([[k], [1, 2]],)) for k in range(3)],
        {},
        {"inferNesting": "true"},
    ),
    "sparse vectors": ("id long, v vector", "vectors", {"vectorLayout": "sparse"}, {}),
    "dense vectors": ("id long, v vector", "vectors", {}, {}),
    "sequence examples": (
        "id long, label string, frames array<array<float>>, tokens array<array<string>>, "
        "ids array<array<long>>, blobs array<array<binary>>",
        lambda: [
            (k, f"l{k}", [[0.5, 1.5], []], [["a"], ["b", "c"]], [[k]], [[b"\xff"]] if k else [])
            for k in range(4)
        ],
        {"recordType": "SequenceExample"},
        {"recordType": "SequenceExample"},
    ),
    "byte arrays": (
        "byteArray binary",
        lambda: [(bytes([k, 0xFF]),) for k in range(3)],
        {"recordType": "ByteArray"},
        {"recordType": "ByteArray"},
    ),
    "gzip": (
        "id long, name string",
        lambda: [(k, f"n{k}") for k in range(5)],
        {"compression": "gzip"},
        {},
    ),
    "deflate, sampled": (
        "id long, name string, x array<float>",
        lambda: [(k, f"n{k}", [0.5] * (k % 3)) for k in range(40)],
        {"compression": "deflate"},
        {"inferSchemaMaxFiles": "2", "inferSchemaMaxRecords": "3"},
    ),
}


def _vectors(spark: Any) -> Any:
    from pyspark.ml.linalg import Vectors

    rows = [
        (0, Vectors.sparse(5, [1, 3], [0.5, 2.0])),
        (1, Vectors.dense([1.0, 0.0, 3.0, 0.0, 0.0])),
        (2, Vectors.sparse(5, [], [])),
    ]
    return spark.createDataFrame(rows, ["id", "v"])


@pytest.mark.parametrize("case", list(SPARK_CASES))
def test_files_written_by_spark(spark: Any, tmp_path: Path, case: str) -> None:
    ddl, rows, write_options, read_options = SPARK_CASES[case]
    df = _vectors(spark) if rows == "vectors" else spark.createDataFrame(rows(), ddl)
    folder = tmp_path / "t"
    df.repartition(4).write.format("tfrecord").options(**write_options).save(str(folder))
    got = assert_same_schema(spark, folder, read_options)
    assert got["fields"]


def test_partitioned_folders(spark: Any, tmp_path: Path) -> None:
    df = spark.createDataFrame(
        [(k, f"n{k}", k % 2, f"d{k % 3}", [0.5] * k) for k in range(8)],
        "id long, name string, part int, day string, xs array<float>",
    )
    folder = tmp_path / "t"
    df.write.format("tfrecord").partitionBy("part", "day").save(str(folder))
    got = assert_same_schema(spark, folder, {})
    assert [f["name"] for f in got["fields"]] == ["id", "name", "xs"]


def test_sampling_spreads_over_the_sorted_files(spark: Any, tmp_path: Path) -> None:
    for i in range(7):
        write_records(
            tmp_path / f"part-{i}.tfrecord",
            [
                example(entry(f"f{i}".encode(), feature("int64", int64_list_packed([i])))),
                example(entry(f"late{i}".encode(), feature("float", float_list_packed([0.5])))),
            ],
        )
    for options in (
        {"inferSchemaMaxFiles": "3", "inferSchemaMaxRecords": "1"},
        {"inferSchemaMaxFiles": "-1", "inferSchemaMaxRecords": "-1"},
        {"inferschemamaxfiles": "5"},
        {},
    ):
        got = assert_same_schema(spark, tmp_path, options)
    assert [f["name"] for f in got["fields"]][:4] == ["f0", "late0", "f1", "late1"]


# --- made by hand: layouts and mixes no writer makes ---------------------------------------------


def _int(key: bytes, values: list[int]) -> bytes:
    return entry(key, feature("int64", int64_list_packed(values)))


def _float(key: bytes, values: list[float]) -> bytes:
    return entry(key, feature("float", float_list_packed(values)))


def _bytes(key: bytes, values: list[bytes]) -> bytes:
    return entry(key, feature("bytes", bytes_list(values)))


HAND_CASES: dict[str, list[list[bytes]]] = {
    # name: files, each a list of records
    "kinds merge across files": [
        [example(_int(b"n", [1]), _int(b"m", [7]), _int(b"len", [1]))],
        [example(_float(b"n", [2.5]), _bytes(b"m", [b"seven"]), _int(b"len", [1, 2, 3]))],
    ],
    "unset and empty features": [
        [
            example(
                entry(b"empty_int", feature("int64", b"")), entry(b"unset", b""), _int(b"x", [5])
            ),
            example(entry(b"empty_int", feature("int64", b""))),
        ]
    ],
    "binary only where not UTF-8": [
        [
            example(
                _bytes(b"a", [b"ok"]), _bytes(b"b", [b"\xff"]), _bytes(b"c", [b"\xed\xa0\x80"])
            ),
            example(
                _bytes(b"a", [b"\xc3\xa9", b""]),
                _bytes(b"b", [b"x"]),
                _bytes(b"c", [b"\xf0\x9f\x98\x80"]),
            ),
        ],
        [example(_int(b"d", [1]), _bytes(b"e", [b"\xc0\xaf"]))],
        [example(_bytes(b"d", [b"\x80"]), _float(b"e", [0.5]))],
    ],
    "unpacked lists, kinds switching, unknown fields": [
        [
            example(
                entry(b"u", feature("int64", int64_list_unpacked([1, 2]))),
                entry(b"v", feature("float", float_list_unpacked([0.5]))),
                # int64, then float: the last kind wins, with its one value
                entry(
                    b"w",
                    feature("int64", int64_list_packed([1, 2, 3]))
                    + feature("float", float_list_packed([0.5])),
                ),
                # the same kind twice: its lists concatenate
                entry(
                    b"z",
                    feature("int64", int64_list_packed([1]))
                    + feature("int64", int64_list_packed([2])),
                ),
            )
            + ld(7, b"unknown"),
        ]
    ],
    "a key twice, and map entries laid out otherwise": [
        [
            example(
                _int(b"k", [1]),
                _int(b"k", [1, 2]),
                ld(1, ld(2, feature("float", float_list_packed([0.5]))) + ld(1, b"rev")),
                ld(1, ld(2, feature("int64", int64_list_packed([3])))),  # no key: ""
            )
        ]
    ],
    "sparse vector parts": [
        [
            example(
                _int(b"v/indices", [0, 2]),
                _float(b"v/values", [0.5, 1.5]),
                _int(b"v/size", [4]),
                _int(b"w/indices", [1]),
                _float(b"w/values", [0.5]),
                _int(b"w/size", [4, 5]),  # two sizes: not a vector
                _int(b"u/indices", []),
                _float(b"u/values", []),
                _int(b"u/size", [3]),
                _int(b"x", [1]),
                _int(b"x/indices", [1]),
                _float(b"x/values", [1.0]),
                _int(b"x/size", [2]),  # a feature x itself: not a vector
            )
        ]
    ],
    "ragged parts, with gaps": [
        [
            example(
                _int(b"a/ragged_row_lengths_0", [1, 1]),
                _float(b"a/ragged_flat_values", [0.5, 1.5]),
                _int(b"b/ragged_row_lengths_0", [1]),
                _int(b"b/ragged_row_lengths_2", [1]),
                _int(b"b/ragged_flat_values", [1]),
                _int(b"c/ragged_flat_values", [1, 2]),
                _bytes(b"d/ragged_row_lengths_0", [b"x"]),
                _int(b"d/ragged_flat_values", [1]),
                _int(b"e/ragged_row_lengths_1", [2]),
                _int(b"e/ragged_row_lengths_0", [1]),
                _bytes(b"e/ragged_flat_values", [b"\xff", b"y"]),
                _int(b"e/ragged_row_lengths_01", [1]),
            )
        ]
    ],
    "nesting with empty parts": [
        [example(_int(b"a/b", [1]), _int(b"/c", [1]), _int(b"d//e", [1]), _int(b"a/f/g", [2]))]
    ],
}


@pytest.mark.parametrize("case", list(HAND_CASES))
@pytest.mark.parametrize("nesting", ["false", "true"])
def test_records_made_by_hand(spark: Any, tmp_path: Path, case: str, nesting: str) -> None:
    for i, recs in enumerate(HAND_CASES[case]):
        write_records(tmp_path / f"part-{i}.tfrecord", recs)
    assert_same_schema(spark, tmp_path, {"inferNesting": nesting})


def _sequence(context: list[bytes], lists: list[tuple[bytes, list[bytes]]]) -> bytes:
    feature_lists = b"".join(
        ld(1, ld(1, k) + ld(2, b"".join(ld(1, s) for s in steps))) for k, steps in lists
    )
    return ld(1, b"".join(context)) + ld(2, feature_lists)


def test_sequence_examples_made_by_hand(spark: Any, tmp_path: Path) -> None:
    write_records(
        tmp_path / "a.tfrecord",
        [
            _sequence(
                [_int(b"id", [1]), _bytes(b"t", [b"a", b"b"])],
                [
                    (
                        b"x",
                        [
                            feature("int64", int64_list_packed([1])),
                            feature("float", float_list_packed([0.5])),
                        ],
                    ),
                    (b"y", []),
                    (b"z", [feature("bytes", bytes_list([b"\xff"]))]),
                ],
            ),
            _sequence([], [(b"w", [feature("int64", b"")])]),
        ],
    )
    assert_same_schema(spark, tmp_path, {"recordType": "SequenceExample"})


def _field(name: str, data_type: Any, **metadata: Any) -> dict[str, Any]:
    return {"name": name, "type": data_type, "nullable": True, "metadata": metadata}


def _struct(*fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "struct", "fields": list(fields)}


def _arrays(element: Any, rank: int) -> Any:
    for _ in range(rank):
        element = {"type": "array", "elementType": element, "containsNull": False}
    return element


def _list_of(*fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "elementType": _struct(*fields), "containsNull": True}


_OBJECTS = _field(
    "objects",
    _list_of(
        _field("bbox", _arrays("float", 1), **{"tfrecord.listLength": 4}),
        _field("label", "long"),
        _field("pos", _struct(_field("x", "double"), _field("name", "string"))),
        _field("tokens", _arrays("long", 1)),
    ),
)
_BOX = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5]

#: name: (records, schema, record type); rows compared with the jar's, errors word for word.
NESTED_CASES: dict[str, tuple[list[bytes], dict[str, Any], str]] = {
    "array of structs, every leaf kind": (
        [
            example(
                _int(b"id", [1]),
                _float(b"objects/bbox", _BOX),
                _int(b"objects/label", [7, 8]),
                _float(b"objects/pos/x", [0.25, 1e9]),
                _bytes(b"objects/pos/name", [b"a", b"\xff"]),
                _int(b"objects/tokens/ragged_row_lengths_0", [2, 0]),
                _int(b"objects/tokens/ragged_flat_values", [4, 5]),
            ),
            example(_int(b"id", [2]), _int(b"objects/label", [1, 2, 3])),  # pos: null
            example(_int(b"id", [3])),  # objects: null
            example(_float(b"objects/bbox", []), _int(b"objects/label", [])),  # empty
        ],
        _struct(_field("id", "long"), _OBJECTS),
        "Example",
    ),
    "array of structs in a struct": (
        [example(_int(b"m/objects/label", [1, 2]), _int(b"m/n", [3])), example(_int(b"m/n", [1]))],
        _struct(_field("m", _struct(_OBJECTS, _field("n", "integer")))),
        "Example",
    ),
    "array of structs, lists of unequal length": (
        [example(_int(b"objects/label", [1, 2]), _float(b"objects/pos/x", [0.5]))],
        _struct(_OBJECTS),
        "Example",
    ),
    "array of structs, a concatenated list that does not split": (
        [example(_float(b"objects/bbox", _BOX[:6]), _int(b"objects/label", [1, 2]))],
        _struct(_OBJECTS),
        "Example",
    ),
    "array of structs, a leaf of the wrong kind": (
        [example(_bytes(b"objects/label", [b"x"]))],
        _struct(_OBJECTS),
        "Example",
    ),
    "array of structs, a concatenated list of strings": (
        [example(_bytes(b"o/s", [b"x"]))],
        _struct(
            _field("o", _list_of(_field("s", _arrays("string", 1), **{"tfrecord.listLength": 1})))
        ),
        "Example",
    ),
    "array of structs in a SequenceExample": (
        [
            _sequence(
                [_int(b"id", [1])],
                [
                    (b"steps/t", [feature("int64", int64_list_packed([v])) for v in (1, 2)]),
                    (b"steps/v", [feature("float", float_list_packed([0.5] * v)) for v in (0, 2)]),
                    (b"steps/s/w", [feature("bytes", bytes_list([b"x"])), feature("bytes", b"")]),
                ],
            ),
            _sequence([_int(b"id", [2])], [(b"steps/t", [feature("int64", b"")])]),
            _sequence([_int(b"id", [3])], []),
        ],
        _struct(
            _field("id", "long"),
            _field(
                "steps",
                _list_of(
                    _field("t", "long"),
                    _field("v", _arrays("float", 1)),
                    _field("s", _struct(_field("w", "string"))),
                ),
            ),
        ),
        "SequenceExample",
    ),
    "array of structs in a SequenceExample, two values in a step": (
        [
            _sequence(
                [], [(b"steps/t", [feature("int64", int64_list_packed(v)) for v in ([1], [2, 3])])]
            )
        ],
        _struct(_field("steps", _list_of(_field("t", "long")))),
        "SequenceExample",
    ),
    "array of structs in a SequenceExample, steps of unequal length": (
        [
            _sequence(
                [],
                [
                    (b"steps/t", [feature("int64", int64_list_packed([1]))]),
                    (b"steps/u", [feature("int64", int64_list_packed([1]))] * 2),
                ],
            )
        ],
        _struct(_field("steps", _list_of(_field("t", "long"), _field("u", "long")))),
        "SequenceExample",
    ),
}

for _name, _records in encoded_tensors.CASES.items():
    NESTED_CASES[_name] = (_records, encoded_tensors.SCHEMA, "Example")


@pytest.mark.parametrize("case", list(NESTED_CASES))
def test_arrays_of_structs_and_encoded_tensors(spark: Any, tmp_path: Path, case: str) -> None:
    """Rows of arrays of structs and of encoded tensors are the jar's, and a record or schema
    the jar refuses is refused with its condition, column and words."""
    records, schema, record_type = NESTED_CASES[case]
    path = write_records(tmp_path / "a.tfrecord", records)
    rows = assert_same_rows(
        spark, [str(path)], schema, {"recordType": record_type}, same_reason=True
    )
    assert (rows is not None) == (len(records) > 1), "the cases of one record are refused"


FAILURES: dict[str, tuple[list[bytes], dict[str, str], str]] = {
    "no features": ([example(), example()], {}, errors.CANNOT_INFER_SCHEMA),
    "context and list": (
        [_sequence([_int(b"a", [1])], [(b"a", [feature("int64", int64_list_packed([1]))])])],
        {"recordType": "SequenceExample"},
        errors.CANNOT_INFER_SCHEMA,
    ),
    "nesting conflict": (
        [example(_int(b"a", [1]), _int(b"a/b", [1]))],
        {"inferNesting": "true"},
        errors.CANNOT_INFER_SCHEMA,
    ),
    "malformed": ([b"\x0a\x05\x0a\x03"], {}, errors.MALFORMED_RECORD),
    "bad option": ([example(_int(b"a", [1]))], {"inferSchemaMaxFiles": "0"}, errors.INVALID_OPTION),
    "bad record type": (
        [example(_int(b"a", [1]))],
        {"recordType": "Examples"},
        errors.INVALID_OPTION,
    ),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_what_the_jar_refuses_is_refused(spark: Any, tmp_path: Path, case: str) -> None:
    recs, options, condition = FAILURES[case]
    write_records(tmp_path / "a.tfrecord", recs)
    with pytest.raises(Exception) as jar:
        jar_schema(spark, tmp_path, options)
    with pytest.raises((errors.ArgumentError, errors.CorruptFileError)) as ours:
        infer_schema(data_files(tmp_path), options)
    assert errors.condition(jar.value) == errors.condition(ours.value) == condition
    jar_reason = errors.parameters(jar.value).get("reason", "")
    assert ours.value.parameters["reason"].split(" (")[0] == jar_reason.split(" (")[0]


def test_ignore_corrupt_files_keeps_what_was_read(spark: Any, tmp_path: Path) -> None:
    good = write_records(tmp_path / "a.tfrecord", [example(_int(b"a", [1]))]).read_bytes()
    write_records(tmp_path / "b.tfrecord", [example(_float(b"b", [0.5, 1.5]))])
    (tmp_path / "b.tfrecord").write_bytes((tmp_path / "b.tfrecord").read_bytes() + good[:-3])
    assert_same_schema(spark, tmp_path, {"ignoreCorruptFiles": "true"})


# --- written by TensorFlow ------------------------------------------------------------------------


def test_files_written_by_tensorflow(spark: Any, tf: Any, tmp_path: Path) -> None:
    train = tf.train

    def ex(i: int) -> Any:
        return train.Example(
            features=train.Features(
                feature={
                    "id": train.Feature(int64_list=train.Int64List(value=[i])),
                    "xs": train.Feature(float_list=train.FloatList(value=[0.5] * i)),
                    "image/encoded": train.Feature(
                        bytes_list=train.BytesList(value=[b"\x89PNG\r\n"])
                    ),
                    "image/height": train.Feature(int64_list=train.Int64List(value=[2])),
                    "caption": train.Feature(bytes_list=train.BytesList(value=["héllo".encode()])),
                    "empty": train.Feature(),
                }
            )
        )

    for i, options in enumerate([None, "GZIP", "ZLIB"]):
        with tf.io.TFRecordWriter(str(tmp_path / f"data-{i}.tfrecord"), options) as w:
            for k in range(i, i + 3):
                w.write(ex(k).SerializeToString())
    for read_options in ({}, {"inferNesting": "true"}):
        assert_same_schema(spark, tmp_path, read_options)


def test_sequence_examples_written_by_tensorflow(spark: Any, tf: Any, tmp_path: Path) -> None:
    train = tf.train
    seq = train.SequenceExample(
        context=train.Features(
            feature={"id": train.Feature(int64_list=train.Int64List(value=[1]))}
        ),
        feature_lists=train.FeatureLists(
            feature_list={
                "tokens": train.FeatureList(
                    feature=[train.Feature(bytes_list=train.BytesList(value=[b"a", b"b"]))]
                ),
                "scores": train.FeatureList(
                    feature=[train.Feature(float_list=train.FloatList(value=[0.5]))] * 3
                ),
            }
        ),
    )
    with tf.io.TFRecordWriter(str(tmp_path / "seq.tfrecord")) as w:
        w.write(seq.SerializeToString())
    assert_same_schema(spark, tmp_path, {"recordType": "SequenceExample"})


# --- TensorFlow Datasets folders --------------------------------------------------------------


@pytest.fixture(scope="module")
def tfds() -> Any:
    import tensorflow_datasets

    return tensorflow_datasets


def _connectors(tfds: Any) -> dict[str, Any]:
    f = tfds.features
    return {
        "every connector": f.FeaturesDict(
            {
                "id": np.int64,
                "image": f.Image(shape=(None, None, 3)),
                "label": f.ClassLabel(names=["cat", "dog", "bird"]),
                "count": f.ClassLabel(num_classes=4),
                "text": f.Text(),
                "vec": f.Tensor(shape=(None,), dtype=np.float32),
                "mat": f.Tensor(shape=(2, 3), dtype=np.int64),
                "score": f.Scalar(dtype=np.float64),
                "flag": f.Tensor(shape=(), dtype=np.bool_),
                "half": f.Tensor(shape=(2,), dtype=np.float16),
                "small": f.Tensor(shape=(), dtype=np.uint8),
                "blob": f.Tensor(shape=(), dtype=np.str_),
                "objects": f.Sequence(
                    {"bbox": f.BBoxFeature(), "label": f.ClassLabel(names=["car", "bike"])}
                ),
                "meta": {"source": f.Text(), "size": np.int64},
                "frames": f.Video(shape=(None, None, None, 3)),
                "clip": f.Video(shape=(4, 2, 2, 3)),
                "audio": f.Audio(),
                "wav": f.Audio(file_format="wav", lazy_decode=True),
                "steps": f.Sequence(np.int64),
                "words": f.Translation(languages=["en", "fr"]),
                "mask": f.LabeledImage(labels=["bg", "fg"], shape=(None, None, 1)),
            }
        ),
        "ragged and datasets": f.FeaturesDict(
            {
                "nested": f.Sequence(f.Sequence(np.int64)),
                "deeper": f.Sequence(f.Sequence(f.Sequence(np.float32))),
                "words": f.Sequence(f.Sequence(f.Text())),
                "steps": f.Dataset(
                    {"obs": f.Tensor(shape=(3,), dtype=np.float32), "r": np.float32}
                ),
                "seqs": f.Sequence({"tokens": f.Sequence(np.int64), "w": np.float32}),
            }
        ),
        "encoded tensors": f.FeaturesDict(
            {
                "depth": f.Tensor(shape=(None, None), dtype=np.float32, encoding="zlib"),
                "mask": f.Tensor(shape=(None, None, None), dtype=np.uint8, encoding="bytes"),
                "id": np.int64,
            }
        ),
        "refused: dicts in a sequence of a sequence": f.FeaturesDict(
            {"x": f.Sequence(f.Sequence({"a": np.int64}))}
        ),
        "refused: unknown dimension in a sequence": f.FeaturesDict(
            {"x": f.Sequence(f.Tensor(shape=(None,), dtype=np.int64))}
        ),
        "refused: one unknown dimension, encoded": f.FeaturesDict(
            {"x": f.Tensor(shape=(None, 3), dtype=np.float32, encoding="zlib")}
        ),
        "refused: an encoder": f.FeaturesDict({"x": f.Tensor(shape=(2, None), dtype=np.int64)}),
        # TFDS stores these as one bytes value under the feature's name, without a shape.
        "refused: a scalar, encoded zlib": f.FeaturesDict(
            {"x": f.Tensor(shape=(), dtype=np.float32, encoding="zlib")}
        ),
        "refused: a scalar, encoded bytes": f.FeaturesDict(
            {"id": np.int64, "x": f.Tensor(shape=(), dtype=np.int64, encoding="bytes")}
        ),
    }


TFDS_CASES = [
    "every connector",
    "ragged and datasets",
    "encoded tensors",
    "refused: dicts in a sequence of a sequence",
    "refused: unknown dimension in a sequence",
    "refused: one unknown dimension, encoded",
    "refused: an encoder",
    "refused: a scalar, encoded zlib",
    "refused: a scalar, encoded bytes",
]


@pytest.mark.parametrize("case", TFDS_CASES)
def test_tfds_features(tfds: Any, tmp_path: Path, case: str) -> None:
    features = _connectors(tfds)[case]
    features.save_config(str(tmp_path))  # features.json and the .labels.txt files, as TFDS does
    try:
        expected: Any = local.tfds_schema(str(tmp_path))
    except Exception as e:  # the jar's refusal, a Java exception through JPype
        assert errors.condition(e) == errors.TFDS_FEATURES
        with pytest.raises(errors.ArgumentError) as ours:
            tfds_dataset.folder_schema(str(tmp_path))
        assert ours.value.condition == errors.TFDS_FEATURES
        assert ours.value.parameters["reason"] == errors.parameters(e)["reason"]
        assert case.startswith("refused: ")
        return
    assert not case.startswith("refused: ")
    assert same(tfds_dataset.folder_schema(str(tmp_path)), expected)


def test_a_folder_tfds_wrote_read_with_a_split(spark: Any, tfds: Any, tmp_path: Path) -> None:
    f = tfds.features
    features = f.FeaturesDict(
        {
            "id": np.int64,
            "label": f.ClassLabel(names=["a", "b"]),
            "objects": f.Sequence({"bbox": f.BBoxFeature(), "kind": f.ClassLabel(num_classes=3)}),
            "nested": f.Sequence(f.Sequence(np.int64)),
            "depth": f.Tensor(shape=(None, None), dtype=np.float32, encoding="zlib"),
            "mask": f.Tensor(shape=(None, None, None), dtype=np.uint8, encoding="bytes"),
            "seqs": f.Sequence({"tokens": f.Sequence(np.int64), "w": np.float32}),
        }
    )
    examples = [
        (
            str(i),
            {
                "id": i,
                "label": i % 2,
                "objects": {
                    "bbox": [np.array([0.0, 0.25, 0.5, 0.75], np.float32)] * (i % 3),
                    "kind": [k % 3 for k in range(i % 3)],
                },
                "nested": [[i], []],
                "depth": np.arange(2 * i, dtype=np.float32).reshape(2, i) / 3,
                "mask": np.full((1, i, 2), 200 + i, dtype=np.uint8),
                "seqs": {"tokens": [[i, 1], []][: i % 3], "w": [0.5, 1.5][: i % 3]},
            },
        )
        for i in range(4)
    ]
    tfds.dataset_builders.store_as_tfds_dataset(
        name="small", version="1.0.0", features=features, split_datasets={"train": examples},
        data_dir=str(tmp_path),
    )  # fmt: skip
    folder = tmp_path / "small" / "1.0.0"
    expected = spark.read.format("tfrecord").option("split", "train").load(str(folder))
    paths = [str(p) for p in sorted(folder.iterdir())]
    got = tfds_dataset.read_schema(paths, "train")
    assert same(got, local.tfds_schema(str(folder)))
    assert same(as_nullable(got), expected.schema.jsonValue())
    rows = assert_same_rows(spark, [p for p in paths if "tfrecord" in p], got, {})
    assert rows is not None and sorted(r["id"] for r in rows) == [0, 1, 2, 3]
    one = next(r for r in rows if r["id"] == 1)
    assert (one["mask"], one["depth"]) == ([[[201, 201]]], [[0.0], [0.33333334]])
    assert one["objects"] == [{"bbox": [0.0, 0.25, 0.5, 0.75], "kind": 0}]
    assert one["seqs"] == [{"tokens": [1, 1], "w": 0.5}]
    assert tfds_dataset.read_schema([p for p in paths if "tfrecord" in p], None) is None
    for split in (None, "test"):
        with pytest.raises(errors.ArgumentError) as ours:
            tfds_dataset.read_schema(paths, split)
        assert ours.value.condition == errors.DATASET_FOLDER
    info = tfds_dataset.read_info(str(folder))
    assert info is not None and (info.name, info.version) == ("small", "1.0.0")
    assert [s.name for s in info.splits] == ["train"]
    names = info.shard_names(info.splits[0])
    assert all((folder / n).is_file() for n in names) and sum(info.splits[0].shard_lengths) == 4


def test_byte_array_schema_needs_no_files() -> None:
    assert infer_schema([], {"recordType": "bytearray"}) == {
        "type": "struct",
        "fields": [{"name": "byteArray", "type": "binary", "nullable": False, "metadata": {}}],
    }


def _stats(features: Any) -> list[tuple[str, Any, Any]]:
    """Each name met, in order, with what its context statistics and feature-list statistics
    say (kind, most values, not UTF-8)."""

    def said(s: Any) -> Any:
        return None if s is None else (s.kind, s.max_values, s.binary)

    return [
        (name, said(features.stats[i]), said(features.list_stats[i]))
        for i, name in enumerate(features.names)
    ]


@pytest.mark.parametrize(
    "bad_list",
    [b"\x81" * 10 + b"\x01", b"\x05\x81"],
    ids=["a varint of 11 bytes", "a list ending inside a varint"],
)
def test_a_malformed_int64_list_laid_out_as_the_others_fails_with_its_offset(
    tmp_path: Path, bad_list: bytes
) -> None:
    # batch_stats counts a batch's int64 lists at once, without decoding them: a list that
    # would not decode sends the batch to the records' own walk, which names the record.
    from spark_tfrecord._format.datasets.inference import _read_sample
    from spark_tfrecord._format.entries.wire import FLOAT, INT64
    from spark_tfrecord._format.frames.read_options import InferenceOptions

    def record(ints: bytes) -> bytes:
        return example(
            entry(b"a", feature("int64", ld(1, ints))),
            entry(b"b", feature("float", float_list_packed([0.5]))),
            entry(b"c", feature("int64", int64_list_packed([7, -1]))),
        )

    good = record(b"\x01\xac\x02")
    data = [good] * 5 + [record(bad_list)] + [good] * 4
    path = write_records(tmp_path / "bad.tfrecord", data)
    with pytest.raises(errors.CorruptFileError) as raised:
        _read_sample(str(path), LocalFiles(), InferenceOptions(), False)
    assert raised.value.parameters["offset"] == str(5 * (len(good) + 16))
    sample = _read_sample(
        str(path), LocalFiles(), InferenceOptions(ignore_corrupt_files=True), False
    )
    assert sample.records == 5
    good_only = write_records(tmp_path / "good.tfrecord", [good] * 10)
    sample = _read_sample(str(good_only), LocalFiles(), InferenceOptions(), False)
    assert _stats(sample.features) == [
        ("a", (INT64, 2, False), None),
        ("b", (FLOAT, 1, False), None),
        ("c", (INT64, 2, False), None),  # -1: a varint of 10 bytes
    ]


def test_a_batch_of_examples_says_what_its_records_say_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # _read_sample adds the records laid out as each batch's first at once (batch_stats); the
    # others one by one (feature_stats.add_record). On random records (keys met late, kinds
    # that differ, empty and unset lists, bytes not UTF-8, unpacked lists, a key twice,
    # malformed records with and without ignoreCorruptFiles) both give the same names in the
    # same order, the same statistics and the same count of records, or the same error.
    import random

    from spark_tfrecord._format.datasets.inference import _read_sample
    from spark_tfrecord._format.entries.feature_stats import SampledFeatures, add_record
    from spark_tfrecord._format.frames.file_records import records
    from spark_tfrecord._format.frames.read_options import InferenceOptions

    def value(rng: random.Random, kind: str, longer: bool = False) -> bytes:
        n = 3 if longer else rng.choice([2] * 300 + [0, 1, 40])
        if kind == "split":  # values not UTF-8 alone, but their concatenation is
            return feature("bytes", bytes_list([b"\xc3", b"\xa9z"] * (n // 2)))
        if kind == "int64":
            ints = [rng.choice([0, 1, -1, 300, 2**62]) for _ in range(n)]
            packed = rng.random() < 0.97
            return feature(kind, int64_list_packed(ints) if packed else int64_list_unpacked(ints))
        if kind == "float":
            return feature(kind, float_list_packed([rng.random() for _ in range(n)]))
        if kind == "bytes":
            pool = [
                b"ab",
                b"\xc3\xa9",
                b"",
                b"\xff",
                b"\xed\xa0\x80",
                b"x" * 200,
                b"\xc3",
                b"\xa9z",
            ]
            return feature(kind, bytes_list([rng.choice(pool) for _ in range(n)]))
        return b""  # a Feature with no kind set

    def record(rng: random.Random, layout: list[tuple[bytes, str]], longer: bool = False) -> bytes:
        if rng.random() < 0.002:
            return b"\x0a\x05\x0a\x03\x0a\x01"  # a map entry that runs past its message
        entries = []
        for key, kind in layout:
            if rng.random() < 0.003:
                continue  # a feature missing
            if rng.random() < 0.003:
                kind = rng.choice(["int64", "float", "bytes", "unset"])
            entries.append(entry(key, value(rng, kind, longer)))
        if rng.random() < 0.005:
            entries.append(entry(b"late%d" % rng.randrange(3), value(rng, "int64")))
        if rng.random() < 0.003 and entries:
            entries.append(entries[0])  # a key twice
        return example(*entries)

    from spark_tfrecord._format.datasets import inference

    batched = []

    def counted(buf: bytes, starts: Any, stops: Any, features: Any) -> Any:
        left = add_batch(buf, starts, stops, features)
        batched.append(len(starts) - len(left))
        return left

    add_batch = inference.add_batch
    monkeypatch.setattr(inference, "add_batch", counted)
    compared = failed = 0
    for seed in range(24):
        rng = random.Random(seed)
        kinds = ["int64", "float", "bytes", "unset", "split"]
        layout = [(b"f%d" % k, rng.choice(kinds)) for k in range(8)]
        data = [record(rng, layout) for _ in range(rng.choice([1, 30, 5000]))]
        if seed % 3 == 0 and len(data) > 3:  # malformed, then records of longer lists
            bad = min(len(data) // 3, 500)
            data[bad] = b"\x0a\x05\x0a\x03\x0a\x01"
            data[bad + 1 :] = [record(rng, layout, longer=True) for _ in data[bad + 1 :]]
        path = write_records(tmp_path / f"{seed}.tfrecord", data)
        for ignore in (False, True):
            options = InferenceOptions(ignore_corrupt_files=ignore)
            one_by_one, n, error = SampledFeatures(), 0, None
            try:
                for _, bytes_ in records(str(path), LocalFiles()):
                    add_record(bytes_, one_by_one, False)
                    n += 1
            except Exception as e:
                error = e
            try:
                sample = _read_sample(str(path), LocalFiles(), options, False)
            except errors.CorruptFileError as e:
                assert error is not None and not ignore
                assert e.parameters["offset"] == str(sum(len(r) + 16 for r in data[:n]))
                failed += 1
                continue
            assert error is None or ignore
            assert _stats(sample.features) == _stats(one_by_one), seed
            assert sample.records == n
            compared += 1
    assert compared > 30 and failed > 3
    assert sum(batched) > 3_000  # many records took the batch's way
