"""spark_tfrecord.make_converter: a DataFrame written once under a cache folder named by its plan,
found again (with no Spark job) for an equal plan built separately, written anew for another,
never left half-written under its name; from a classic session and from a Connect client."""

from __future__ import annotations

import inspect
import json
import os
import pickle
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import spark_tfrecord
from spark_tfrecord._spark import converter as _converter
from support import child_env
from support.connect_server import Server
from test_connect import run_child

SCHEMA = "id long, x array<float>, s string, y long"


def rows(n: int) -> list[tuple[int, list[float], str, int]]:
    return [(i, [i / 4, -i / 2], f"r{i}", i % 3) for i in range(n)]


def source(spark: Any, folder: Path, n: int = 30) -> str:
    """A Parquet folder of `rows(n)`: reading it twice gives two equal plans built separately."""
    path = str(folder / "source")
    if not os.path.isdir(path):
        spark.createDataFrame(rows(n), SCHEMA).coalesce(2).write.parquet(path)
    return path


@contextmanager
def jobs(spark: Any) -> Iterator[list[int]]:
    """The ids of the Spark jobs that ran in the block (its own job group), once it ends."""
    sc = spark.sparkContext
    group = f"converter-{uuid.uuid4().hex}"
    sc.setJobGroup(group, "counted by test_converter")
    found: list[int] = []
    try:
        yield found
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        # The status tracker learns of jobs from the listener bus: let it catch up first.
        sc._jsc.sc().listenerBus().waitUntilEmpty()
        found.extend(sc.statusTracker().getJobIdsForGroup(group))


def folder_state(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Every file under ``folder``: (size, mtime in ns, inode), by relative path."""
    state = {}
    for f in sorted(folder.rglob("*")):
        if f.is_file():
            s = f.stat()
            state[f.relative_to(folder).as_posix()] = (s.st_size, s.st_mtime_ns, s.st_ino)
    return state


def entries(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir())


@pytest.mark.tensorflow
def test_len_and_values_equal_the_dataframes(spark: Any, tmp_path: Path, tf: Any) -> None:
    df = spark.createDataFrame(rows(23), SCHEMA).repartition(3)
    converter = spark_tfrecord.make_converter(df, str(tmp_path / "cache"), compression="gzip")
    assert len(converter) == 23
    assert Path(converter.path).parent == tmp_path / "cache"
    info = spark_tfrecord.dataset_info(converter.path)
    assert info.source == "manifest" and info.num_records == 23
    assert {f.compression for f in info.files} == {"gzip"}

    ds = converter.tf_dataset(label="y", batch_size=5)
    assert int(ds.cardinality()) == 5
    got = {}
    for features, label in ds:
        for i, x, s, y in zip(
            features["id"].numpy().tolist(),
            features["x"].numpy().tolist(),
            features["s"].numpy().tolist(),
            label.numpy().tolist(),
        ):
            got[i] = (x, s.decode(), y)
    # float32 values exact: i / 4 and -i / 2 are exact binary fractions.
    assert got == {i: (x, s, y) for i, x, s, y in rows(23)}


def test_an_equal_plan_built_separately_reuses_the_folder_and_runs_no_job(
    spark: Any, tmp_path: Path
) -> None:
    src = source(spark, tmp_path)
    cache = tmp_path / "cache"

    def built() -> Any:
        return spark.read.parquet(src).where("id % 3 != 0").selectExpr("id", "x", "y + 1 AS y")

    with jobs(spark) as first_jobs:
        first = spark_tfrecord.make_converter(built(), str(cache))
    assert first_jobs, "the first call writes: its jobs must be counted (the counting works)"
    assert len(first) == 20
    written = folder_state(cache)

    # Built outside the count: reading Parquet's schema is a job of its own.
    rebuilt = built()
    with jobs(spark) as second_jobs:
        second = spark_tfrecord.make_converter(rebuilt, str(cache))
    assert second_jobs == []
    assert second.path == first.path and len(second) == 20
    assert folder_state(cache) == written  # nothing written, renamed or touched

    # spark.range plans too, and the same DataFrame object.
    ranged = spark.range(7).selectExpr("id", "id * 2 AS y")
    a = spark_tfrecord.make_converter(ranged, str(cache))
    with jobs(spark) as range_jobs:
        b = spark_tfrecord.make_converter(
            spark.range(7).selectExpr("id", "id * 2 AS y"), str(cache)
        )
        c = spark_tfrecord.make_converter(ranged, str(cache))
    assert range_jobs == [] and a.path == b.path == c.path and len(a) == 7


def test_a_different_plan_gets_a_new_folder(spark: Any, tmp_path: Path) -> None:
    src = source(spark, tmp_path)
    cache = str(tmp_path / "cache")
    base = spark.read.parquet(src)
    variants = {
        "all": base,
        "other filter": base.where("id < 10"),
        "other filter value": base.where("id < 11"),
        "other columns": base.select("id", "s"),
        # Canonical plans erase aliases: the schema in the key keeps them apart.
        "renamed": base.selectExpr("id AS key", "x", "s", "y"),
        "other expression": base.selectExpr("id", "x", "s", "y * 2 AS y"),
    }
    converters = {name: spark_tfrecord.make_converter(df, cache) for name, df in variants.items()}
    converters["other options"] = spark_tfrecord.make_converter(base, cache, compression="gzip")
    paths = [c.path for c in converters.values()]
    assert len(set(paths)) == len(paths), paths
    assert {name: len(c) for name, c in converters.items()} == {
        "all": 30,
        "other filter": 10,
        "other filter value": 11,
        "other columns": 30,
        "renamed": 30,
        "other expression": 30,
        "other options": 30,
    }
    schemas = {name: spark_tfrecord.dataset_info(c.path).schema for name, c in converters.items()}
    assert schemas["renamed"].startswith("key BIGINT")
    assert schemas["other columns"] == "id BIGINT,s STRING"


def test_local_data_is_told_apart_and_the_same_dataframe_reused(spark: Any, tmp_path: Path) -> None:
    """Rows from createDataFrame live in an RDD that no plan text shows: two DataFrames of the
    same shape and other rows get two folders; the same DataFrame is found again."""
    cache = str(tmp_path / "cache")
    one = spark.createDataFrame(rows(5), SCHEMA)
    other = spark.createDataFrame(rows(6)[1:], SCHEMA)
    a = spark_tfrecord.make_converter(one, cache)
    b = spark_tfrecord.make_converter(other, cache)
    assert a.path != b.path
    ids = [
        sorted(r.id for r in spark_tfrecord.read(spark, c.path, schema=SCHEMA).collect())
        for c in (a, b)
    ]
    assert ids == [[0, 1, 2, 3, 4], [1, 2, 3, 4, 5]]
    with jobs(spark) as ran:
        again = spark_tfrecord.make_converter(one, cache)
        derived = spark_tfrecord.make_converter(one.where("id > 1"), cache)
    assert again.path == a.path
    assert len(ran) > 0 and len(derived) == 3  # only the derived one wrote
    with jobs(spark) as ran:
        derived_again = spark_tfrecord.make_converter(one.where("id > 1"), cache)
    assert ran == [] and derived_again.path == derived.path


def test_input_files_in_the_key(spark: Any, tmp_path: Path) -> None:
    """What df.inputFiles() in the key catches, and the caveat the docstring states: a file
    rewritten in place under the same name is not seen."""
    src = source(spark, tmp_path, n=10)
    cache = str(tmp_path / "cache")
    before = spark_tfrecord.make_converter(spark.read.parquet(src), cache)
    spark.createDataFrame(rows(12)[10:], SCHEMA).write.mode("append").parquet(src)
    appended = spark_tfrecord.make_converter(spark.read.parquet(src), cache)
    assert appended.path != before.path and (len(before), len(appended)) == (10, 12)

    # The same names, other contents: stale, as documented (delete() is the way out).
    files = sorted(Path(src).glob("part-*.parquet"))
    saved = {f: f.read_bytes() for f in files}
    for f in files[:-1]:
        f.write_bytes(saved[files[-1]])
    for crc in Path(src).glob(".*.crc"):  # Hadoop's checksums of the old contents
        crc.unlink()
    changed = spark.read.parquet(src)
    assert sorted(r.id for r in changed.collect()) != list(range(12))
    same_names = spark_tfrecord.make_converter(changed, cache)
    assert same_names.path == appended.path and len(same_names) == 12


def test_delete_removes_the_folder_and_the_next_call_writes_again(
    spark: Any, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    df = spark.range(9).selectExpr("id")
    converter = spark_tfrecord.make_converter(df, str(cache))
    assert os.path.isdir(converter.path)
    converter.delete()
    assert entries(cache) == []
    with jobs(spark) as ran:
        again = spark_tfrecord.make_converter(df, str(cache))
    assert ran and again.path == converter.path and len(again) == 9
    assert spark_tfrecord.dataset_info(again.path).source == "manifest"


def test_cache_dir_from_the_conf_key_and_the_error_without_it(spark: Any, tmp_path: Path) -> None:
    df = spark.range(4).selectExpr("id")
    assert spark.conf.get(spark_tfrecord.CACHE_DIR_CONF, None) is None
    with pytest.raises(ValueError, match=r"spark\.tfrecord\.converter\.cacheDir"):
        spark_tfrecord.make_converter(df)
    spark.conf.set("spark.tfrecord.converter.cacheDir", str(tmp_path / "from-conf"))
    try:
        converter = spark_tfrecord.make_converter(df)
    finally:
        spark.conf.unset("spark.tfrecord.converter.cacheDir")
    assert Path(converter.path).parent == tmp_path / "from-conf" and len(converter) == 4

    # A file: URL is the same folder; an object store is refused for now.
    by_url = spark_tfrecord.make_converter(df, (tmp_path / "from-conf").as_uri())
    assert by_url.path == converter.path
    with pytest.raises(ValueError, match="local path or a file: URL"):
        spark_tfrecord.make_converter(df, "s3a://bucket/cache")


def test_options_it_refuses(spark: Any, tmp_path: Path) -> None:
    df = spark.range(2).selectExpr("id", "id % 2 AS p")
    for options in ({"mode": "overwrite"}, {"partition_by": "p"}):
        with pytest.raises(TypeError, match="make_converter takes no"):
            spark_tfrecord.make_converter(df, str(tmp_path), **options)
    with pytest.raises(TypeError, match="unknown option 'compresion'"):  # write's own check
        spark_tfrecord.make_converter(df, str(tmp_path), compresion="gzip")
    assert [p.name for p in tmp_path.iterdir()] == []


def test_a_failed_write_leaves_nothing_under_the_final_name(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that dies after writing some files (a crash, a killed job) leaves no folder
    under the key's name, nor its temporary sibling; the next call writes the whole."""
    cache = tmp_path / "cache"
    real_write = _converter.write
    seen: list[str] = []

    def dying_write(df: Any, path: str, **options: Any) -> None:
        real_write(df, path, **options)
        seen.append(path)
        raise RuntimeError("the driver died")

    df = spark.range(6).selectExpr("id")
    monkeypatch.setattr(_converter, "write", dying_write)
    with pytest.raises(RuntimeError, match="the driver died"):
        spark_tfrecord.make_converter(df, str(cache))
    assert seen and Path(seen[0][len("file://") :]).parent == cache
    assert entries(cache) == []
    monkeypatch.setattr(_converter, "write", real_write)
    converter = spark_tfrecord.make_converter(df, str(cache))
    assert entries(cache) == [Path(converter.path).name] and len(converter) == 6


def test_two_converters_of_one_plan_at_once(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another converter of the same plan finishes while this one writes: this one's rename
    fails, it drops its own files and returns the other's folder, whole."""
    cache = tmp_path / "cache"
    real_write = _converter.write
    others: list[Any] = []

    def write_while_another_finishes(df: Any, path: str, **options: Any) -> None:
        if not others:
            others.append(None)
            others[0] = spark_tfrecord.make_converter(df, str(cache))  # writes, renames first
        real_write(df, path, **options)

    df = spark.range(11).selectExpr("id", "id * 3 AS y")
    monkeypatch.setattr(_converter, "write", write_while_another_finishes)
    mine = spark_tfrecord.make_converter(df, str(cache))
    assert mine.path == others[0].path and len(mine) == 11
    assert entries(cache) == [Path(mine.path).name]  # no temporary folder left
    assert spark_tfrecord.dataset_info(mine.path).source == "manifest"


def test_a_folder_changed_since_it_was_written_is_written_again(spark: Any, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    df = spark.range(5).selectExpr("id")
    converter = spark_tfrecord.make_converter(df, str(cache))
    (Path(converter.path) / "part-stray.tfrecord").write_bytes(b"")
    with pytest.warns(UserWarning, match="holds no valid manifest"):
        again = spark_tfrecord.make_converter(df, str(cache))
    assert again.path == converter.path and len(again) == 5
    assert spark_tfrecord.dataset_info(again.path).source == "manifest"
    assert entries(cache) == [Path(again.path).name]


def test_tf_dataset_takes_the_arguments_of_spark_tfrecord_tf_dataset() -> None:
    ours = inspect.signature(spark_tfrecord.Converter.tf_dataset).parameters
    theirs = inspect.signature(spark_tfrecord.tf_dataset).parameters
    assert [(p.name, p.kind, p.default) for p in list(ours.values())[1:]] == [
        (p.name, p.kind, p.default) for p in list(theirs.values())[1:]
    ]


@pytest.mark.tensorflow
def test_a_converter_pickles_to_a_trainer_without_spark(spark: Any, tmp_path: Path) -> None:
    converter = spark_tfrecord.make_converter(
        spark.range(10).selectExpr("id", "id % 2 AS y"), str(tmp_path / "cache")
    )
    code = (
        "import pickle, sys, json\n"
        f"c = pickle.loads(bytes.fromhex({pickle.dumps(converter).hex()!r}))\n"
        "ds = c.tf_dataset(label='y', batch_size=4)\n"
        "ys = sorted(int(v) for _, y in ds for v in y.numpy())\n"
        "heavy = sorted(m for m in ('pyspark', 'py4j') if m in sys.modules)\n"
        "print(json.dumps([c.path, len(c), int(ds.cardinality()), ys, heavy]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), check=True
    )
    path, length, cardinality, ys, heavy = json.loads(done.stdout.splitlines()[-1])
    assert (path, length, cardinality) == (converter.path, 10, 3)
    assert ys == [0] * 5 + [1] * 5 and heavy == []


def test_from_a_connect_client(server: Server, spark: Any, tmp_path: Path) -> None:
    """The converter from a Connect client: the cache folder from the session's conf, its
    records, an equal plan built separately found again with no file written, another plan
    and other local rows in new folders."""
    out = tmp_path / "connect"
    result = run_child("converter_client", [server.url, str(out)])
    cache = out / "cache"
    first, again, other, local, local_again, local_other = (
        result[k] for k in ("first", "again", "other", "local", "local_again", "local_other")
    )
    assert Path(first["path"]).parent == cache
    assert first["len"] == 20 and again["len"] == 20 and other["len"] == 8
    assert again["path"] == first["path"]
    assert result["state_before"] == result["state_after"]  # the reuse wrote nothing
    assert other["path"] != first["path"]
    assert local_again["path"] == local["path"] != local_other["path"]
    assert (local["len"], local_other["len"]) == (3, 3)
    assert result["no_conf"] == ["ValueError", True]
    # What the client's converter wrote is what Spark reads back, from its manifest.
    info = spark_tfrecord.dataset_info(first["path"])
    assert info.source == "manifest" and info.num_records == 20
    back = spark_tfrecord.read(spark, first["path"], schema="id long, x array<float>")
    assert sorted((r.id, r.x) for r in back.collect()) == [
        (i, [i / 2, 0.5]) for i in range(40) if i % 2 == 0
    ]
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        {Path(r["path"]).name for r in (first, other, local, local_other)}
    )
