"""spark_tfrecord.grain_source, a random-access source for Grain (JAX's loader) over a folder
Spark wrote: MapDataset with a shuffle, DataLoader with IndexSampler shards, in the loader's
process and in two workers, and src.collate as the batch function."""

from __future__ import annotations

import json
import pickle
import subprocess
from collections import Counter
from typing import Any

import grain
import numpy as np
import pytest

import spark_tfrecord
from support import child_env, module_command
from support.decoded import assert_same, expected, file_order_ids, record_id

#: Even: grain 0.2's DataLoader reads len(sampler) // shard_count records of each shard
#: (data_loader.py), so with an odd number shard 0's last record would never be read.
N = 96
SCHEMA = "id long not null, fx array<float>, var array<long>, name string not null, tag string"


def row(i: int) -> tuple[Any, ...]:
    return (
        i,
        [i / 2, -i / 4],
        None if i % 7 == 0 else list(range(i, i + i % 4)),
        f"name {i}",
        None if i % 3 == 0 else f"tag {i}",
    )


class Folder:
    def __init__(self, spark: Any, path: str) -> None:
        self.path = path
        self.schema = spark.createDataFrame([], SCHEMA).schema
        self.order = file_order_ids(spark, path)

    def want(self, row_id: int) -> dict[str, Any]:
        return expected(self.schema, row(row_id))


@pytest.fixture(scope="module")
def folder(spark, tmp_path_factory) -> Folder:
    path = str(tmp_path_factory.mktemp("grain") / "data")
    df = spark.createDataFrame([row(i) for i in range(N)], SCHEMA).repartition(3)
    spark_tfrecord.write(df, path, write_index=True)
    return Folder(spark, path)


def checked_ids(records: Any, folder: Folder) -> list[int]:
    """The ids of `records` (an iterable of record dicts), each record's values checked."""
    ids = []
    for record in records:
        ids.append(record_id(record))
        assert_same(record, folder.want(ids[-1]), f"id {ids[-1]}")
    return ids


def test_len_getitem_and_pickle(folder: Folder) -> None:
    src = spark_tfrecord.grain_source(folder.path)
    assert len(src) == N == spark_tfrecord.dataset_info(folder.path).num_records
    assert checked_ids((src[i] for i in range(N)), folder) == folder.order
    again = pickle.loads(pickle.dumps(src))
    assert len(again) == N
    assert checked_ids((again[i] for i in range(N)), folder) == folder.order
    # A file: URL is the local folder.
    url = spark_tfrecord.grain_source("file://" + folder.path)
    assert checked_ids((url[i] for i in range(N)), folder) == folder.order


def test_map_dataset_with_a_shuffle_gives_every_record_once(folder: Folder) -> None:
    src = spark_tfrecord.grain_source(folder.path)
    dataset = grain.MapDataset.source(src)
    assert len(dataset) == N
    first = checked_ids(dataset.shuffle(seed=11), folder)
    second = checked_ids(dataset.shuffle(seed=12), folder)
    assert sorted(first) == sorted(second) == list(range(N))
    assert first != folder.order and first != second
    assert checked_ids(dataset.shuffle(seed=11), folder) == first  # the seed decides


def shard_ids(folder: Folder, index: int, count: int, workers: int, seed: int) -> list[int]:
    src = spark_tfrecord.grain_source(folder.path)
    sampler = grain.samplers.IndexSampler(
        len(src),
        shard_options=grain.sharding.ShardOptions(index, count, drop_remainder=False),
        shuffle=True,
        seed=seed,
        num_epochs=1,
    )
    loader = grain.DataLoader(data_source=src, sampler=sampler, worker_count=workers)
    return checked_ids(loader, folder)


@pytest.mark.parametrize("workers", [0, 2])
def test_data_loader_shards_are_disjoint_and_complete(folder: Folder, workers: int) -> None:
    shards = [shard_ids(folder, i, 2, workers, seed=5) for i in range(2)]
    assert [len(s) for s in shards] == [N // 2, N // 2]
    counts = Counter(i for s in shards for i in s)
    assert set(counts) == set(range(N)) and max(counts.values()) == 1
    assert shards[0] + shards[1] != folder.order  # shuffled
    if workers:
        # Two workers read the same records as the loader's own process.
        assert [sorted(s) for s in shards] == [
            sorted(shard_ids(folder, i, 2, 0, seed=5)) for i in range(2)
        ]


def check_batch(batch: dict[str, Any], folder: Folder) -> list[int]:
    """A batch of src.collate (numpy): stacked where fixed, values and offsets where not."""
    ids = batch["id"]
    assert isinstance(ids, np.ndarray) and ids.dtype == np.int64 and ids.ndim == 1
    wants = [folder.want(i) for i in ids.tolist()]
    n = len(wants)
    fx = batch["fx"]
    assert isinstance(fx, np.ndarray) and fx.dtype == np.float32 and fx.shape == (n, 2)
    assert fx.tobytes() == np.stack([w["fx"] for w in wants]).tobytes()
    values, offsets = batch["var"]
    assert values.dtype == np.int64 and offsets.dtype == np.int64 and offsets.shape == (n + 1,)
    assert offsets[0] == 0 and offsets[-1] == len(values)
    for j, w in enumerate(wants):
        got = values[offsets[j] : offsets[j + 1]].tolist()
        assert got == ([] if w["var"] is None else w["var"].tolist())
    assert batch["name"] == [w["name"] for w in wants]
    tags, tag_offsets = batch["tag"]
    tag_offsets = np.asarray(tag_offsets).tolist()
    assert len(tag_offsets) == n + 1
    for j, w in enumerate(wants):
        assert tags[tag_offsets[j] : tag_offsets[j + 1]] == ([] if w["tag"] is None else [w["tag"]])
    return ids.tolist()


def test_collate_as_grains_batch_function(folder: Folder) -> None:
    src = spark_tfrecord.grain_source(folder.path)
    sampler = grain.samplers.IndexSampler(
        len(src), shuffle=True, seed=3, num_epochs=1, shard_options=grain.sharding.NoSharding()
    )
    loader = grain.DataLoader(
        data_source=src,
        sampler=sampler,
        operations=[grain.transforms.Batch(batch_size=10, batch_fn=src.collate)],
        worker_count=0,
    )
    batches = list(loader)
    assert [len(b["id"]) for b in batches] == [10] * (N // 10) + [N % 10]
    ids = [i for b in batches for i in check_batch(b, folder)]
    assert sorted(ids) == list(range(N))
    # And on a MapDataset.
    mapped = grain.MapDataset.source(src).batch(32, batch_fn=src.collate)
    assert [i for b in mapped for i in check_batch(b, folder)] == folder.order


def test_a_trainer_reads_without_pyspark_py4j_or_tensorflow(folder: Folder) -> None:
    code = (
        "import spark_tfrecord\n"
        f"src = spark_tfrecord.grain_source({folder.path!r})\n"
        "result = [int(src[i]['id']) for i in range(len(src))]\n"
    )
    done = subprocess.run(
        module_command("trainer_side", code),
        capture_output=True,
        text=True,
        env=child_env(),
        check=True,
    )
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer == {"result": folder.order, "heavy": []}
