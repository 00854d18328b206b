"""Ray Data reads and writes TFRecord folders through the package's codec (issue 58), on a real
local Ray cluster (``ray.init(num_cpus=2)``, one for the module).

- Read: the files TensorFlow writes (support/tf_corpus.py) and folders the jar writes
  (partitioned, GZIP, SequenceExample) give, through ``spark_tfrecord.ray.read``, the jar's
  schema and rows, value for value (floats bit for bit); a corrupt record fails the Ray task with
  the jar's condition, file and offset; a folder's manifest gives ``ds.count()`` without a read
  (its files' bytes replaced, the count still answers), but not where a read drops records or
  the manifest is stale (then Ray counts by reading); a large file reads in byte ranges, as
  many tasks, whose rows are not counted; ``iter_torch_batches`` gives ``torch_dataset``'s
  collated tensors.
- Write: ``spark_tfrecord.ray.write`` of a DataFrame's Arrow rows gives the files the jar writes
  from the same DataFrame, byte for byte, for every type and layout of
  test_python_encoder's cases, its file names and its manifest's counts; ``dataset_info``,
  ``feature_spec``, ``tf_dataset`` and the jar read it; append and overwrite are the jar's; a
  failed write or a write task killed mid-file leaves the folder as it was.
- S3 (moto's server): a folder read and written through ``s3://``.
- ``import spark_tfrecord`` imports no Ray (a fresh Python).
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import ray
import ray.data

import spark_tfrecord
import spark_tfrecord.ray as tfr_ray
from spark_tfrecord import errors
from spark_tfrecord._format.frames.encode_errors import EncodeError
from support import TESTS, child_env, tf_corpus
from support.s3_server import ACCESS_KEY, REGION, S3, SECRET_KEY, s3_bucket
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    int64_list_packed,
    write_records,
)
from test_python_encoder import _cases, _vectors, arrow_batches

pytestmark = pytest.mark.timeout(900)
BUCKET = "ray"
PART = re.compile(r"part-(\d{5})-[0-9a-f-]{36}-c000\.tfrecord(\.gz|\.deflate)?")


@pytest.fixture(scope="module", autouse=True)
def cluster() -> Iterator[None]:
    """A local Ray cluster of 2 CPUs for the module; its workers import this package (and this
    folder's modules) as the test process does."""
    package = str(Path(spark_tfrecord.__file__).parent.parent)
    path = os.pathsep.join([package, str(TESTS), os.environ.get("PYTHONPATH", "")])
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        yield
    finally:
        ray.shutdown()


# --- comparing rows ---------------------------------------------------------------------------


def _canonical(value: Any) -> Any:
    """A value with each float as its bits (NaN's payload, -0.0 kept), for equality."""
    if isinstance(value, float):
        return ("float", struct.pack("<d", value))
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def _rows(table: pa.Table) -> list[Any]:
    rows = [_canonical(r) for r in table.to_pylist()]
    return sorted(rows, key=repr)


def _ray_table(ds: Any) -> pa.Table:
    return pa.concat_tables([ray.get(ref) for ref in ds.to_arrow_refs()])


def _jar_table(df: Any) -> pa.Table:
    return df.toArrow() if hasattr(df, "toArrow") else pa.Table.from_batches(df._collect_as_arrow())


def _same_as_jar(spark: Any, path: str, options: dict[str, str], **read: Any) -> pa.Table:
    jar = _jar_table(spark.read.format("tfrecord").options(**options).load(path))
    ours = _ray_table(tfr_ray.read(path, options=options, **read))
    assert ours.schema.names == jar.schema.names
    assert ours.schema.types == jar.schema.types, (ours.schema, jar.schema)
    assert _rows(ours) == _rows(jar)
    return ours


# --- read -------------------------------------------------------------------------------------


@pytest.mark.parametrize("corpus", ["interop", "every_kind", "images"])
def test_reads_tensorflows_files_as_the_jar(
    spark: Any, tf: Any, tmp_path: Path, corpus: str
) -> None:
    records = getattr(tf_corpus, corpus)(tf)
    tf_corpus.write(tf, tmp_path / "t" / "part-0.tfrecord", records)
    ours = _same_as_jar(spark, str(tmp_path / "t"), {})
    assert ours.num_rows == len(records)


WRITTEN = {
    "partitioned": ("id long, x array<float>, day string", {}, {}, ["day"]),
    "gzip": ("id long, x array<float>, day string", {"compression": "gzip"}, {}, []),
    "sequence": (
        "id long, frames array<array<float>>, day string",
        {"recordType": "SequenceExample"},
        {"recordType": "SequenceExample"},
        [],
    ),
}


@pytest.mark.parametrize("case", list(WRITTEN))
def test_reads_the_jars_folders_as_the_jar(spark: Any, tmp_path: Path, case: str) -> None:
    ddl, write_options, read_options, partition_by = WRITTEN[case]
    if "frames" in ddl:
        rows = [(i, [[i / 4], [], [1.5, -0.0]], f"d{i % 3}") for i in range(40)]
    else:
        rows = [(i, [i / 4, math.inf], f"d{i % 3}") for i in range(40)]
    df = spark.createDataFrame(rows, ddl).repartition(3)
    path = str(tmp_path / "t")
    df.write.format("tfrecord").options(**write_options).partitionBy(*partition_by).save(path)
    ours = _same_as_jar(spark, path, read_options)
    assert ours.num_rows == 40
    if partition_by:
        assert ours.schema.names[-1] == "day"


def test_a_projection_and_a_given_schema(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    spark.createDataFrame(
        [(1, "a", [0.5]), (2, "b", [])], "id long, s string, x array<float>"
    ).write.format("tfrecord").save(path)
    by_names = _ray_table(tfr_ray.read(path, ["s", "id"]))
    assert by_names.schema.names == ["s", "id"]
    assert sorted(by_names.to_pylist(), key=lambda r: r["id"]) == [
        {"s": "a", "id": 1},
        {"s": "b", "id": 2},
    ]
    given = _ray_table(tfr_ray.read(path, "id int"))
    assert given.schema == pa.schema([("id", pa.int32())])
    assert sorted(given.column("id").to_pylist()) == [1, 2]


def test_the_manifest_counts_with_no_read(spark: Any, tmp_path: Path) -> None:
    """The counts are the manifest's: the files' bytes replaced by garbage of the same sizes
    (the manifest still valid), ``count()`` answers, and a read fails."""
    path = tmp_path / "t"
    spark.range(1000).repartition(4).write.format("tfrecord").save(str(path))
    ds = tfr_ray.read(path)
    source = tfr_ray.TFRecordDatasource(path)
    tasks = source.get_read_tasks(2)
    assert sum(t.metadata.num_rows for t in tasks) == 1000
    assert sum(t.metadata.size_bytes for t in tasks) == source.estimate_inmemory_data_size()
    assert source.estimate_inmemory_data_size() == sum(
        p.stat().st_size for p in path.glob("part-*")
    )
    for p in path.glob("part-*"):
        p.write_bytes(b"\xff" * p.stat().st_size)
    assert ds.count() == 1000  # the schema was inferred before; the count reads no record
    assert tfr_ray.read(path, "id long").count() == 1000  # a schema given: nothing read at all
    with pytest.raises(Exception) as e:
        ds.take_all()
    assert isinstance(e.value, errors.CorruptFileError), type(e.value)


def test_a_large_file_reads_in_byte_ranges(spark: Any, tmp_path: Path) -> None:
    """A file larger than a task's share is read in byte ranges (a record in the range its
    header starts in): more blocks than files, and every record once."""
    path = str(tmp_path / "t")
    spark.range(120_000).selectExpr("id", "repeat('x', 40) as s").coalesce(1).write.format(
        "tfrecord"
    ).save(path)
    source = tfr_ray.TFRecordDatasource(path)
    tasks = source.get_read_tasks(4)
    assert len(tasks) >= 3
    assert all(t.metadata.num_rows is None for t in tasks)  # ranges: not counted
    assert sum(t.metadata.size_bytes for t in tasks) == source.estimate_inmemory_data_size()
    (whole,) = source.get_read_tasks(1)  # one task asked for: the file whole, counted
    assert whole.metadata.num_rows == 120_000
    ds = tfr_ray.read(path, override_num_blocks=4, concurrency=2)
    ids = _ray_table(ds).column("id").to_pylist()
    assert sorted(ids) == list(range(120_000))
    assert ds.count() == 120_000


def test_a_read_task_yields_tables_of_block_records(spark: Any, tmp_path: Path) -> None:
    # Twice the batch of the other reads: Ray's tasks spend less per row on bigger tables.
    path = str(tmp_path / "t")
    spark.range(20_000).coalesce(1).write.format("tfrecord").save(path)
    (task,) = tfr_ray.TFRecordDatasource(path).get_read_tasks(1)
    tables = list(task())
    assert [t.num_rows for t in tables] == [8192, 8192, 20_000 - 2 * 8192]
    assert tfr_ray.datasource.BLOCK_RECORDS == 8192
    assert pa.concat_tables(tables).column("id").to_pylist() == list(range(20_000))


def _count_by_reading(spark: Any, path: Path, case: str) -> tuple[dict[str, str], str, int]:
    """A folder of 1,000 rows in 4 files whose valid manifest counts records that ``case``'s
    read does not give as rows (or whose manifest is stale): its options, its columns, and the
    rows it gives."""
    if case == "dropmalformed":
        # s is text where it is set (every 4th row): a read of s as a long drops those records
        spark.range(1000).selectExpr("id", "if(id % 4 = 0, 'x', null) AS s").repartition(
            4
        ).write.format("tfrecord").save(str(path))
        return {"mode": "DROPMALFORMED"}, "id long, s long", 750
    spark.range(1000).repartition(4).write.format("tfrecord").save(str(path))
    if case == "ignoreCorruptFiles":
        first = sorted(path.glob("part-*"))[0]
        first.write_bytes(b"\xff" * first.stat().st_size)  # the manifest still matches it
        return {"ignoreCorruptFiles": "true"}, "id long", 750
    # another tool's file added: the manifest no longer names every data file
    records = [example(entry(b"id", feature("int64", int64_list_packed([-i])))) for i in range(5)]
    write_records(path / "part-other.tfrecord", records)
    return {}, "id long", 1005


def test_a_read_asks_for_two_blocks_per_cpu(spark: Any, tmp_path: Path) -> None:
    # A file of 40 MB: Ray's own choice would be some 40 blocks (one per MiB of data, up to
    # 200), which the read would plan as byte ranges of Spark's smallest split, 4 MB, ten of
    # them; each block costs Ray milliseconds, so the read asks for two per CPU of the cluster
    # (ray.init(num_cpus=2)) unless told: four ranges of 10 MB.
    path = str(tmp_path / "large")
    rows = spark.range(0, 200_000, 1, 1).selectExpr(
        "id", "array_repeat(CAST(id AS FLOAT), 40) AS x"
    )
    rows.write.format("tfrecord").save(path)
    ds = tfr_ray.read(path, "id bigint")
    assert ds.materialize().num_blocks() <= 4
    assert ds.count() == 200_000 and ds.sum("id") == 200_000 * 199_999 // 2
    assert tfr_ray.read(path, "id bigint", override_num_blocks=40).materialize().num_blocks() > 4


@pytest.mark.parametrize("case", ["dropmalformed", "ignoreCorruptFiles", "stale manifest"])
def test_count_reads_where_the_manifest_is_not_the_rows(
    spark: Any, tmp_path: Path, case: str
) -> None:
    """The manifest's counts are the rows only of whole files a read gives a row per record
    of: a read that drops records (DROPMALFORMED, ignoreCorruptFiles), or a folder the manifest
    no longer describes, leaves the rows unknown, and ``count()`` is the rows read."""
    path = tmp_path / "t"
    options, columns, rows = _count_by_reading(spark, path, case)
    tasks = tfr_ray.TFRecordDatasource(path, columns, options=options).get_read_tasks(1)
    assert [t.metadata.num_rows for t in tasks] == [None]
    if case != "stale manifest":  # the manifest is valid: without the option, it counts
        (counted,) = tfr_ray.TFRecordDatasource(path, columns).get_read_tasks(1)
        assert counted.metadata.num_rows == 1000
    ds = tfr_ray.read(path, columns, options=options)
    assert ds.count() == rows
    assert _ray_table(ds).num_rows == rows


def _bad_folder(folder: Path) -> tuple[str, int]:
    """A file of ten records whose record 6 holds text where ``id`` is a long, and that
    record's offset."""
    records = [example(entry(b"id", feature("int64", int64_list_packed([i])))) for i in range(10)]
    records[6] = example(entry(b"id", feature("bytes", bytes_list([b"x"]))))
    path = write_records(folder / "part-0.tfrecord", records)
    return str(path), sum(len(r) + 16 for r in records[:6])


def test_a_corrupt_record_is_the_jars_error_from_a_ray_task(spark: Any, tmp_path: Path) -> None:
    path, offset = _bad_folder(tmp_path / "t")
    with pytest.raises(Exception) as jar:
        spark.read.format("tfrecord").schema("id long").load(str(tmp_path / "t")).collect()
    with pytest.raises(errors.CorruptFileError) as ours:
        tfr_ray.read(tmp_path / "t", "id long").take_all()
    found = errors.parameters(ours.value)
    assert ours.value.condition == errors.condition(jar.value) == errors.DATA_MISMATCH
    assert found["path"] == path and found["offset"] == str(offset)
    assert found["offset"] == errors.parameters(jar.value)["offset"]
    assert found["column"] == "id"
    assert "ray::" in str(ours.value)  # raised in a Ray task, and re-raised here as ours


def test_iter_torch_batches_are_torch_datasets_collate(spark: Any, tmp_path: Path) -> None:
    import torch

    path = str(tmp_path / "t")
    rows = [(i, i / 8, [i, -i, 2 * i], [i / 2, 1.5]) for i in range(64)]
    spark.createDataFrame(rows, "id long, w float, ints array<long>, x array<float>").coalesce(
        1
    ).write.format("tfrecord").save(path)
    loader = spark_tfrecord.torch_dataset(path)
    expected = loader.collate([loader[i] for i in range(len(loader))])
    ds = tfr_ray.read(path, override_num_blocks=1)
    (batch,) = list(ds.iter_torch_batches(batch_size=64))
    order = torch.argsort(batch["id"])
    assert set(batch) == set(expected)
    for key, tensor in expected.items():
        got = batch[key][order]
        assert got.dtype == tensor.dtype and got.shape == tensor.shape, key
        assert torch.equal(got, tensor), key


# --- write ------------------------------------------------------------------------------------


def _part(folder: Path) -> Path:
    (path,) = [p for p in folder.iterdir() if p.name.startswith("part-")]
    return path


def _ray_write(df: Any, path: Any, **options: Any) -> None:
    table = pa.Table.from_batches(arrow_batches(df), schema=None)
    ds = ray.data.from_arrow(table)
    tfr_ray.write(ds, path, schema=df.schema.jsonValue(), **options)


def _manifest(folder: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((folder / "_tfrecord_manifest.json").read_text())
    return found


@pytest.mark.parametrize(("schema", "rows", "options"), _cases())
def test_writes_the_jars_bytes(
    spark: Any, tmp_path: Path, schema: Any, rows: list[Any], options: dict[str, str]
) -> None:
    df = spark.createDataFrame(rows, schema)
    df.coalesce(1).write.format("tfrecord").options(**options).save(str(tmp_path / "jar"))
    names = {"recordType": "record_type", "pathSeparator": "path_separator"}
    _ray_write(df, tmp_path / "ray", **{names[k]: v for k, v in options.items()})
    jar, ours = _part(tmp_path / "jar"), _part(tmp_path / "ray")
    assert ours.read_bytes() == jar.read_bytes()
    assert PART.fullmatch(ours.name) and PART.fullmatch(jar.name)
    theirs, mine = _manifest(tmp_path / "jar"), _manifest(tmp_path / "ray")
    for key in ("record_type", "schema", "num_records", "num_bytes", "features"):
        assert mine[key] == theirs[key], key
    assert mine.get("feature_lists") == theirs.get("feature_lists")
    assert (tmp_path / "ray" / "_SUCCESS").is_file()


@pytest.mark.parametrize("layout", ["dense", "sparse"])
@pytest.mark.parametrize("record_type", ["Example", "SequenceExample"])
def test_vectors_are_the_jars_bytes(
    spark: Any, tmp_path: Path, layout: str, record_type: str
) -> None:
    """Spark ML vectors (their struct in Arrow, VectorUDT in the schema given), dense and
    sparse layouts."""
    df = _vectors(spark)
    options = {"vectorLayout": layout, "recordType": record_type}
    df.coalesce(1).write.format("tfrecord").options(**options).save(str(tmp_path / "jar"))
    _ray_write(df, tmp_path / "ray", vector_layout=layout, record_type=record_type)
    assert _part(tmp_path / "ray").read_bytes() == _part(tmp_path / "jar").read_bytes()
    assert _manifest(tmp_path / "ray")["features"] == _manifest(tmp_path / "jar")["features"]


@pytest.mark.parametrize("codec", ["gzip", "deflate"])
def test_compressed_files_are_the_jars(spark: Any, tmp_path: Path, codec: str) -> None:
    df = spark.createDataFrame(
        [(i, [i / 2] * (i % 4), f"s{i}") for i in range(300)], "id long, x array<float>, s string"
    )
    df.coalesce(1).write.format("tfrecord").option("compression", codec).save(str(tmp_path / "j"))
    _ray_write(df, tmp_path / "r", compression=codec)
    jar, ours = _part(tmp_path / "j"), _part(tmp_path / "r")
    assert ours.read_bytes() == jar.read_bytes()
    assert ours.name.endswith(".gz" if codec == "gzip" else ".deflate")
    assert PART.fullmatch(ours.name)


def test_the_readers_read_the_write_as_their_own(spark: Any, tf: Any, tmp_path: Path) -> None:
    """dataset_info (from the manifest), feature_spec, tf_dataset and the jar."""
    rows = [{"id": i, "x": [i / 2, -1.0], "label": f"l{i % 3}"} for i in range(90)]
    ds = ray.data.from_items(rows).repartition(3)
    path = tmp_path / "t"
    tfr_ray.write(ds, path, schema="id long, x array<float>, label string", num_shards=4)
    info = spark_tfrecord.dataset_info(path)
    assert info.source == "manifest" and info.num_records == 90 and len(info.files) == 4
    assert sorted(n for _, n, _ in info.files) == [0, 30, 30, 30]
    assert info.features == {"id": (1, 1), "x": (2, 2), "label": (1, 1)}
    spec = spark_tfrecord.feature_spec(path)
    assert spec["x"] == tf.io.FixedLenFeature([2], tf.float32)
    assert spec["id"] == tf.io.FixedLenFeature([], tf.int64)
    got = sorted(
        (int(r["id"]), r["x"].tolist(), r["label"].decode())
        for r in spark_tfrecord.tf_dataset(path).as_numpy_iterator()
    )
    assert got == [(r["id"], r["x"], r["label"]) for r in rows]
    jar = spark.read.format("tfrecord").load(str(path)).orderBy("id").collect()
    assert [(r.id, r.x, r.label) for r in jar] == [(r["id"], r["x"], r["label"]) for r in rows]


def test_append_and_overwrite_are_the_jars(tmp_path: Path) -> None:
    path = tmp_path / "t"
    first = ray.data.from_items([{"id": i, "x": [1.0]} for i in range(10)])
    second = ray.data.from_items([{"id": 10 + i, "x": [1.0, 2.0, 3.0]} for i in range(5)])
    tfr_ray.write(first, path)
    tfr_ray.write(second, path)  # append, the default
    info = spark_tfrecord.dataset_info(path)
    assert info.source == "manifest" and info.num_records == 15
    assert info.features["x"] == (1, 3)
    assert sorted(_ray_table(tfr_ray.read(path)).column("id").to_pylist()) == list(range(15))
    tfr_ray.write(second, path, mode="overwrite")
    info = spark_tfrecord.dataset_info(path)
    assert info.source == "manifest" and info.num_records == 5
    assert info.features["x"] == (3, 3)
    assert sorted(_ray_table(tfr_ray.read(path)).column("id").to_pylist()) == list(range(10, 15))
    assert not [p for p in path.iterdir() if p.name.startswith(".tfrecord-staging-")]


def test_min_rows_per_file_puts_blocks_together(tmp_path: Path) -> None:
    ds = ray.data.range(100, override_num_blocks=10).map_batches(
        lambda b: {"id": b["id"], "x": [[float(i)] for i in b["id"]]}
    )
    tfr_ray.write(ds, tmp_path / "one", min_rows_per_file=100)
    info = spark_tfrecord.dataset_info(tmp_path / "one")
    assert [n for _, n, _ in info.files] == [100]
    rows = _ray_table(tfr_ray.read(tmp_path / "one", "id long, x array<float>"))
    rows = rows.sort_by("id").to_pylist()
    assert rows == [{"id": i, "x": [float(i)]} for i in range(100)]


def test_blocks_of_two_schemas_fail_the_write(tmp_path: Path) -> None:
    """Without schema=, each task writes its blocks' schema; two of them cannot share a
    folder's manifest: the write fails, naming both, and leaves nothing."""
    ds = ray.data.from_arrow([pa.table({"x": [1, 2]}), pa.table({"x": ["a", "b"]})])
    with pytest.raises(ValueError, match="x BIGINT and x STRING"):
        tfr_ray.write(ds, tmp_path / "t")
    assert not (tmp_path / "t").exists()


def test_a_block_of_nulls_takes_the_other_blocks_type(tmp_path: Path) -> None:
    """A block whose column is all nulls has Arrow's null type: the write takes the type the
    other blocks give, and the rows read back."""
    ds = ray.data.from_arrow(
        [
            pa.table({"id": [1], "x": pa.array([[0.5, 1.5]], pa.list_(pa.float32()))}),
            pa.table({"id": [2], "x": pa.nulls(1)}),
        ]
    )
    tfr_ray.write(ds, tmp_path / "t")
    info = spark_tfrecord.dataset_info(tmp_path / "t")
    assert info.schema == "id BIGINT,x ARRAY<FLOAT>"
    rows = _ray_table(tfr_ray.read(tmp_path / "t", info.schema)).sort_by("id").to_pylist()
    assert rows == [{"id": 1, "x": [0.5, 1.5]}, {"id": 2, "x": None}]


def _listing(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_failed_write_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    """A null inside a list fails its task with the jar's error (on_write_failed): the earlier
    data and manifest stay, and no staging folder."""
    path = tmp_path / "t"
    tfr_ray.write(ray.data.from_items([{"id": 1, "x": [1.0]}]), path)
    before = _listing(path)
    bad = ray.data.from_items([{"id": 2, "x": [1.0]}, {"id": 3, "x": [None]}])
    with pytest.raises(EncodeError) as e:
        tfr_ray.write(bad, path, mode="overwrite")
    assert errors.condition(e.value) == errors.DATA_MISMATCH
    assert errors.parameters(e.value)["column"] == "x"
    assert _listing(path) == before
    assert sorted(os.listdir(path)) == sorted(before)


class KilledSink(tfr_ray.TFRecordDatasink):
    """A datasink whose task kills its worker process after it wrote half of its rows."""

    def write(self, blocks: Any, ctx: Any) -> Any:
        def halves() -> Iterator[Any]:
            for block in blocks:
                yield block.slice(0, block.num_rows // 2)
                staged = [p for p in Path(self.target.staging).iterdir()]
                assert staged  # a file begun, half of its rows given to it
                os._exit(1)

        return super().write(halves(), ctx)


def test_a_write_task_killed_mid_write_leaves_nothing_visible(tmp_path: Path) -> None:
    path = tmp_path / "t"
    tfr_ray.write(ray.data.from_items([{"id": 1, "x": [1.0]}]), path)
    before = _listing(path)
    ds = ray.data.from_arrow(pa.table({"id": list(range(100)), "x": [[0.5]] * 100}))
    with pytest.raises(Exception) as e:
        ds.write_datasink(KilledSink(path, mode="overwrite"), ray_remote_args={"max_retries": 0})
    assert "worker" in str(e.value).lower() or "died" in str(e.value).lower(), e.value
    assert _listing(path) == before
    assert sorted(os.listdir(path)) == sorted(before)  # no staging folder left either
    assert spark_tfrecord.dataset_info(path).num_records == 1


# --- S3 ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3]:
    with s3_bucket(tmp_path_factory.mktemp("s3") / "moto.log", BUCKET) as bucket:
        yield bucket


def test_an_s3_folder_read_and_written(spark: Any, s3: S3, tmp_path: Path) -> None:
    storage = {
        "endpoint_url": s3.endpoint,
        "key": ACCESS_KEY,
        "secret": SECRET_KEY,
        "client_kwargs": {"region_name": REGION},
    }
    rows = [{"id": i, "x": [i / 4], "s": f"s{i}"} for i in range(60)]
    ds = ray.data.from_items(rows).repartition(2)
    local = tmp_path / "local"
    tfr_ray.write(ds, local, compression="gzip")
    url = f"s3://{BUCKET}/written"
    tfr_ray.write(ds, url, compression="gzip", storage_options=storage)
    objects = s3.objects("written")
    assert {k for k in objects if not k.startswith("part-")} == {
        "_SUCCESS",
        "_tfrecord_manifest.json",
    }
    assert sorted(v for k, v in objects.items() if k.startswith("part-")) == sorted(
        p.read_bytes() for p in local.glob("part-*")
    )
    info = spark_tfrecord.dataset_info(url, storage_options=storage)
    assert info.source == "manifest" and info.num_records == 60
    back = tfr_ray.read(url, storage_options=storage)
    tasks = tfr_ray.TFRecordDatasource(url, storage_options=storage).get_read_tasks(1)
    assert sum(t.metadata.num_rows for t in tasks) == 60  # the manifest's, on S3
    assert back.count() == 60
    assert _rows(_ray_table(back)) == _rows(_ray_table(tfr_ray.read(local)))
    # a second write, appended: both counted in the manifest on S3
    tfr_ray.write(ds, url, compression="gzip", storage_options=storage)
    info = spark_tfrecord.dataset_info(url, storage_options=storage)
    assert info.source == "manifest" and info.num_records == 120
    assert not [k for k in s3.objects("written") if k.startswith((".", "_tfrecord_manifest.l"))]


# --- the package --------------------------------------------------------------------------------


def test_import_spark_tfrecord_imports_no_ray(tmp_path: Path) -> None:
    code = (
        "import sys, spark_tfrecord; "
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=child_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "[]"


def test_without_ray_it_says_what_to_install(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "try:\n"
        "    import spark_tfrecord.ray\n"
        "except ModuleNotFoundError as e:\n"
        "    print(e.name, '|', e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=child_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == (
        "ray | spark_tfrecord.ray needs Ray Data: pip install 'spark-tfrecord[ray]' (or "
        "'ray[data]')"
    )


def test_ray_and_the_local_jvm_in_one_process(tmp_path: Path) -> None:
    """ray.init() takes SIGSEGV's handler and ray.shutdown() puts the default back, over the
    one of the JVM that spark_tfrecord.local started: the JVM's next SIGSEGV of its own killed
    the process (a CI run's pytest, at its end). The next use of spark_tfrecord.local gives the
    JVM its handlers back, and the process ends well."""
    data = tmp_path / "three.tfrecord"
    write_records(data, [example()] * 3)
    code = (
        "import sys, ray\n"
        "from spark_tfrecord import local\n"
        "assert local.count_records(sys.argv[1]) == 3\n"
        "def handlers():\n"
        "    return {n: action[:8] for n, action in local._signal_actions().items()}\n"
        "jvms = handlers()\n"
        "ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)\n"
        "ray.shutdown()\n"
        "print(handlers() != jvms)\n"
        "assert local.count_records(sys.argv[1]) == 3\n"
        "print(handlers() == jvms)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(data)],
        env=child_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    taken, given_back = out.stdout.split()
    assert taken == "True", "Ray no longer takes the handlers: local._give_back_handlers may go"
    assert given_back == "True"


@pytest.mark.parametrize("module", ["datasource", "datasink", "spark_schema"])
def test_the_docstring_examples(spark: Any, module: str) -> None:
    import doctest
    import importlib

    found = doctest.testmod(
        importlib.import_module(f"spark_tfrecord.ray.{module}"),
        extraglobs={"spark": spark},
        optionflags=doctest.ELLIPSIS,
    )
    assert found.attempted > 0 and found.failed == 0
