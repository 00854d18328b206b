"""dataset_info: counts from a folder's manifest, checked against one listing of it, or from the
records' framing; and the DDL parser. Each runs in a fresh Python with no Spark session (as a
trainer would), which must not import pyspark, py4j or TensorFlow."""

from __future__ import annotations

import gzip
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from spark_tfrecord._format.columns import ddl as _ddl
from support import trainer_side
from support.manifests import MANIFEST, write_manifest
from support.tfrecord_bytes import frame, masked_crc


def trainer(code: str) -> dict[str, Any]:
    """Runs ``code`` (which sets ``result``) in a fresh Python with no Spark session."""
    return trainer_side.run(code)


def info_of(path: Path | str, before: str = "") -> dict[str, Any]:
    """dataset_info(path) in a trainer, as plain values, with what it imported."""
    out = trainer(
        "import spark_tfrecord\n" + before + f"i = spark_tfrecord.dataset_info({str(path)!r})\n"
        "result = dict(num_records=i.num_records, source=i.source, reason=i.reason,\n"
        "    schema=i.schema, record_type=i.record_type, partitions=list(i.partition_columns),\n"
        "    features={k: list(v) for k, v in i.features.items()},\n"
        "    feature_lists={k: list(v) for k, v in i.feature_lists.items()},\n"
        "    schema_json=None if i.schema_json is None else dict(i.schema_json),\n"
        "    files=[[p, n, b, f.compression] for f in i.files for (p, n, b) in [f]])\n"
    )
    assert out["heavy"] == [], out
    return out


def records(n: int, size: int = 3) -> bytes:
    """n framed records, the i-th of ``size`` bytes of value i."""
    return b"".join(frame(bytes([i % 256]) * size) for i in range(n))


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """A partitioned folder: an uncompressed file, a gzip file, a ZLIB file, and the files a
    reader skips (``_SUCCESS``, ``.crc``, a ``_`` index, a ``.`` folder)."""
    root = tmp_path / "table"
    (root / "day=1").mkdir(parents=True)
    (root / "day=2").mkdir()
    (root / "day=1" / "part-00000.c000.tfrecord").write_bytes(records(5))
    (root / "day=1" / "part-00001.c000.tfrecord.gz").write_bytes(gzip.compress(records(7, 100)))
    (root / "day=2" / "part-00000.c000.tfrecord.deflate").write_bytes(zlib.compress(records(2)))
    (root / "_SUCCESS").write_bytes(b"")
    (root / "day=1" / ".part-00000.c000.tfrecord.crc").write_bytes(b"junk")
    (root / "day=1" / "_part-00000.c000.tfrecord.idx").write_bytes(b"junk")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "part-9.tfrecord").write_bytes(b"junk")
    return root


COUNTS = {
    "day=1/part-00000.c000.tfrecord": 5,
    "day=1/part-00001.c000.tfrecord.gz": 7,
    "day=2/part-00000.c000.tfrecord.deflate": 2,
}


def expected_files(root: Path) -> list[list[Any]]:
    return [
        [str(root.joinpath(*rel.split("/"))), n, root.joinpath(rel).stat().st_size, codec]
        for (rel, n), codec in zip(sorted(COUNTS.items()), ("none", "gzip", "deflate"))
    ]


def test_a_valid_manifest_answers_without_reading_the_files(table: Path) -> None:
    schema_json = {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", "nullable": False, "metadata": {}},
            {"name": "x", "type": {"type": "array", "elementType": "float", "containsNull": True},
             "nullable": True, "metadata": {}},
        ],
    }  # fmt: skip
    write_manifest(
        table,
        COUNTS,
        schema="id BIGINT NOT NULL,x ARRAY<FLOAT>",
        schema_json=schema_json,
        partition_columns=("day",),
        features={"id": (1, 1), "x": (0, 4)},
    )
    info = info_of(table)
    assert info["result"] == {
        "num_records": 14,
        "source": "manifest",
        "reason": None,
        "schema": "id BIGINT NOT NULL,x ARRAY<FLOAT>",
        "record_type": "Example",
        "partitions": ["day"],
        "features": {"id": [1, 1], "x": [0, 4]},
        "feature_lists": {},
        "schema_json": schema_json,
        "files": expected_files(table),
    }
    # No file is read: files of the same sizes that are not TFRecord at all give the same answer.
    for rel in COUNTS:
        size = (table / rel).stat().st_size
        (table / rel).write_bytes(b"\xff" * size)
    assert info_of(table)["result"]["num_records"] == 14


def test_the_answer_pickles_for_loader_workers(table: Path) -> None:
    write_manifest(table, COUNTS, partition_columns=("day",), features={"id": (1, 1)})
    out = trainer(
        "import pickle, spark_tfrecord\n"
        f"info = spark_tfrecord.dataset_info({str(table)!r})\n"
        "back = pickle.loads(pickle.dumps(info))\n"
        "result = [back == info, [f.compression for f in back.files], dict(back.features),\n"
        "          [tuple(f) == (f.path, f.num_records, f.num_bytes) for f in back.files]]\n"
    )
    assert out["result"] == [True, ["none", "gzip", "deflate"], {"id": [1, 1]}, [True] * 3]


def test_without_a_manifest_the_records_are_counted(table: Path) -> None:
    info = info_of(table)["result"]
    assert (info["num_records"], info["source"], info["partitions"]) == (14, "counted", ["day"])
    # The records are not Examples: nothing to infer a schema from, and the reason says why.
    counted, no_schema = info["reason"].split("; ", 1)
    assert counted == f"counted from the records: {table} has no {MANIFEST}"
    assert no_schema.startswith("no schema: [TFRECORD_MALFORMED_RECORD] Malformed tf.train.Example")
    assert (info["schema"], info["record_type"], info["schema_json"]) == (None, None, None)
    assert info["files"] == expected_files(table)
    assert (info["features"], info["feature_lists"]) == ({}, {})


def _add_file(root: Path) -> None:
    (root / "day=2" / "part-00009.c000.tfrecord").write_bytes(records(4))


def _remove_file(root: Path) -> None:
    (root / "day=2" / "part-00000.c000.tfrecord.deflate").unlink()


def _grow_file(root: Path) -> None:
    with open(root / "day=1" / "part-00000.c000.tfrecord", "ab") as f:
        f.write(records(4))


def _break_json(root: Path) -> None:
    (root / MANIFEST).write_text('{"format": "spark-tfrecord-manifest", "ver', encoding="utf-8")


def _newer_version(root: Path) -> None:
    manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    (root / MANIFEST).write_text(json.dumps({**manifest, "version": 2}), encoding="utf-8")


def _wrong_total(root: Path) -> None:
    manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    (root / MANIFEST).write_text(json.dumps({**manifest, "num_records": 15}), encoding="utf-8")


@pytest.mark.parametrize(
    "change,records,reason",
    [
        (_add_file, 18, "data file day=2/part-00009.c000.tfrecord is not in " + MANIFEST),
        (_remove_file, 12, MANIFEST + " names day=2/part-00000.c000.tfrecord.deflate, which is"),
        (_grow_file, 18, "day=1/part-00000.c000.tfrecord has 171 bytes, " + MANIFEST + " says 95"),
        (_break_json, 14, "is not readable JSON"),
        (_newer_version, 14, "has version 2; this reader knows version 1"),
        (_wrong_total, 14, "num_records is not the sum of its files' records"),
    ],
)
def test_a_manifest_the_folder_does_not_match_is_never_trusted(
    table: Path, change: Any, records: int, reason: str
) -> None:
    write_manifest(table, COUNTS, partition_columns=("day",))
    change(table)
    info = info_of(table)["result"]
    assert (info["num_records"], info["source"], info["schema"]) == (records, "counted", None)
    assert info["reason"].startswith("counted from the records: ") and reason in info["reason"]


def test_a_file_and_a_glob_are_counted(tmp_path: Path) -> None:
    (tmp_path / "a.tfrecord").write_bytes(records(3))
    (tmp_path / "b-of-2").write_bytes(gzip.compress(records(4)))  # gzip known by its magic
    (tmp_path / "_b.idx").write_bytes(b"junk")
    one = info_of(tmp_path / "a.tfrecord")["result"]
    assert (one["num_records"], one["source"]) == (3, "counted")
    counted = "counted from the records: a file, not a folder with a manifest; no schema: "
    assert one["reason"].startswith(counted + "[TFRECORD_MALFORMED_RECORD]")  # not Examples
    both = info_of(str(tmp_path / "*"))["result"]
    assert [(Path(p).name, n, c) for p, n, _, c in both["files"]] == [
        ("a.tfrecord", 3, "none"),
        ("b-of-2", 4, "gzip"),
    ]
    counted = "counted from the records: a glob, not a folder with a manifest; no schema: "
    assert both["reason"].startswith(counted + "[TFRECORD_MALFORMED_RECORD]")


def test_several_gzip_members_and_empty_files_are_counted(tmp_path: Path) -> None:
    two_members = gzip.compress(records(2)) + gzip.compress(records(3))
    (tmp_path / "a.tfrecord.gz").write_bytes(two_members)
    (tmp_path / "b.tfrecord").write_bytes(b"")
    (tmp_path / "c.tfrecord.gz").write_bytes(gzip.compress(b""))
    (tmp_path / "d.tfrecord").write_bytes(records(1, size=0))  # an empty record
    counted = info_of(tmp_path)["result"]
    assert [(Path(p).name, n) for p, n, _, _ in counted["files"]] == [
        ("a.tfrecord.gz", 5),
        ("b.tfrecord", 0),
        ("c.tfrecord.gz", 0),
        ("d.tfrecord", 1),
    ]


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :]


#: A sound header claiming 2^40 data bytes.
HUGE = struct.pack("<Q", 2**40) + struct.pack("<I", masked_crc(struct.pack("<Q", 2**40)))


# Three records of 3 data bytes (19 bytes framed each): the second starts at offset 19.
@pytest.mark.parametrize(
    "damage,condition,offset,reason",
    [
        (lambda d: _flip(d, 19 + 2), "LENGTH_CHECKSUM", 19, "length checksum mismatch"),
        (lambda d: _flip(d, 19 + 12), "DATA_CHECKSUM", 19, "data checksum mismatch"),
        (lambda d: _flip(d, 19 + 16), "DATA_CHECKSUM", 19, "data checksum mismatch"),
        (
            lambda d: d[:-1],
            "TRUNCATED",
            38,
            {
                "none": "the header claims 3 data bytes, but the file ends 6 bytes after it",
                "gzip": "stream ends inside a record of 3 data bytes",
            },
        ),
        (
            lambda d: d[:19] + frame(b"x")[:12],
            "TRUNCATED",
            19,
            {
                "none": "the header claims 1 data bytes, but the file ends 0 bytes after it",
                "gzip": "stream ends inside a record of 1 data bytes",
            },
        ),
        (
            lambda d: d[:19] + HUGE,
            "TFRECORD_RECORD_TOO_LARGE",
            19,
            f"TFRecord of {2**40} bytes exceeds maxRecordBytes ({2**31 - 65})",
        ),
        (lambda d: d + b"\x01\x02", "TRUNCATED", 57, "2 of 12 header bytes"),
    ],
)
@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_a_damaged_file_names_the_file_and_the_records_offset(
    tmp_path: Path, damage: Any, condition: str, offset: int, reason: Any, codec: str
) -> None:
    raw = damage(records(3))
    reason = reason[codec] if isinstance(reason, dict) else reason
    name = "a.tfrecord" + (".gz" if codec == "gzip" else "")
    path = tmp_path / name
    path.write_bytes(gzip.compress(raw) if codec == "gzip" else raw)
    out = trainer(
        f"import spark_tfrecord\nresult = spark_tfrecord.dataset_info({str(tmp_path)!r})\n"
    )
    assert (out["error"], out["condition"]) == (
        "CorruptFileError",
        condition if condition.startswith("TFRECORD_") else "TFRECORD_CORRUPT_RECORD." + condition,
    )
    assert out["parameters"]["path"] == str(path)
    assert out["parameters"]["offset"] == str(offset)
    assert reason in out["parameters"]["reason"]
    assert out["message"].endswith(f"at byte offset {offset} of {path}")
    assert out["heavy"] == []


def test_a_broken_compressed_stream_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "a.tfrecord.gz").write_bytes(gzip.compress(records(50))[:-30])
    out = trainer(f"import spark_tfrecord\nresult = spark_tfrecord.dataset_info({str(tmp_path)!r})")
    assert out["condition"] == "TFRECORD_CORRUPT_RECORD.UNREADABLE"
    assert "the gzip stream ends before its end marker" in out["message"]


def test_the_pure_python_crc32c_counts_the_same(table: Path) -> None:
    """Without the optional crc32c packages: the fallback, checked on the standard vector."""
    fallback = (
        "import spark_tfrecord\n"
        "from spark_tfrecord._format.frames import crc\n"
        "assert crc._crc32c_python(b'123456789') == 0xE3069283\n"
        "crc._crc32c_impl = (crc._crc32c_python, 'pure Python')\n"
        "assert crc.crc32c_implementation() == 'pure Python'\n"
    )
    assert info_of(table, before=fallback)["result"]["num_records"] == 14
    (table / "day=1" / "part-00000.c000.tfrecord").write_bytes(_flip(records(5), 19 + 13))
    out = trainer(fallback + f"result = spark_tfrecord.dataset_info({str(table)!r})")
    assert (out["condition"], out["parameters"]["offset"]) == (
        "TFRECORD_CORRUPT_RECORD.DATA_CHECKSUM",
        "19",
    )


# --- the DDL parser -------------------------------------------------------------------------

DDLS = [
    "id long, x array<float>",
    "id BIGINT NOT NULL,x ARRAY<FLOAT>",
    "a: int, b string, c tinyint, d byte, e smallint, f short, g integer, h real, i double",
    "b boolean, bin binary, d date, t timestamp, n timestamp_ntz, l timestamp_ltz",
    "d decimal(12, 3), e dec, f numeric(5)",
    "m map<string, array<bigint>>, s struct<a: int NOT NULL, b string COMMENT 'the b'>",
    "`weird name` int COMMENT 'it\\'s', `tick``s` array<array<struct<x:float>>> NOT NULL",
    "e struct<>, nested struct<inner: struct<deep: array<string>>>",
]


@pytest.mark.parametrize("ddl", DDLS)
def test_the_ddl_parser_agrees_with_spark(spark, ddl: str) -> None:
    assert _ddl.parse_ddl(ddl) == spark.createDataFrame([], ddl).schema.jsonValue()


def test_a_struct_type_string_is_a_schema_too(spark) -> None:
    ddl = "struct<a:int,b:array<string>>"
    assert _ddl.parse_ddl(ddl) == spark.createDataFrame([], ddl).schema.jsonValue()


@pytest.mark.parametrize(
    "ddl,message",
    [
        ("id", "expected a type at position 2"),
        ("id lng", "unknown type 'lng' at position 3"),
        ("id long,", "expected a column name at position 8"),
        ("x array<int", "expected '>' at position 11"),
        ("a int b int", "expected ',' or the end at position 6"),
        ("a int not", "expected NULL after NOT at position 9"),
        ("a int; drop", "unexpected ';' at position 5"),
    ],
)
def test_a_bad_ddl_says_where(ddl: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"Cannot parse the schema {ddl!r}: {message}"):
        _ddl.parse_ddl(ddl)


def test_the_ddl_parser_needs_no_session_and_no_pyspark() -> None:
    out = trainer(
        "from spark_tfrecord._format.columns.ddl import parse_ddl\n"
        "result = parse_ddl('id long not null, v varchar(3)')\n"
    )
    assert out == {
        "result": {
            "type": "struct",
            "fields": [
                {"name": "id", "type": "long", "nullable": False, "metadata": {}},
                {"name": "v", "type": "string", "nullable": True, "metadata": {}},
            ],
        },
        "heavy": [],
    }


def test_listing_skips_what_the_writer_skips(tmp_path: Path) -> None:
    """The writer's rule: names starting with ``_`` or ``.`` are not data, nor a TFDS dataset's
    metadata at the root; folders are descended into."""
    from spark_tfrecord._format.files.files import LocalFiles

    for rel in ("_SUCCESS", ".a.crc", "_a=1/x", "dataset_info.json", "features.json",
                "label.labels.txt", "a.tfrecord", "sub/dataset_info.json", "day=1/b"):  # fmt: skip
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"12")
    assert LocalFiles().list_data(str(tmp_path)) == [
        ("a.tfrecord", 2),
        ("day=1/b", 2),
        ("sub/dataset_info.json", 2),
    ]


# --- feature_spec from a DDL string and from a folder's manifest, in a trainer ---------------

SPEC_REPR = (
    "import spark_tfrecord\n"
    "def show(spec):\n"
    "    return {k: repr(v) for k, v in sorted(spec.items())}\n"
)


@pytest.mark.tensorflow
def test_feature_spec_of_a_ddl_string_needs_no_session_nor_pyspark() -> None:
    out = trainer(
        SPEC_REPR
        + "result = show(spark_tfrecord.feature_spec('id long not null, s double, x array<float>'))"
    )
    assert out == {
        "result": {
            "id": "FixedLenFeature(shape=[], dtype=tf.int64, default_value=None)",
            "s": "VarLenFeature(dtype=tf.float32)",
            "x": "RaggedFeature(dtype=tf.float32, value_key=None, partitions=(), "
            "row_splits_dtype=tf.int64, validate=False)",
        },
        "heavy": ["tensorflow"],
    }


VECTOR = {
    "type": "udt",
    "class": "org.apache.spark.ml.linalg.VectorUDT",
    "pyClass": "pyspark.ml.linalg.VectorUDT",
    "sqlType": {"type": "struct", "fields": []},  # (its contents do not matter here)
}


def _field(name: str, data_type: Any, nullable: bool = True, **metadata: Any) -> dict[str, Any]:
    return {"name": name, "type": data_type, "nullable": nullable, "metadata": metadata}


def _array(element: Any) -> dict[str, Any]:
    return {"type": "array", "elementType": element, "containsNull": True}


COUNTED_SCHEMA = {
    "type": "struct",
    "fields": [
        _field("label", "long"),  # nullable, but in every record
        _field("weight", "double"),  # nullable and sometimes absent
        _field("id", "long", nullable=False),
        _field("emb", _array("float")),  # 3 values in every record
        _field("tags", _array("string")),  # 0 to 2
        _field("empty", _array("long")),  # never a value
        _field("dense", VECTOR),  # 4 values in every record
        _field("hashed", VECTOR, ml_attr={"num_attrs": 100}),  # written sparse
        _field(
            "box",
            {"type": "struct", "fields": [_field("h", "long"), _field("xy", _array("float"))]},
        ),
        _field("steps", _array(_array("long"))),  # ragged, whatever the counts
    ],
}
COUNTED_FEATURES = {
    "label": (1, 1),
    "weight": (0, 1),
    "id": (1, 1),
    "emb": (3, 3),
    "tags": (0, 2),
    "empty": (0, 0),
    "dense": (4, 4),
    "hashed/indices": (0, 9),
    "hashed/values": (0, 9),
    "box/h": (1, 1),
    "box/xy": (2, 2),
    "steps/ragged_flat_values": (2, 2),
    "steps/ragged_row_lengths_0": (1, 1),
}


@pytest.mark.tensorflow
def test_feature_spec_of_a_folder_is_dense_where_every_record_has_k_values(tmp_path: Path) -> None:
    (tmp_path / "part-0.tfrecord").write_bytes(records(3))
    write_manifest(
        tmp_path, {"part-0.tfrecord": 3}, schema_json=COUNTED_SCHEMA, features=COUNTED_FEATURES
    )
    out = trainer(SPEC_REPR + f"result = show(spark_tfrecord.feature_spec({str(tmp_path)!r}))")
    assert out["heavy"] == ["tensorflow"]

    def ragged(dtype: str) -> str:
        return (
            f"RaggedFeature(dtype=tf.{dtype}, value_key=None, partitions=(), "
            "row_splits_dtype=tf.int64, validate=False)"
        )

    assert out["result"] == {
        "label": "FixedLenFeature(shape=[], dtype=tf.int64, default_value=None)",
        "weight": "VarLenFeature(dtype=tf.float32)",
        "id": "FixedLenFeature(shape=[], dtype=tf.int64, default_value=None)",
        "emb": "FixedLenFeature(shape=[3], dtype=tf.float32, default_value=None)",
        "tags": ragged("string"),
        "empty": ragged("int64"),
        "dense": "FixedLenFeature(shape=[4], dtype=tf.float32, default_value=None)",
        "hashed": "SparseFeature(index_key='hashed/indices', value_key='hashed/values', "
        "dtype=tf.float32, size=100, already_sorted=False)",
        "box/h": "FixedLenFeature(shape=[], dtype=tf.int64, default_value=None)",
        "box/xy": "FixedLenFeature(shape=[2], dtype=tf.float32, default_value=None)",
        "steps": "RaggedFeature(dtype=tf.int64, value_key='steps/ragged_flat_values', "
        "partitions=(RowLengths(key='steps/ragged_row_lengths_0'),), "
        "row_splits_dtype=tf.int64, validate=False)",
    }


@pytest.mark.tensorflow
def test_feature_spec_of_a_sequence_example_folder(tmp_path: Path) -> None:
    (tmp_path / "part-0.tfrecord").write_bytes(records(2))
    schema = {
        "type": "struct",
        "fields": [_field("user", "long"), _field("clicks", _array(_array("long")))],
    }
    write_manifest(
        tmp_path,
        {"part-0.tfrecord": 2},
        schema_json=schema,
        record_type="SequenceExample",
        features={"user": (1, 1)},
        feature_lists={"clicks": (1, 3)},
    )
    folder = str(tmp_path)
    out = trainer(
        SPEC_REPR
        + f"c, s = spark_tfrecord.feature_spec({folder!r}, record_type='SequenceExample')\n"
        "result = [show(c), show(s)]\n"
    )
    assert out["result"] == [
        {"user": "FixedLenFeature(shape=[], dtype=tf.int64, default_value=None)"},
        {
            "clicks": "RaggedFeature(dtype=tf.int64, value_key=None, partitions=(), "
            "row_splits_dtype=tf.int64, validate=False)"
        },
    ]
    wrong = trainer(SPEC_REPR + f"result = spark_tfrecord.feature_spec({folder!r})")
    assert wrong["error"] == "ValueError"
    assert wrong["message"] == (
        f"{folder} holds SequenceExample records, but feature_spec was called with "
        "record_type='Example': pass record_type='SequenceExample'."
    )


@pytest.mark.tensorflow
def test_feature_spec_of_a_folder_without_a_valid_manifest_says_what_to_do(table: Path) -> None:
    """With no manifest the schema is inferred from the records (tests/test_foreign_folders.py):
    records that are not Examples fail it, naming the file and the offset."""
    out = trainer(SPEC_REPR + f"result = spark_tfrecord.feature_spec({str(table)!r})")
    assert (out["error"], out["condition"]) == ("CorruptFileError", "TFRECORD_MALFORMED_RECORD")
    assert out["parameters"]["offset"] == "0"
    assert out["parameters"]["path"].startswith(str(table))
    write_manifest(table, COUNTS, record_type="ByteArray")
    raw = trainer(SPEC_REPR + f"result = spark_tfrecord.feature_spec({str(table)!r})")
    assert (
        raw["message"] == f"{table} holds ByteArray records: raw bytes, with no features to parse."
    )
    missing = str(table / "nowhere")
    typo = trainer(SPEC_REPR + f"result = spark_tfrecord.feature_spec({missing!r})")
    assert typo["message"].startswith(
        f"No such file or folder: {missing!r}; and as a DDL schema (what a string that names no "
        f"existing path is taken for): Cannot parse the schema {missing!r}: unexpected '/'"
    )


# --- real writes: the writer's manifest, read by a trainer, against what TensorFlow reads ------

ROWS = [(i, i % 3 if i != 4 else None, [i * 0.5, 1.0, -2.0], ["t"] * (i % 3), f"d{i % 2}")
        for i in range(10)]  # fmt: skip
DDL = "id long, label long, emb array<float>, tags array<string>, day string"


def tensorflow_counts(paths: list[str]) -> dict[str, int]:
    """Records per file, as TensorFlow reads them (in a trainer, from each file's bytes)."""
    out = trainer(
        "import tensorflow as tf\n"
        "from spark_tfrecord._format.frames.compression import detect_compression\n"
        "codec = {'none': '', 'gzip': 'GZIP', 'deflate': 'ZLIB'}\n"
        f"result = {{p: int(tf.data.TFRecordDataset(p, codec[detect_compression(p)])"
        f".reduce(0, lambda n, _: n + 1)) for p in {paths!r}}}\n"
    )
    counts: dict[str, int] = out["result"]
    return counts


@pytest.mark.tensorflow
@pytest.mark.parametrize("layout", ["plain", "partitioned", "gzip"])
def test_the_writers_manifest_counts_what_tensorflow_reads(spark, out: Path, layout: str) -> None:
    import spark_tfrecord

    df = spark.createDataFrame(ROWS, DDL).repartition(3)
    if layout == "partitioned":
        spark_tfrecord.write(df, str(out), partition_by="day")
    else:
        spark_tfrecord.write(df, str(out), compression="gzip" if layout == "gzip" else None)
    info = info_of(out)["result"]
    assert (info["source"], info["reason"], info["record_type"]) == ("manifest", None, "Example")
    assert info["num_records"] == 10
    files = {p: (n, size, codec) for p, n, size, codec in info["files"]}
    on_disk = sorted(str(p) for p in out.rglob("part-*"))
    assert sorted(files) == on_disk
    assert {p: n for p, (n, _, _) in files.items()} == tensorflow_counts(on_disk)
    assert all(size == Path(p).stat().st_size for p, (_, size, _) in files.items())
    codec = "gzip" if layout == "gzip" else "none"
    assert {c for _, _, c in files.values()} == {codec}
    if layout == "partitioned":
        assert info["partitions"] == ["day"]
        assert info["schema"] == "id BIGINT,label BIGINT,emb ARRAY<FLOAT>,tags ARRAY<STRING>"
    else:
        assert info["partitions"] == []
        assert info["schema"] == (
            "id BIGINT,label BIGINT,emb ARRAY<FLOAT>,tags ARRAY<STRING>,day STRING"
        )
    assert info["features"]["emb"] == [3, 3] and info["features"]["tags"] == [0, 2]
    assert info["features"]["id"] == [1, 1] and info["features"]["label"] == [0, 1]
    # Without the manifest, the same counts from the framing.
    (out / MANIFEST).unlink()
    counted = info_of(out)["result"]
    assert counted["source"] == "counted"
    assert {p: n for p, n, _, _ in counted["files"]} == {p: n for p, (n, _, _) in files.items()}


@pytest.mark.tensorflow
def test_tensorflow_parses_a_written_folder_dense_with_feature_spec_of_its_path(
    spark, out: Path
) -> None:
    """label: nullable in Spark but in every record; emb: 3 values in every record."""
    import spark_tfrecord

    rows = [(i, i * 10, [i + 0.5, 1.0, -2.0], ["t"] * (i % 3)) for i in range(5)]
    df = spark.createDataFrame(rows, "id long, label long, emb array<float>, tags array<string>")
    assert all(f.nullable for f in df.schema.fields)
    spark_tfrecord.write(df.repartition(2), str(out))
    parsed = trainer(
        "import tensorflow as tf, spark_tfrecord\n"
        f"info = spark_tfrecord.dataset_info({str(out)!r})\n"
        f"spec = spark_tfrecord.feature_spec({str(out)!r})\n"
        "ds = tf.data.TFRecordDataset([f.path for f in info.files]).batch(8)\n"
        "b = tf.io.parse_example(next(iter(ds)), spec)\n"
        "result = {'types': {k: type(v).__name__ for k, v in sorted(b.items())},\n"
        "          'shapes': {k: list(b[k].shape) for k in ('id', 'label', 'emb')},\n"
        "          'rows': sorted(zip(b['id'].numpy().tolist(), b['label'].numpy().tolist(),\n"
        "                             b['emb'].numpy().tolist(),\n"
        "                             [[t.decode() for t in r] for r in b['tags'].to_list()]))}\n"
    )
    assert "pyspark" not in parsed["heavy"], parsed
    assert parsed["result"]["types"] == {
        "emb": "EagerTensor",
        "id": "EagerTensor",
        "label": "EagerTensor",
        "tags": "RaggedTensor",
    }
    assert parsed["result"]["shapes"] == {"id": [5], "label": [5], "emb": [5, 3]}
    assert parsed["result"]["rows"] == [
        [i, i * 10, [i + 0.5, 1.0, -2.0], ["t"] * (i % 3)] for i in range(5)
    ]


def test_file_urls_are_local_paths_and_other_urls_need_their_fsspec_package(table: Path) -> None:
    import spark_tfrecord

    for url in (f"file://{table}", f"file:{table}"):
        info = spark_tfrecord.dataset_info(url)
        assert (info.num_records, info.path) == (14, str(table))
    # Other URLs go to fsspec (tests/test_s3_loaders.py reads s3://, test_gcs.py gs://); adlfs,
    # Azure's, is not installed: the error says what to install.
    wanted = r"abfs:// URLs needs fsspec's abfs implementation .*adlfs"
    with pytest.raises(ImportError, match=wanted):
        spark_tfrecord.dataset_info("abfs://c/t")
