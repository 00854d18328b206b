"""TFDS ``Tensor``s with more than one unknown dimension, which TFDS stores only encoded
(``encoding='bytes'`` or ``'zlib'``): ``x/value`` (the raw little-endian values, zlib-compressed
or not) and ``x/shape``. TFDS writes (``store_as_tfds_dataset``) and we read nested arrays value
for value, bits included; we write (``write_tfds`` with the same features) and TFDS decodes value
for value; a value that is not rectangular fails naming the column. Without the jar (the record
path of ``read_arrow`` and of the Python data source), encoded tensors of each dtype and rank,
zlib and not, read as the jar reads them, and fail with its errors. A TFDS ``Tensor`` of shape
``()`` with an encoding is one bytes value under its own name, no ``x/value`` and ``x/shape``:
its folder's schema is refused, and a column with an encoded tensor's metadata but of no array
is refused before any record, by the jar and without it alike."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spark_tfrecord
from spark_tfrecord import errors, local
from spark_tfrecord._format.datasets import tfds_dataset
from support import batch_path, encoded_tensors, write_with_tfds
from support import tfrecord_bytes as wire
from support.jar_decoder import Failure, Row, jar_results, value_tree
from support.tfrecord_bytes import write_records


@pytest.fixture(scope="module")
def tfds() -> Any:
    import tensorflow_datasets

    return tensorflow_datasets


def features(tfds: Any) -> Any:
    f = tfds.features
    return f.FeaturesDict(
        {
            "id": np.int64,
            "m": f.Tensor(shape=(None, None), dtype=np.float32, encoding="zlib"),
            "c": f.Tensor(shape=(None, None, None), dtype=np.int64, encoding="bytes"),
        }
    )


def example(i: int) -> dict[str, Any]:
    """Row i: empty dimensions, NaN (with a payload) and -0.0, int64 extremes."""
    shapes = [(2, 3), (0, 3), (3, 0), (1, 1)]
    m = np.arange(np.prod(shapes[i % 4]), dtype=np.float32).reshape(shapes[i % 4]) - 2
    if m.size:
        m.flat[0] = np.uint32(0x7FC00001).view(np.float32)
        m.flat[-1] = -0.0
    c = np.array([[[i, -(2**63)], [2**63 - 1, 0]]], dtype=np.int64)
    if i % 3 == 1:
        c = np.zeros((2, 0, 4), dtype=np.int64)
    return {"id": i, "m": m, "c": c}


EXAMPLES = [example(i) for i in range(6)]


def bits(a: Any) -> list[Any]:
    """The nested lists of a float32 array's bit patterns."""
    return np.asarray(a, dtype=np.float32).view(np.uint32).tolist()  # type: ignore[no-any-return]


def same_m(got: Any, e: np.ndarray) -> None:
    """A float32 value (nested lists or an array) against TFDS's, bit for bit."""
    if e.shape[0] == 0:
        assert len(got) == 0
        return
    assert bits(got) == bits(e)


@pytest.fixture(scope="module")
def written_by_tfds(tfds: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tensor-by-tfds")
    return write_with_tfds(tfds, root, "tensor_by_tfds", features(tfds), {"train": EXAMPLES})


def test_tfds_stores_value_and_shape(tf: Any, written_by_tfds: Path) -> None:
    shard = next(p for p in written_by_tfds.iterdir() if ".tfrecord-" in p.name)
    record = next(iter(tf.data.TFRecordDataset(str(shard)))).numpy()
    names = set(tf.train.Example.FromString(record).features.feature)
    assert names == {"id", "m/value", "m/shape", "c/value", "c/shape"}


def test_encoded_tensors_written_by_tfds_are_read_value_for_value(
    spark: Any, written_by_tfds: Path
) -> None:
    df = spark_tfrecord.read_tfds(spark, str(written_by_tfds), "train")
    assert df.schema["m"].dataType.simpleString() == "array<array<float>>"
    assert df.schema["c"].dataType.simpleString() == "array<array<array<bigint>>>"
    assert df.schema["m"].metadata["tfrecord.tensorEncoding"] == "zlib"
    assert df.schema["m"].metadata["tfrecord.tensorDtype"] == "float32"
    assert df.schema["c"].metadata["tfrecord.tensorEncoding"] == "bytes"
    rows = {r.id: r for r in df.collect()}
    assert sorted(rows) == list(range(len(EXAMPLES)))
    for e in EXAMPLES:
        r = rows[e["id"]]
        same_m(r.m, e["m"])
        if e["m"].shape[0]:
            assert [len(x) for x in r.m] == [e["m"].shape[1]] * e["m"].shape[0]
        assert r.c == e["c"].tolist()
    pruned = spark.read.format("tfrecord").option("split", "train").load(str(written_by_tfds))
    assert {r.id: r.c for r in pruned.select("id", "c").collect()} == {
        e["id"]: e["c"].tolist() for e in EXAMPLES
    }


def test_encoded_tensors_written_by_spark_are_decoded_by_tfds(
    spark: Any, tfds: Any, tmp_path: Path
) -> None:
    rows = [(e["id"], e["m"].tolist(), e["c"].tolist()) for e in EXAMPLES]
    df = spark.createDataFrame(rows, "id long, m array<array<float>>, c array<array<array<long>>>")
    folder = spark_tfrecord.write_tfds(
        df, str(tmp_path), "tensor_by_spark", "train", num_shards=2, features=features(tfds)
    )
    written = json.loads((Path(folder) / "features.json").read_text())["featuresDict"]["features"]
    assert written["m"]["tensor"]["encoding"] == "zlib"
    ds = tfds.builder_from_directory(folder).as_dataset(split="train", shuffle_files=False)
    by_tfds = {int(d["id"]): d for d in tfds.as_numpy(ds)}
    assert sorted(by_tfds) == list(range(len(EXAMPLES)))
    for e in EXAMPLES:
        d = by_tfds[e["id"]]
        assert d["m"].dtype == np.float32 and d["c"].dtype == np.int64
        same_m(d["m"], e["m"])
        if e["m"].shape[0]:
            assert d["m"].shape == e["m"].shape
        assert d["c"].tolist() == e["c"].tolist()
        if e["c"].shape[0] and e["c"].shape[1]:
            assert d["c"].shape == e["c"].shape


def test_a_value_that_is_not_rectangular_fails_naming_the_column(
    spark: Any, tfds: Any, tmp_path: Path
) -> None:
    df = spark.createDataFrame(
        [(0, [[1.0, 2.0], [3.0]], [[[1]]])],
        "id long, m array<array<float>>, c array<array<array<long>>>",
    )
    with pytest.raises(Exception, match="Column 'm' holds an encoded tensor of rank 2 that is not "
                       "rectangular"):  # fmt: skip
        spark_tfrecord.write_tfds(df, str(tmp_path), "bad", "train", features=features(tfds))


@pytest.mark.parametrize("case", list(encoded_tensors.CASES))
def test_encoded_tensors_read_without_the_jar_as_the_jar(tmp_path: Path, case: str) -> None:
    """The record path (``read_arrow``'s and the Python data source's) reads encoded tensors of
    every dtype and rank, zlib or not, value for value as the jar does; a record the jar's
    ``EncodedTensorReader`` refuses fails with its condition, offset, column and words."""
    path = str(write_records(tmp_path / "part-0.tfrecord", encoded_tensors.CASES[case]))
    schema = encoded_tensors.SCHEMA
    jar = jar_results(path, schema)
    failed = [r for _, r in jar if isinstance(r, Failure)]
    if failed:
        with pytest.raises(errors.CorruptFileError) as raised:
            batch_path.table(path, schema, {})
        found = errors.parameters(raised.value)
        assert errors.condition(raised.value) == failed[0].condition == errors.DATA_MISMATCH
        for key in ("offset", "column", "reason"):
            assert found.get(key) == failed[0].parameters.get(key), key
        return
    rows = batch_path.table(path, schema, {}).to_pylist()
    fields = schema["fields"]
    trees = [{f["name"]: value_tree(f["type"], r[f["name"]]) for f in fields} for r in rows]
    assert trees == [r.values for _, r in jar if isinstance(r, Row)]
    assert rows[0]["n"] == [[[-(2**31), 2**31 - 1, 0]], [[1, -1, 7]]]
    assert rows[1]["mask"] == [[], []] and rows[2]["depth"] is None


@pytest.mark.parametrize("case", list(encoded_tensors.REFUSED))
def test_a_bad_encoded_tensor_column_is_refused_as_by_the_jar(tmp_path: Path, case: str) -> None:
    """A column with an encoded tensor's metadata that it cannot hold (of no array, or of an
    encoding, a dtype or an element type it cannot have: ``encoded_tensors.REFUSED``): refused when
    the read is planned, before any record, by the jar (its scan's one result, at offset -1) and by
    ``read_arrow``'s path (the plan), with the same condition, column and words."""
    path = str(write_records(tmp_path / "part-0.tfrecord", encoded_tensors.SCALAR_RECORDS))
    schema = encoded_tensors.refused_schema(case)
    reason = encoded_tensors.refused_reason(case)
    jar = jar_results(path, schema)
    assert jar == [(-1, Failure(errors.INVALID_SCHEMA, {"column": "x", "reason": reason}))]
    with pytest.raises(errors.ArgumentError) as raised:
        batch_path.plan(path, schema, {})
    assert errors.condition(raised.value) == errors.INVALID_SCHEMA
    assert errors.parameters(raised.value) == {"column": "x", "reason": reason}


def test_a_struct_with_an_encoded_tensors_metadata_reads_as_by_the_jar(tmp_path: Path) -> None:
    """The metadata on a struct (or an array of structs) is no encoded tensor: both walk it as
    the struct it is, and read its leaves' features."""
    meta = {"tfrecord.tensorEncoding": "zlib", "tfrecord.tensorDtype": "float32"}
    struct = {"type": "struct", "fields": [{"name": "a", "type": "long", "nullable": True}]}
    schema = {
        "type": "struct",
        "fields": [
            {"name": "s", "type": struct, "nullable": True, "metadata": meta},
            {
                "name": "o",
                "type": {"type": "array", "elementType": struct, "containsNull": False},
                "nullable": True,
                "metadata": meta,
            },
        ],
    }
    records = [
        wire.example(
            wire.entry(b"s/a", wire.feature("int64", wire.int64_list_packed([7]))),
            wire.entry(b"o/a", wire.feature("int64", wire.int64_list_packed([1, 2]))),
        )
    ]
    path = str(write_records(tmp_path / "part-0.tfrecord", records))
    jar = jar_results(path, schema)
    assert jar == [(0, Row({"s": {"a": "7"}, "o": [{"a": "1"}, {"a": "2"}]}))]
    assert batch_path.table(path, schema, {}).to_pylist() == [
        {"s": {"a": 7}, "o": [{"a": 1}, {"a": 2}]}
    ]


def test_tfds_stores_an_encoded_scalar_as_one_bytes_value(
    tf: Any, tfds: Any, tmp_path: Path
) -> None:
    """``Tensor(shape=(), encoding='zlib')``: TFDS stores one bytes value under the feature's
    own name (no ``x/value``, no ``x/shape``) and decodes it as a scalar. Its folder's schema is
    refused by the jar and without it with the same words; its files read with a scalar column
    carrying an encoded tensor's metadata, too, before any record."""
    f = tfds.features
    features = f.FeaturesDict(
        {"id": np.int64, "x": f.Tensor(shape=(), dtype=np.float32, encoding="zlib")}
    )
    values = [np.float32(1.5), np.float32(-0.0)]
    examples = [{"id": i, "x": v} for i, v in enumerate(values)]
    folder = write_with_tfds(tfds, tmp_path, "scalar_by_tfds", features, {"train": examples})
    shard = next(p for p in folder.iterdir() if ".tfrecord-" in p.name)
    stored = {}
    for record in tf.data.TFRecordDataset(str(shard)):
        feature = tf.train.Example.FromString(record.numpy()).features.feature
        assert set(feature) == {"id", "x"}
        stored[feature["id"].int64_list.value[0]] = list(feature["x"].bytes_list.value)
    assert stored == {i: [zlib.compress(v.tobytes())] for i, v in enumerate(values)}
    ds = tfds.builder_from_directory(str(folder)).as_dataset(split="train", shuffle_files=False)
    decoded = {int(d["id"]): d["x"] for d in tfds.as_numpy(ds)}
    assert {i: (x.shape, x.dtype, x.tobytes()) for i, x in decoded.items()} == {
        i: ((), np.float32, v.tobytes()) for i, v in enumerate(values)
    }

    with pytest.raises(Exception) as jar:
        local.tfds_schema(str(folder))
    with pytest.raises(errors.ArgumentError) as ours:
        tfds_dataset.folder_schema(str(folder))
    assert errors.condition(jar.value) == ours.value.condition == errors.TFDS_FEATURES
    refused = ours.value.parameters["reason"]
    assert refused == errors.parameters(jar.value)["reason"]
    assert "an encoded tensor of shape () (at most one unknown dimension)" in refused

    schema = encoded_tensors.refused_schema("float, zlib")
    reason = encoded_tensors.refused_reason("float, zlib")
    assert jar_results(str(shard), schema) == [
        (-1, Failure(errors.INVALID_SCHEMA, {"column": "x", "reason": reason}))
    ]
    with pytest.raises(errors.ArgumentError) as planned:
        batch_path.plan(str(shard), schema, {})
    assert errors.parameters(planned.value) == {"column": "x", "reason": reason}


def test_a_scalar_with_an_encoded_tensors_metadata_is_not_written_as_tfds(
    spark: Any, tmp_path: Path
) -> None:
    """``write_tfds`` without features would describe such a column as an encoded scalar: the
    write is refused before any file, with the reader's words."""
    from pyspark.sql.types import StructType

    schema = StructType.fromJson(encoded_tensors.refused_schema("bigint, bytes"))
    df = spark.createDataFrame([(1, 2)], schema)
    with pytest.raises(Exception) as raised:
        spark_tfrecord.write_tfds(df, str(tmp_path), "scalar", "train")
    assert errors.condition(raised.value) == errors.INVALID_SCHEMA
    assert errors.parameters(raised.value)["reason"] == encoded_tensors.refused_reason(
        "bigint, bytes"
    )
    assert not list(tmp_path.rglob("*.tfrecord*"))
