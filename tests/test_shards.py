"""Balanced, shuffled shards on write: ``num_shards`` and ``shuffle_seed`` of
``spark_tfrecord.write`` and ``write_tfds`` (spark_tfrecord/_shards.py).

Files are read back here without Spark (the framing and both CRCs by `support.tfrecord_bytes`,
the Example by the pure-Python oracle), so what a test sees is what is on disk. The inputs are
skewed: one partition holds 900 of the 1000 rows, five others 20 each.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

import spark_tfrecord
from spark_tfrecord._spark.shards import _murmur3_int, routing_keys
from support.connect_server import Server
from support.shards_client import ROWS, skewed
from support.tfrecord_bytes import read_records
from support.tfrecord_oracle import Column, decode
from test_connect import run_child

COLUMNS = [Column("id", "long", "scalar"), Column("text", "binary", "scalar")]
COLUMNS += [Column("x", "float", "array")]


def expected(i: int) -> dict[str, Any]:
    return {"id": i, "text": f"row-{i}".encode(), "x": [i / 2]}


def data_files(folder: Path) -> list[Path]:
    """The data files of a write, by name (the manifest's rule: not starting with _ or .)."""
    return sorted(p for p in folder.iterdir() if not p.name.startswith(("_", ".")))


def rows_of(files: list[Path]) -> list[list[dict[str, Any]]]:
    return [[decode(r, COLUMNS, False) for r in read_records(f)] for f in files]


def test_python_murmur3_is_sparks_hash(spark: Any) -> None:
    from pyspark.sql import functions as F

    ints = spark.range(-3000, 3000).select(F.col("id").cast("int").alias("k"))
    pairs = ints.select("k", F.hash("k").alias("h")).collect()
    assert [(r.k, _murmur3_int(r.k)) for r in pairs] == [(r.k, r.h) for r in pairs]
    edges = spark.createDataFrame([(-(2**31),), (2**31 - 1,), (-1,)], "k int")
    edge_rows = edges.select("k", F.hash("k").alias("h")).collect()
    assert [_murmur3_int(r.k) for r in edge_rows] == [r.h for r in edge_rows]


@pytest.mark.parametrize("n", [1, 2, 7, 64, 1000])
def test_each_routing_key_lands_in_its_partition(spark: Any, n: int) -> None:
    """repartition(n, key) sends routing_keys(n)[s] to partition s, with AQE on (both Spark
    lines' default) and rows so few that AQE would coalesce a shuffle it is allowed to."""
    from pyspark.sql import functions as F

    assert spark.conf.get("spark.sql.adaptive.enabled") == "true"
    keys = routing_keys(n)
    assert len(keys) == n and len(set(keys)) == n and min(keys) >= 0
    df = spark.createDataFrame([(s, k) for s, k in enumerate(keys)], "shard int, key int")
    placed = df.repartition(n, "key").select("shard", F.spark_partition_id().alias("p"))
    assert sorted((r.shard, r.p) for r in placed.collect()) == [(s, s) for s in range(n)]


def test_routing_keys_match_spark_hash(spark: Any) -> None:
    n = 97
    df = spark.createDataFrame([(k,) for k in routing_keys(n)], "k int")
    got = df.selectExpr(f"pmod(hash(k), {n}) as s").collect()
    assert [r.s for r in got] == list(range(n))


def check_names(files: list[Path], prefix: str | None, n: int) -> None:
    """TensorFlow's names with a prefix; Spark's ``part-NNNNN-<job>...tfrecord`` without, the
    shards of no record added at commit numbered after the others."""
    if prefix is not None:
        assert [f.name for f in files] == [f"{prefix}-{i:05d}-of-{n:05d}" for i in range(n)]
    else:
        assert len(files) == n
        assert all(f.name.startswith(f"part-{i:05d}-") for i, f in enumerate(files)), files
        assert all(f.name.endswith(".tfrecord") for f in files), files


def manifest_counts(folder: Path) -> dict[str, int]:
    manifest = json.loads((folder / "_tfrecord_manifest.json").read_text())
    return {f["path"]: f["num_records"] for f in manifest["files"]}


@pytest.mark.parametrize("prefix", ["train", None])
@pytest.mark.parametrize("seed", [None, 42])
@pytest.mark.parametrize("n", [3, 11])
def test_shards_are_balanced_and_hold_every_row_once(
    spark: Any, tmp_path: Path, n: int, seed: int | None, prefix: str | None
) -> None:
    """3 shards from 6 skewed partitions and 11 from them: counts within one, every row's
    values exactly once. Without a seed, row i (input order) is in shard i % n, in order."""
    out = tmp_path / "out"
    spark_tfrecord.write(skewed(spark), str(out), shard_prefix=prefix, num_shards=n,
                         shuffle_seed=seed)  # fmt: skip
    files = data_files(out)
    check_names(files, prefix, n)
    shards = rows_of(files)
    sizes = [len(s) for s in shards]
    assert manifest_counts(out) == {f.name: size for f, size in zip(files, sizes)}
    assert sum(sizes) == ROWS and max(sizes) - min(sizes) <= 1, sizes
    # The larger shards come first: row i goes to shard i % n.
    assert sizes == [ROWS // n + (1 if s < ROWS % n else 0) for s in range(n)]
    every = sorted((r for s in shards for r in s), key=lambda r: r["id"])
    assert every == [expected(i) for i in range(ROWS)]
    if seed is None:
        assert shards == [[expected(i) for i in range(s, ROWS, n)] for s in range(n)]
    else:
        ids = [r["id"] for r in shards[0]]
        assert ids != sorted(ids)  # shuffled within the file too
        assert {r["id"] % n for r in shards[0]} != {0}  # not the unshuffled deal


@pytest.mark.parametrize("prefix", ["s", None])
def test_fewer_rows_than_shards(spark: Any, tmp_path: Path, prefix: str | None) -> None:
    """4 rows into 7 shards: one each in shards 0..3, then 3 files of no record."""
    df = skewed(spark).where("id in (5, 905, 950, 999)")
    for seed in (None, 3):
        out = tmp_path / f"seed-{seed}"
        spark_tfrecord.write(df, str(out), shard_prefix=prefix, num_shards=7, shuffle_seed=seed)
        files = data_files(out)
        check_names(files, prefix, 7)
        shards = rows_of(files)
        assert [len(s) for s in shards] == [1, 1, 1, 1, 0, 0, 0]
        got = sorted(r["id"] for s in shards for r in s)
        assert got == [5, 905, 950, 999]
        if seed is None:
            assert [s[0]["id"] for s in shards[:4]] == [5, 905, 950, 999]


@pytest.mark.parametrize("prefix", ["t", None])
def test_the_same_seed_gives_the_same_bytes_from_any_partitioning(
    spark: Any, tmp_path: Path, prefix: str | None
) -> None:
    """Shard i's bytes from 3, 1 and 7 partitions, and from rows sorted otherwise, are equal;
    another seed gives the same rows in other files and another order."""
    base = skewed(spark)
    inputs = {"repartition3": base.repartition(3), "coalesce1": base.coalesce(1)}
    inputs["repartition7"] = base.repartition(7)
    inputs["shuffled_order"] = base.orderBy((base.id * 7919) % 1000)
    written = {}
    for name, df in inputs.items():
        out = tmp_path / name
        spark_tfrecord.write(df, str(out), shard_prefix=prefix, num_shards=4, shuffle_seed=2024)
        written[name] = [f.read_bytes() for f in data_files(out)]
    first = written["repartition3"]
    assert len(first) == 4 and all(first)
    for name, files in written.items():
        assert files == first, name
    other = tmp_path / "other_seed"
    spark_tfrecord.write(base, str(other), shard_prefix=prefix, num_shards=4, shuffle_seed=2025)
    other_files = data_files(other)
    assert [f.read_bytes() for f in other_files] != first
    # The same rows, in another order and spread otherwise.
    same = rows_of(data_files(tmp_path / "coalesce1"))
    again = rows_of(other_files)
    ids = sorted(r["id"] for s in again for r in s)
    assert ids == sorted(r["id"] for s in same for r in s) == list(range(ROWS))
    assert [[r["id"] for r in s] for s in again] != [[r["id"] for r in s] for s in same]


def test_write_tfds_balances_and_shuffles(spark: Any, tmp_path: Path) -> None:
    folder = spark_tfrecord.write_tfds(
        skewed(spark), str(tmp_path), "balanced", "train", num_shards=6, shuffle_seed=1
    )
    info = json.loads((Path(folder) / "dataset_info.json").read_text())
    lengths = [int(n) for n in info["splits"][0]["shardLengths"]]
    assert lengths == [167, 167, 167, 167, 166, 166]
    files = sorted(Path(folder).glob("balanced-train.tfrecord-*-of-00006"))
    shards = rows_of(files)
    assert [len(s) for s in shards] == lengths
    assert sorted((r for s in shards for r in s), key=lambda r: r["id"]) == [
        expected(i) for i in range(ROWS)
    ]
    again = spark_tfrecord.write_tfds(
        skewed(spark).repartition(5), str(tmp_path / "again"), "balanced", "train",
        num_shards=6, shuffle_seed=1,
    )  # fmt: skip
    again_files = sorted(Path(again).glob("balanced-train.tfrecord-*-of-00006"))
    assert [f.read_bytes() for f in again_files] == [f.read_bytes() for f in files]


def test_a_tfx_split_is_balanced_and_shuffled(spark: Any, tmp_path: Path) -> None:
    """A TFX split's GZIP files, from two partitionings: counts within one, every row once, and
    the same records for the same seed (compared decompressed: gzip's header is not ours)."""
    shards = []
    for name, df in (("a", skewed(spark)), ("b", skewed(spark).repartition(4))):
        out = tmp_path / name
        spark_tfrecord.write(df, str(out), tfx_split="train", num_shards=3, shuffle_seed=4)
        files = sorted((out / "Split-train").iterdir())
        assert [f.name for f in files] == [f"data_tfrecord-{i:05d}-of-00003.gz" for i in range(3)]
        plain = []
        for f in files:
            raw = tmp_path / f"{name}-{f.stem}"
            raw.write_bytes(gzip.decompress(f.read_bytes()))
            plain.append(raw)
        shards.append(rows_of(plain))
    assert [len(s) for s in shards[0]] == [334, 333, 333]
    every = sorted((r for s in shards[0] for r in s), key=lambda r: r["id"])
    assert every == [expected(i) for i in range(ROWS)]
    assert shards[1] == shards[0]


def jobs_of(spark: Any, group: str, write: Any) -> int:
    """How many Spark jobs ``write()`` runs (its counting jobs, its stages, the write's)."""
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    try:
        write()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
    return len(sc.statusTracker().getJobIdsForGroup(group))


@pytest.mark.parametrize("seed", [None, 7])
def test_the_data_source_options_arrange_as_write_does(
    spark: Any, tmp_path: Path, seed: int | None
) -> None:
    """``numShards`` and ``shuffleSeed`` as options of the format, arranged by the session
    extensions' rule (which ``configure`` installs), give the bytes of ``spark_tfrecord.write``
    with ``num_shards`` and ``shuffle_seed``; and ``write``, which arranges the rows itself and
    then sets ``numShards``, is not arranged a second time: it runs as many jobs as the
    options' write, which the rule arranges once (a second arrangement adds a counting job and
    a shuffle)."""
    df = skewed(spark).repartition(4)
    helper, options = tmp_path / "helper", tmp_path / "options"
    tag = f"shards-{seed}-{tmp_path.name}"

    def by_helper() -> None:
        spark_tfrecord.write(df, str(helper), num_shards=3, shuffle_seed=seed)

    def by_options() -> None:
        writer = df.write.format("tfrecord").option("numShards", 3)
        if seed is not None:
            writer = writer.option("shuffleSeed", seed)
        writer.save(str(options))

    helper_jobs = jobs_of(spark, tag + "-helper", by_helper)
    options_jobs = jobs_of(spark, tag + "-options", by_options)
    files = data_files(options)
    assert [f.read_bytes() for f in files] == [f.read_bytes() for f in data_files(helper)]
    assert [len(s) for s in rows_of(files)] == [334, 333, 333]
    assert sorted((r for s in rows_of(files) for r in s), key=lambda r: r["id"]) == [
        expected(i) for i in range(ROWS)
    ]
    assert helper_jobs == options_jobs > 0
    if seed is not None:
        # The options as keywords of write: the rule arranges them as well.
        keyword = tmp_path / "keyword"
        spark_tfrecord.write(df, str(keyword), numShards=3, shuffleSeed=seed)
        assert [f.read_bytes() for f in data_files(keyword)] == [f.read_bytes() for f in files]


def test_what_is_refused(spark: Any, tmp_path: Path) -> None:
    df = skewed(spark)
    out = str(tmp_path / "x")
    with pytest.raises(ValueError, match="give num_shards too"):
        spark_tfrecord.write(df, out, shard_prefix="t", shuffle_seed=1)
    with pytest.raises(ValueError, match="give num_shards too"):
        spark_tfrecord.write_tfds(df, out, "d", "train", shuffle_seed=1)
    with pytest.raises(ValueError, match="not with partition_by"):
        spark_tfrecord.write(df, out, num_shards=2, partition_by="text")
    with pytest.raises(ValueError, match="from 1 to 99999, not 0"):
        spark_tfrecord.write(df, out, shard_prefix="t", num_shards=0)
    with pytest.raises(TypeError, match="num_shards must be an int, not bool"):
        spark_tfrecord.write(df, out, shard_prefix="t", num_shards=True)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="shuffle_seed must be an int, not str"):
        spark_tfrecord.write(df, out, shard_prefix="t", num_shards=2, shuffle_seed="1")  # type: ignore[arg-type]
    assert not (tmp_path / "x").exists()


def test_a_map_column_is_refused_by_the_format_not_by_a_hash(spark: Any, tmp_path: Path) -> None:
    """Spark's hashes refuse maps with their own error; the rows are left as they are for the
    format's planning to refuse the column by name, as a write without num_shards does."""
    df = spark.createDataFrame([(1, {"a": 1})], "id long, props map<string, bigint>")
    for seed in (None, 1):
        with pytest.raises(Exception, match="Column 'props' has type") as refused:
            spark_tfrecord.write(df, str(tmp_path / "m"), num_shards=2, shuffle_seed=seed)
        assert "hash" not in str(refused.value).splitlines()[0].lower()
    assert not (tmp_path / "m").exists()


def test_from_a_connect_client(server: Server, spark: Any, tmp_path: Path) -> None:
    """A Connect client writes 4 shuffled shards from three partitionings (one without a shard
    prefix) and a TFDS split: the same bytes as this (classic) session writes from a fourth,
    and balanced."""
    out = tmp_path / "connect"
    result = run_child("shards_client", [server.url, str(out)])
    classic = tmp_path / "classic"
    spark_tfrecord.write(skewed(spark).repartition(7), str(classic), shard_prefix="t",
                         num_shards=4, shuffle_seed=99)  # fmt: skip
    expected_bytes = [f.read_bytes() for f in data_files(classic)]
    for name in ("coalesce1", "repartition3", "plain"):
        assert [f.read_bytes() for f in data_files(out / name)] == expected_bytes, name
    shards = rows_of(data_files(out / "coalesce1"))
    assert [len(s) for s in shards] == [250, 250, 250, 250]
    assert result["tfds_lengths"] == [334, 333, 333]
    tfds_files = sorted(Path(result["tfds_folder"]).glob("c-train.tfrecord-*-of-00003"))
    tfds_rows = [r for s in rows_of(tfds_files) for r in s]
    assert sorted(tfds_rows, key=lambda r: r["id"]) == [expected(i) for i in range(ROWS)]
