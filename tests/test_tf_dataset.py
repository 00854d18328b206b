"""spark_tfrecord.tf_dataset: what Spark wrote comes out of tf.data value for value, with a known
cardinality, balanced disjoint shards, and straight into Keras's fit."""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any

import pytest

import spark_tfrecord
from support import trainer_side

pytestmark = pytest.mark.tensorflow


def f32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


def per_record(tf: Any, tensor: Any) -> list[list[Any]]:
    """A parsed batch's tensor as one list of values per record: a scalar is [v], a missing
    value (a sparse row without entries) [], a list its values."""
    if isinstance(tensor, tf.SparseTensor):
        rows: list[list[Any]] = [[] for _ in range(int(tensor.dense_shape[0]))]
        for index, value in zip(tensor.indices.numpy().tolist(), tensor.values.numpy().tolist()):
            rows[index[0]].append(value)
        return rows
    if isinstance(tensor, tf.RaggedTensor):
        return list(tensor.to_list())
    values = tensor.numpy()
    return [[v] for v in values.tolist()] if values.ndim == 1 else values.tolist()


def records(tf: Any, ds: Any) -> list[dict[str, list[Any]]]:
    """Every record of a batched dataset of feature dicts, as {key: values}."""
    out: list[dict[str, list[Any]]] = []
    for batch in ds:
        columns = {k: per_record(tf, v) for k, v in batch.items()}
        size = len(next(iter(columns.values())))
        out.extend({k: v[i] for k, v in columns.items()} for i in range(size))
    return out


def ids_in_file_order(tf: Any, path: Path) -> list[int]:
    """The ids of the records, file by file in the manifest's order, record by record."""
    spec = {"id": tf.io.FixedLenFeature([], tf.int64)}
    ids = []
    for f in spark_tfrecord.dataset_info(str(path)).files:
        kind = {"none": "", "gzip": "GZIP", "deflate": "ZLIB"}[f.compression]
        for raw in tf.data.TFRecordDataset(f.path, compression_type=kind):
            ids.append(int(tf.io.parse_single_example(raw, spec)["id"]))
    return ids


ALL_TYPES = (
    "id long not null, i int, n long, sh short, b boolean, f float, d double, "
    "dec decimal(10, 2), s string, bin binary, day date, ts timestamp, x array<float>, "
    "tags array<string>, tokens array<array<string>>, v vector, "
    "st struct<a: long, w: array<double>>"
)


def all_types_frame(spark: Any) -> Any:
    """17 records of every type feature_spec handles: ``i`` a nullable scalar that every record
    holds, ``n`` one that some do not, ``x`` a list of 3 in every record, ``tags`` lists of
    any length, ``tokens`` lists of lists, ``v`` a dense ML vector of 2, ``st`` a struct."""
    import datetime
    import decimal

    from pyspark.ml.functions import array_to_vector

    rows = [
        (
            k,
            k * 7 - 50,
            None if k % 3 == 0 else k * -(2**40),
            k - 8,
            k % 2 == 0,
            k / 3,
            math.pi * k,
            decimal.Decimal(k * 101) / 100,
            f"héllo {k}",
            bytes([k, 255, 0, k]),
            datetime.date(1969, 12, 25) + datetime.timedelta(days=k),
            datetime.datetime(2024, 5, 1, 12, 30, tzinfo=datetime.timezone.utc)
            + datetime.timedelta(seconds=k * 1001, microseconds=k),
            [k / 2, -k / 4, 1.0],
            [str(j) for j in range(k % 4)],
            [["a"] * (j + 1) for j in range(k % 3)],
            [k * 0.1, -k * 0.2],
            (k**3, [k / 7] * (k % 2)),
        )
        for k in range(17)
    ]
    # The vector made in the JVM: a Python-side VectorUDT would need NumPy in Spark's workers.
    df = spark.createDataFrame(rows, ALL_TYPES.replace(" vector,", " array<double>,"))
    return df.withColumn("v", array_to_vector("v"))


def expected_records(df: Any) -> dict[int, dict[str, list[Any]]]:
    """What TensorFlow must give for each record of ``df``, by id: Spark's own values, converted
    as docs/types.md says (int64 for integers, booleans, days and microseconds; float32)."""
    rows = df.selectExpr(
        "*", "unix_date(day) AS day_days", "unix_micros(ts) AS ts_micros"
    ).collect()

    def scalar(value: Any) -> list[Any]:
        return [] if value is None else [value]

    expected = {}
    for r in rows:
        expected[r.id] = {
            "id": [r.id],
            "i": scalar(r.i),
            "n": scalar(r.n),
            "sh": scalar(r.sh),
            "b": [int(r.b)],
            "f": [f32(r.f)],
            "d": [f32(r.d)],
            "dec": [f32(float(r.dec))],
            "s": [r.s.encode()],
            "bin": [bytes(r.bin)],
            "day": [r.day_days],
            "ts": [r.ts_micros],
            "x": [f32(v) for v in r.x],
            "tags": [t.encode() for t in r.tags],
            "tokens": [[t.encode() for t in inner] for inner in r.tokens],
            "v": [f32(v) for v in r.v.toArray().tolist()],
            "st/a": [r.st.a],
            "st/w": [f32(v) for v in r.st.w],
        }
    return expected


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_values_equal_the_dataframes(spark, tf, tmp_path: Path, compression: str) -> None:
    df = all_types_frame(spark)
    path = tmp_path / "all"
    spark_tfrecord.write(df.repartition(3), str(path), compression=compression)
    info = spark_tfrecord.dataset_info(str(path))
    assert info.source == "manifest" and {f.compression for f in info.files} == {compression}

    ds = spark_tfrecord.tf_dataset(str(path), batch_size=5)
    first = next(iter(ds))
    # The manifest's value counts make these dense: a list of 3 in every record, a nullable
    # scalar that every record holds, a vector of 2; a scalar that some records lack is sparse.
    assert first["x"].shape == (5, 3) and first["x"].dtype == tf.float32
    assert first["i"].shape == (5,) and first["i"].dtype == tf.int64
    assert first["v"].shape == (5, 2)
    assert isinstance(first["n"], tf.SparseTensor)
    assert isinstance(first["tokens"], tf.RaggedTensor) and first["tokens"].ragged_rank == 2

    got = records(tf, ds)
    assert len(got) == 17
    assert {r["id"][0]: r for r in got} == expected_records(df)


def test_files_of_different_codecs_in_one_folder(spark, tf, tmp_path: Path) -> None:
    """An append in another codec: each file is read with its own compression_type."""
    path = tmp_path / "mixed"
    first = spark.createDataFrame([(k, [k * 0.5]) for k in range(6)], "id long, x array<float>")
    second = spark.createDataFrame([(k, [k * 0.5]) for k in range(6, 11)], first.schema)
    spark_tfrecord.write(first.repartition(2), str(path))
    spark_tfrecord.write(second.repartition(2), str(path), mode="append", compression="gzip")
    codecs = sorted({f.compression for f in spark_tfrecord.dataset_info(str(path)).files})
    assert codecs == ["gzip", "none"]

    got = records(tf, spark_tfrecord.tf_dataset(str(path), batch_size=4))
    assert sorted((r["id"][0], r["x"]) for r in got) == [(k, [k * 0.5]) for k in range(11)]


def test_columns_and_label(spark, tf, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    df = all_types_frame(spark)
    path = tmp_path / "all"
    spark_tfrecord.write(df.coalesce(2), str(path))
    expected = expected_records(df)

    monkeypatch.chdir(tmp_path)  # a relative path, as a reader's session gives it
    ds = spark_tfrecord.tf_dataset("all", columns=["id", "st"], label="x", batch_size=4)
    seen = 0
    for features, label in ds:
        assert sorted(features) == ["id", "st/a", "st/w"]
        ids = features["id"].numpy().tolist()
        for k, a, x in zip(ids, per_record(tf, features["st/a"]), label.numpy().tolist()):
            assert (a, x) == (expected[k]["st/a"], expected[k]["x"])
            seen += 1
    assert seen == 17

    ddl = spark_tfrecord.tf_dataset(str(path), columns="id long not null, tags array<string>")
    got = {r["id"]: r["tags"] for r in ddl.as_numpy_iterator()}
    assert {k: v.tolist() for k, v in got.items()} == {k: e["tags"] for k, e in expected.items()}

    with pytest.raises(ValueError, match=r"Column 'nope' is not in the records of"):
        spark_tfrecord.tf_dataset(str(path), columns=["id", "nope"])
    with pytest.raises(ValueError, match=r"label 'nope' is not a feature"):
        spark_tfrecord.tf_dataset(str(path), label="nope")


def test_a_folder_tensorflow_wrote_is_counted(tf, tmp_path: Path) -> None:
    """No manifest: the records are counted from the framing, the schema is the DDL given, or
    else inferred from the records."""
    path = tmp_path / "tf"
    path.mkdir()
    for name, kind, ids in (("a.tfrecord", "", range(4)), ("b.tfrecord.gz", "GZIP", range(4, 9))):
        with tf.io.TFRecordWriter(str(path / name), options=kind or None) as writer:
            for k in ids:
                feature = {
                    "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[k])),
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=[k / 2] * k)),
                }
                example = tf.train.Example(features=tf.train.Features(feature=feature))
                writer.write(example.SerializeToString())
    assert spark_tfrecord.dataset_info(str(path)).source == "counted"

    ds = spark_tfrecord.tf_dataset(
        str(path), columns="id long not null, x array<float>", batch_size=2, shard=(1, 2)
    )
    assert int(ds.cardinality()) == 2  # 9 // 2 = 4 records: worker 1 has ids 4-7
    got = records(tf, ds)
    assert [(r["id"], r["x"]) for r in got] == [([k], [k / 2] * k) for k in range(4, 8)]
    # With no columns, the schema inferred from the records: a nullable scalar and a list, so a
    # VarLenFeature and a RaggedFeature, no counts being known.
    inferred = records(tf, spark_tfrecord.tf_dataset(str(path), batch_size=4))
    assert [(r["id"], r["x"]) for r in inferred] == [([k], [k / 2] * k) for k in range(9)]


@pytest.mark.parametrize(
    "batch_size,drop_remainder,expected",
    [(None, False, 23), (5, False, 5), (5, True, 4), (23, True, 1), (30, False, 1)],
)
def test_cardinality_is_known_and_right(
    spark, tf, tmp_path: Path, batch_size: int | None, drop_remainder: bool, expected: int
) -> None:
    path = tmp_path / "t"
    df = spark.range(23).selectExpr("id", "CAST(id AS FLOAT) AS f")
    spark_tfrecord.write(df.repartition(3), str(path))
    ds = spark_tfrecord.tf_dataset(str(path), batch_size=batch_size, drop_remainder=drop_remainder)
    assert int(ds.cardinality()) == expected
    assert sum(1 for _ in ds) == expected  # what it says is what it gives
    looped = spark_tfrecord.tf_dataset(str(path), batch_size=batch_size, repeat=True)
    assert int(looped.cardinality()) == tf.data.INFINITE_CARDINALITY
    assert len(list(looped.take(2 * 23 + 1))) == 2 * 23 + 1


def uneven_files(spark: Any, path: Path, n: int = 23) -> None:
    """``n`` records in 4 files of different sizes (ids 0-2, 3-6, 7-14, 15-...)."""
    df = spark.range(n).selectExpr(
        "id", "CASE WHEN id < 3 THEN 0 WHEN id < 7 THEN 1 WHEN id < 15 THEN 2 ELSE 3 END AS p"
    )
    spark_tfrecord.write(df.repartition(4, "p").drop("p"), str(path))


def worker_ids(tf: Any, ds: Any) -> tuple[list[int], int]:
    """The ids a worker's dataset gives, and its number of batches."""
    batches = [b["id"].numpy().tolist() for b in ds]
    return [k for b in batches for k in b], len(batches)


@pytest.mark.parametrize("count", [2, 3])
@pytest.mark.parametrize("given_as", ["pair", "input_context"])
def test_workers_get_disjoint_equal_shards(
    spark, tf, tmp_path: Path, count: int, given_as: str
) -> None:
    path = tmp_path / "t"
    uneven_files(spark, path)
    order = ids_in_file_order(tf, path)
    assert sorted(order) == list(range(23))
    q = 23 // count

    def shard(i: int) -> Any:
        if given_as == "pair":
            return (i, count)
        return tf.distribute.InputContext(
            num_input_pipelines=count, input_pipeline_id=i, num_replicas_in_sync=count
        )

    workers = [
        spark_tfrecord.tf_dataset(str(path), columns=["id"], batch_size=3, shard=shard(i))
        for i in range(count)
    ]
    got = [worker_ids(tf, ds) for ds in workers]
    # Worker i reads the i-th run of q records in file order; the last 23 % count are dropped.
    assert [sorted(ids) for ids, _ in got] == [
        sorted(order[i * q : (i + 1) * q]) for i in range(count)
    ]
    union = {k for ids, _ in got for k in ids}
    assert sum(len(ids) for ids, _ in got) == len(union) == count * q
    assert sorted(set(order) - union) == sorted(order[count * q :])
    assert len(order) - len(union) == 23 % count <= count - 1
    batches = {n for _, n in got}
    assert batches == {math.ceil(q / 3)} == {int(ds.cardinality()) for ds in workers}


@pytest.mark.parametrize("count", [2, 3])
def test_shuffled_files_stay_disjoint_at_every_epoch(spark, tf, tmp_path: Path, count: int) -> None:
    path = tmp_path / "t"
    uneven_files(spark, path)
    q = 23 // count
    workers = [
        spark_tfrecord.tf_dataset(
            str(path), columns=["id"], batch_size=4, shard=(i, count), shuffle_files=True, seed=3
        )
        for i in range(count)
    ]
    epochs = []
    for _ in range(3):  # each pass draws a new file order, the same on every worker
        got = [worker_ids(tf, ds) for ds in workers]
        assert [len(ids) for ids, _ in got] == [q] * count
        assert len({k for ids, _ in got for k in ids}) == count * q
        assert {n for _, n in got} == {math.ceil(q / 4)}
        epochs.append([k for ids, _ in got for k in ids])
    assert len({tuple(e) for e in epochs}) > 1  # the order changed between passes

    with pytest.raises(ValueError, match="give every worker the same seed"):
        spark_tfrecord.tf_dataset(str(path), shard=(0, 2), shuffle_files=True)
    with pytest.raises(ValueError, match="0 <= index < count"):
        spark_tfrecord.tf_dataset(str(path), shard=(2, 2))


@pytest.mark.parametrize(
    "options",
    [
        {"batch_size": 5},
        {"batch_size": 5, "drop_remainder": True, "label": "y"},
        {"batch_size": None, "label": "y"},
        {"batch_size": 4, "shard": (1, 2)},
        {"batch_size": 3, "shuffle_files": True, "seed": 7},
    ],
)
def test_parsing_where_read_gives_the_same_batches(
    spark, tf, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: dict[str, Any]
) -> None:
    """Dense features are parsed a block at a time where the files are read when a worker has a
    file per core (tf._parse_where_read), else a batch at a time after the reads: the same
    batches, in the same order, either way (with shuffled files, in the order the reads end:
    the same records)."""
    import os

    from spark_tfrecord._loaders import tf as loader

    path = tmp_path / "t"
    df = spark.range(23).selectExpr(
        "id", "array(CAST(id AS FLOAT), -CAST(id AS FLOAT)) AS x", "CAST(id % 2 AS DOUBLE) AS y"
    )
    uneven = df.withColumn("p", (df.id >= 3).cast("int") + (df.id >= 7).cast("int"))
    spark_tfrecord.write(uneven.repartition(4, "p").drop("p"), str(path))
    dense = spark_tfrecord.feature_spec(str(path))
    assert all(isinstance(f, tf.io.FixedLenFeature) for f in dense.values())

    def passes(cores: int) -> tuple[list[Any], int]:
        monkeypatch.setattr(os, "cpu_count", lambda: cores)
        assert loader._parse_where_read(dense, {}, None, 4 // options.get("shard", (0, 1))[1]) == (
            cores == 1
        )
        ds = spark_tfrecord.tf_dataset(str(path), **options)
        got = []
        for element in ds:
            features, label = element if "label" in options else (element, None)
            got.append(
                (
                    {k: v.numpy().tolist() for k, v in features.items()},
                    None if label is None else label.numpy().tolist(),
                )
            )
        return got, int(ds.cardinality())

    where_read, after = passes(1), passes(1_000_000)
    assert where_read[0] and len(where_read[0]) == where_read[1] == after[1]
    if "shuffle_files" in options:  # blocks come as the reads finish: the same records

        def ids(batches: list[Any]) -> list[int]:
            return sorted(k for features, _ in batches for k in features["id"])

        assert ids(where_read[0]) == ids(after[0]) and len(ids(after[0])) == 23
    else:
        assert where_read == after


def test_shuffle_buffer_keeps_every_record(spark, tf, tmp_path: Path) -> None:
    path = tmp_path / "t"
    uneven_files(spark, path)
    ds = spark_tfrecord.tf_dataset(str(path), columns=["id"], shuffle_buffer=8, seed=1)
    passes = [[int(r["id"]) for r in ds.as_numpy_iterator()] for _ in range(2)]
    assert [sorted(p) for p in passes] == [list(range(23))] * 2
    file_order = ids_in_file_order(tf, path)
    assert passes[0] != file_order and passes[0] != passes[1]  # reshuffled at each pass


def test_the_autotuner_is_off_and_a_user_can_turn_it_on(spark, tf, tmp_path: Path) -> None:
    # Off, it fed the loop 1.3x to 1.6x as fast on 2 cores (tf.py's fixed options); on or off, the
    # same records in the same order.
    path = tmp_path / "t"
    uneven_files(spark, path)
    ds = spark_tfrecord.tf_dataset(str(path), columns=["id"], batch_size=4)
    assert ds.options().autotune.enabled is False
    on = tf.data.Options()
    on.autotune.enabled = True
    tuned = ds.with_options(on)
    assert tuned.options().autotune.enabled is True
    ids = [[int(i) for i in b["id"]] for b in ds.as_numpy_iterator()]
    assert [[int(i) for i in b["id"]] for b in tuned.as_numpy_iterator()] == ids
    assert sorted(i for b in ids for i in b) == list(range(23))


def test_keras_fit_runs_an_epoch_without_steps_per_epoch(spark, tf, tmp_path: Path) -> None:
    import keras

    path = tmp_path / "t"
    df = spark.createDataFrame(
        [([k / 10, 1.0, -k / 10], float(k % 2)) for k in range(37)], "x array<float>, y float"
    )
    spark_tfrecord.write(df.repartition(3), str(path))
    ds = spark_tfrecord.tf_dataset(str(path), label="y", batch_size=8)
    assert int(ds.cardinality()) == 5

    class Steps(keras.callbacks.Callback):  # type: ignore[misc]
        ran = 0

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            Steps.ran += 1

    inputs = keras.Input(shape=(3,), name="x")
    model = keras.Model({"x": inputs}, keras.layers.Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(ds, epochs=2, callbacks=[Steps()], verbose=0)
    assert Steps.ran == 2 * int(ds.cardinality())
    assert len(history.history["loss"]) == 2 and all(map(math.isfinite, history.history["loss"]))


def test_trainer_side_imports_no_spark(spark, tmp_path: Path) -> None:
    """tf_dataset runs where there is no Spark: in a fresh Python it imports neither pyspark
    nor py4j."""
    path = tmp_path / "t"
    spark_tfrecord.write(spark.range(5).selectExpr("id", "id * 2 AS y"), str(path))
    code = (
        "import spark_tfrecord\n"
        f"ds = spark_tfrecord.tf_dataset({str(path)!r}, label='y', batch_size=2)\n"
        "result = sorted(int(v) for _, y in ds for v in y.numpy())\n"
    )
    answer = trainer_side.run(code)
    assert answer == {"result": [0, 2, 4, 6, 8], "heavy": ["tensorflow"]}
