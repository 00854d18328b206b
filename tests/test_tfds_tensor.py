"""TFDS ``Tensor``s with more than one unknown dimension, which TFDS stores only encoded
(``encoding='bytes'`` or ``'zlib'``): ``x/value`` (the raw little-endian values, zlib-compressed
or not) and ``x/shape``. TFDS writes (``store_as_tfds_dataset``) and we read nested arrays value
for value, bits included; we write (``write_tfds`` with the same features) and TFDS decodes value
for value; a value that is not rectangular fails naming the column. Without the jar (the record
path of ``read_arrow`` and of the Python data source), encoded tensors of each dtype and rank,
zlib and not, read as the jar reads them, and fail with its errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spark_tfrecord
from spark_tfrecord import errors
from support import batch_path, encoded_tensors, write_with_tfds
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
