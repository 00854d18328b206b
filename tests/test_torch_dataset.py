"""spark_tfrecord.torch_dataset, a map-style torch Dataset over a folder Spark wrote: len(), the
records in the manifest's file order, DataLoader workers (fork and spawn) with a global shuffle,
DistributedSampler's ranks, the collate's tensors, files without an index, GZIP files, a
corrupt file under workers, make_converter's dataset, and a trainer that has no Spark."""

from __future__ import annotations

import gzip
import pickle
import shutil
import zlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, DistributedSampler

import spark_tfrecord
from spark_tfrecord import errors
from support import trainer_side
from support.decoded import assert_same, expected, file_order_ids, record_id
from support.tfrecord_bytes import index_lines

#: A DataLoader's wait for one batch from a worker: a hang's bound, far above a batch's time.
TIMEOUT = 120
N = 121  # not a multiple of 2 or 3: DistributedSampler pads, or drops with drop_last
SIZE = 6  # of the sparse vectors


def schema() -> Any:
    from pyspark.ml.linalg import VectorUDT
    from pyspark.sql import types as T

    return T.StructType(
        [
            T.StructField("id", T.LongType(), nullable=False),
            T.StructField("fx", T.ArrayType(T.FloatType())),  # always 3 values
            T.StructField("var", T.ArrayType(T.LongType())),  # 0 to 4 values, or null
            T.StructField("ns", T.LongType()),  # sometimes null
            T.StructField("rg", T.ArrayType(T.ArrayType(T.LongType()))),
            T.StructField("name", T.StringType(), nullable=False),
            T.StructField("tag", T.StringType()),  # sometimes null
            # Written sparse; its size in the ML metadata, as HashingTF and OneHotEncoder set it.
            T.StructField("sv", VectorUDT(), metadata={"ml_attr": {"num_attrs": SIZE}}),
            T.StructField("ok", T.BooleanType(), nullable=False),
            T.StructField("blobs", T.ArrayType(T.BinaryType())),  # 0 to 2 values, or null
            T.StructField("r3", T.ArrayType(T.ArrayType(T.ArrayType(T.FloatType())))),
        ]
    )


def row(i: int) -> tuple[Any, ...]:
    from pyspark.ml.linalg import SparseVector

    return (
        i,
        [i / 2, -i / 4, float(i % 3)],
        None if i % 11 == 0 else [i * 10 + j for j in range(i % 5)],
        None if i % 4 == 0 else -i,
        None if i % 6 == 0 else [[i] * (j % 3) for j in range(i % 4)],
        f"name {i}",
        None if i % 3 == 0 else f"tag {i}",
        None if i % 5 == 0 else SparseVector(SIZE, [i % SIZE], [i / 8]),
        i % 2 == 0,
        None if i % 9 == 0 else [bytes([i, 0xFF])] * (i % 3),
        None if i % 8 == 0 else [[[i / 2] * (k % 2) for k in range(j)] for j in range(i % 3)],
    )


class Folder:
    """A written folder and what its records must be."""

    def __init__(self, spark: Any, df: Any, path: str, rows: dict[int, tuple[Any, ...]]) -> None:
        self.df, self.path, self.rows = df, path, rows
        self.schema = df.schema
        self.order = file_order_ids(spark, path)

    def want(self, row_id: int) -> dict[str, Any]:
        return expected(self.schema, self.rows[row_id], sparse_vectors=True)


@pytest.fixture(scope="module")
def folder(spark, tmp_path_factory) -> Folder:
    rows = [row(i) for i in range(N)]
    df = spark.createDataFrame(rows, schema()).repartition(3)
    path = str(tmp_path_factory.mktemp("torch") / "data")
    spark_tfrecord.write(df, path, write_index=True, vector_layout="sparse")
    return Folder(spark, df, path, {r[0]: r for r in rows})


def test_len_and_records_in_file_order(folder: Folder) -> None:
    ds = spark_tfrecord.torch_dataset(folder.path)
    assert isinstance(ds, torch.utils.data.Dataset)
    assert len(ds) == N == spark_tfrecord.dataset_info(folder.path).num_records
    assert sorted(folder.order) == list(range(N))
    for i, row_id in enumerate(folder.order):
        assert_same(ds[i], folder.want(row_id), f"record {i} (id {row_id})")
    # A batch at once, in the order asked, repeats included; the same as the grain source.
    # (A sequence of the records: the implementation gives a lazy one, which collate decodes
    # at once; the contract says a list.)
    picked = [5, 0, 5, N - 1]
    batch = ds.__getitems__(picked)
    assert isinstance(batch, Sequence) and len(batch) == 4
    for got, i in zip(batch, picked):
        assert_same(got, folder.want(folder.order[i]), f"__getitems__ {i}")
    source = spark_tfrecord.grain_source(folder.path)
    for i in range(0, N, 7):
        assert_same(ds[i], source[i], f"record {i}: torch_dataset and grain_source")


def _double_id(record: dict[str, Any]) -> tuple[int, float]:
    """A transform (module level, so that spawned workers find it)."""
    return int(record["id"]) * 2, float(record["fx"].sum())


def test_transform_and_pickling(folder: Folder) -> None:
    ds = spark_tfrecord.torch_dataset(folder.path, columns=["id", "fx"], transform=_double_id)
    again = pickle.loads(pickle.dumps(ds))
    assert len(again) == N
    for i in range(N):
        row_id = folder.order[i]
        assert ds[i] == again[i] == (row_id * 2, float(folder.want(row_id)["fx"].sum()))


# --- the collate --------------------------------------------------------------------------


def _ints(t: Any, where: str) -> list[int]:
    assert isinstance(t, torch.Tensor) and t.dtype == torch.int64, f"{where}: {t!r}"
    assert t.dim() == 1, f"{where}: {t.shape}"
    return t.tolist()


def _split(values: list[Any], offsets: list[int], n: int, where: str) -> list[list[Any]]:
    assert len(offsets) == n + 1 and offsets[0] == 0 and offsets[-1] == len(values), where
    assert offsets == sorted(offsets), where
    return [values[offsets[j] : offsets[j + 1]] for j in range(n)]


def check_batch(batch: dict[str, Any], wants: list[dict[str, Any]]) -> list[int]:
    """`batch` is ds.collate of records whose expected values are `wants`; returns the ids."""
    n = len(wants)
    assert sorted(batch) == [
        "blobs", "fx", "id", "name", "ns", "ok", "r3", "rg", "sv", "tag", "var"
    ]  # fmt: skip
    # Fixed: stacked tensors.
    ids = _ints(batch["id"], "id")
    assert ids == [int(w["id"]) for w in wants]
    assert _ints(batch["ok"], "ok") == [int(w["ok"]) for w in wants]
    fx = batch["fx"]
    assert isinstance(fx, torch.Tensor) and fx.dtype == torch.float32 and fx.shape == (n, 3)
    assert fx.numpy().tobytes() == np.stack([w["fx"] for w in wants]).tobytes()
    # Variable or nullable: values and offsets; a null is no values.
    for column in ("var", "ns"):
        values, offsets = batch[column]
        got = _split(_ints(values, column), _ints(offsets, column), n, column)
        want = [[] if w[column] is None else np.atleast_1d(w[column]).tolist() for w in wants]
        assert got == want, column
    # Lists of lists: values, then one offsets tensor per level, outermost first: record j's
    # inner lists are outer[j]..outer[j+1], inner list q's values inner[q]..inner[q+1].
    values, outer_t, inner_t = batch["rg"]
    flat, outer, inner = _ints(values, "rg"), _ints(outer_t, "rg"), _ints(inner_t, "rg")
    assert len(outer) == n + 1 and outer[0] == 0 and outer[-1] == len(inner) - 1, (outer, inner)
    assert inner[0] == 0 and inner[-1] == len(flat), (inner, flat)
    got_rg = [
        [flat[inner[q] : inner[q + 1]] for q in range(outer[j], outer[j + 1])] for j in range(n)
    ]
    assert got_rg == [[] if w["rg"] is None else _nested(w["rg"]) for w in wants]
    values, outer_t, middle_t, inner_t = batch["r3"]
    assert isinstance(values, torch.Tensor) and values.dtype == torch.float32
    outer, middle, inner = _ints(outer_t, "r3"), _ints(middle_t, "r3"), _ints(inner_t, "r3")
    assert (len(outer), outer[-1], middle[-1], inner[-1]) == (
        n + 1, len(middle) - 1, len(inner) - 1, len(values)
    )  # fmt: skip
    flat32 = values.numpy().view(np.uint32).tolist()
    got_r3 = [
        [
            [flat32[inner[q] : inner[q + 1]] for q in range(middle[m], middle[m + 1])]
            for m in range(outer[j], outer[j + 1])
        ]
        for j in range(n)
    ]
    assert got_r3 == [[] if w["r3"] is None else _nested3(w["r3"]) for w in wants]
    # Strings and bytes: a list when every record holds one, else a list and offsets.
    assert batch["name"] == [w["name"] for w in wants]
    assert all(type(s) is str for s in batch["name"])
    tags, tag_offsets = batch["tag"]
    assert isinstance(tags, list)
    offsets = np.asarray(tag_offsets).tolist()
    assert _split(tags, offsets, n, "tag") == [
        [] if w["tag"] is None else [w["tag"]] for w in wants
    ]
    blobs, blob_offsets = batch["blobs"]
    assert isinstance(blobs, list) and all(type(b) is bytes for b in blobs)
    assert _split(blobs, np.asarray(blob_offsets).tolist(), n, "blobs") == [
        [] if w["blobs"] is None else w["blobs"] for w in wants
    ]
    # Sparse vectors: one sparse tensor of the batch.
    sv = batch["sv"]
    assert isinstance(sv, torch.Tensor) and sv.is_sparse and sv.shape == (n, SIZE)
    assert sv.dtype == torch.float32
    dense = np.zeros((n, SIZE), dtype=np.float32)
    for j, w in enumerate(wants):
        if w["sv"] is not None:
            dense[j, w["sv"].indices] = w["sv"].values
    assert sv.to_dense().numpy().tobytes() == dense.tobytes()
    return ids


def _nested(r: Any) -> list[list[int]]:
    """A Ragged value of two levels as lists."""
    (lengths,) = r.row_lengths
    values, out, at = r.values.tolist(), [], 0
    for n in lengths.tolist():
        out.append(values[at : at + n])
        at += n
    return out


def _nested3(r: Any) -> list[list[list[int]]]:
    """A Ragged value of three levels as lists, its float32 values as their bits."""
    outer, inner = (x.tolist() for x in r.row_lengths)
    values = r.values.view(np.uint32).tolist()
    lists, at = [], 0
    for n in inner:
        lists.append(values[at : at + n])
        at += n
    out, at = [], 0
    for n in outer:
        out.append(lists[at : at + n])
        at += n
    return out


def test_the_collate_of_each_kind_of_column(folder: Folder) -> None:
    ds = spark_tfrecord.torch_dataset(folder.path)
    info = spark_tfrecord.dataset_info(folder.path)
    assert info.features["fx"] == (3, 3) and info.features["id"] == (1, 1)
    assert info.features["ns"] == (0, 1) and info.features["tag"] == (0, 1)
    for start in range(0, N, 40):
        picked = list(range(start, min(N, start + 40)))
        wants = [folder.want(folder.order[i]) for i in picked]
        # Fetched together (as a DataLoader does), and record by record.
        check_batch(ds.collate(ds.__getitems__(picked)), wants)
        check_batch(ds.collate([ds[i] for i in picked]), wants)
    # One record: still a batch, of one.
    check_batch(ds.collate([ds[0]]), [folder.want(folder.order[0])])


def test_a_batch_of_null_sparse_vectors_keeps_the_columns_size(folder: Folder) -> None:
    """(B, size) in every batch, also one whose vectors are all null: the size is the
    column's, from its ML metadata in the manifest's schema (ml_attr.num_attrs)."""
    ds = spark_tfrecord.torch_dataset(folder.path)
    nulls = [i for i, row_id in enumerate(folder.order) if folder.rows[row_id][7] is None][:4]
    wants = [folder.want(folder.order[i]) for i in nulls]
    assert len(nulls) == 4 and all(w["sv"] is None for w in wants)
    check_batch(ds.collate(ds.__getitems__(nulls)), wants)
    check_batch(ds.collate([ds[i] for i in nulls]), wants)


def test_default_collate_on_fixed_columns(folder: Folder) -> None:
    ds = spark_tfrecord.torch_dataset(folder.path, columns=["id", "fx"])
    loader = DataLoader(ds, batch_size=8)
    ids = []
    for batch in loader:
        assert batch["id"].dtype == torch.int64 and batch["fx"].dtype == torch.float32
        assert batch["fx"].shape == (len(batch["id"]), 3)
        for row_id, fx in zip(batch["id"].tolist(), batch["fx"]):
            assert fx.numpy().tobytes() == folder.want(row_id)["fx"].tobytes()
        ids += batch["id"].tolist()
    assert ids == folder.order


def test_the_tensors_hold_the_batch_decoders_arrays_not_copies(folder: Folder, monkeypatch) -> None:
    """collate hands the NumPy arrays the batch decoder made to torch as they are
    (``torch.from_numpy``): each tensor shares its memory with its array, so no copy is made
    between the decoder and the batch; and a fixed float column's array is the one gather of
    the records' bytes, viewed as float32."""
    from spark_tfrecord._loaders.source import RecordSource

    decoded: dict[str, Any] = {}
    collate = RecordSource.collate

    def kept(self: RecordSource, records: Any) -> dict[str, Any]:
        decoded.update(batch := collate(self, records))
        return batch

    monkeypatch.setattr(RecordSource, "collate", kept)
    ds = spark_tfrecord.torch_dataset(folder.path, columns=["id", "fx", "var"])
    picked = list(range(40))
    batch = ds.collate(ds.__getitems__(picked))
    wants = [folder.want(folder.order[i]) for i in picked]
    assert batch["id"].tolist() == [folder.order[i] for i in picked]
    assert batch["fx"].numpy().tobytes() == b"".join(w["fx"].tobytes() for w in wants)
    lists = [[] if w["var"] is None else [int(v) for v in w["var"]] for w in wants]
    values, offsets = batch["var"]
    assert values.tolist() == [v for vs in lists for v in vs]
    assert offsets.tolist() == np.cumsum([0] + [len(vs) for vs in lists]).tolist()
    pairs = [(batch["id"], decoded["id"]), (batch["fx"], decoded["fx"])]
    pairs += list(zip(batch["var"], decoded["var"]))
    for tensor, array in pairs:
        assert isinstance(array, np.ndarray) and np.shares_memory(tensor.numpy(), array)
    fx = decoded["fx"]
    assert fx.dtype == np.float32 and fx.base is not None and fx.base.dtype == np.uint8


# --- DataLoader workers and samplers ------------------------------------------------------


def epoch_ids(loader: DataLoader, folder: Folder) -> list[int]:
    """The ids of one epoch, each batch's values checked."""
    ids: list[int] = []
    for batch in loader:
        assert type(batch) is dict  # from a worker too, whichever way it came
        ids += check_batch(batch, [folder.want(i) for i in batch["id"].tolist()])
    return ids


@pytest.mark.parametrize("by_value", [True, False], ids=["pickled", "shared memory"])
def test_two_workers_global_shuffle_every_record_once_per_epoch(
    folder: Folder, by_value: bool, monkeypatch
) -> None:
    """The workers' batches reach the loop by value (small ones) or as torch shares tensors
    (above torch._BY_VALUE bytes): the same values either way."""
    from spark_tfrecord._loaders import torch as torch_loader

    if not by_value:
        monkeypatch.setattr(torch_loader, "_BY_VALUE", -1)  # the forked workers see it too
    ds = spark_tfrecord.torch_dataset(folder.path)
    loader = DataLoader(
        ds,
        batch_size=16,
        shuffle=True,
        num_workers=2,
        collate_fn=ds.collate,
        timeout=TIMEOUT,
        generator=torch.Generator().manual_seed(34),
    )
    first, second = epoch_ids(loader, folder), epoch_ids(loader, folder)
    assert sorted(first) == sorted(second) == list(range(N))
    # Shuffled across files, and again each epoch.
    assert first != folder.order and second != first


def test_spawned_workers_read_in_order(folder: Folder) -> None:
    """With the spawn start method each worker unpickles the dataset in a fresh Python."""
    ds = spark_tfrecord.torch_dataset(folder.path)
    loader = DataLoader(
        ds,
        batch_size=16,
        num_workers=2,
        multiprocessing_context="spawn",
        collate_fn=ds.collate,
        timeout=TIMEOUT,
    )
    assert epoch_ids(loader, folder) == folder.order
    mapped = spark_tfrecord.torch_dataset(folder.path, columns=["id", "fx"], transform=_double_id)
    loader = DataLoader(
        mapped, batch_size=None, num_workers=2, multiprocessing_context="spawn", timeout=TIMEOUT
    )
    assert [int(pair[0]) for pair in loader] == [2 * i for i in folder.order]


@pytest.mark.parametrize("drop_last", [False, True], ids=["padded", "drop_last"])
@pytest.mark.parametrize("ranks", [2, 3])
def test_distributed_sampler_ranks_are_disjoint_and_complete(
    folder: Folder, ranks: int, drop_last: bool
) -> None:
    """DistributedSampler pads the shuffled indices to a multiple of the ranks by repeating
    their first ones (drop_last=False), or drops the last ones (drop_last=True)."""
    ds = spark_tfrecord.torch_dataset(folder.path)
    per_rank = []
    for rank in range(ranks):
        sampler = DistributedSampler(
            ds, num_replicas=ranks, rank=rank, shuffle=True, seed=7, drop_last=drop_last
        )
        sampler.set_epoch(1)
        loader = DataLoader(ds, batch_size=10, sampler=sampler, collate_fn=ds.collate)
        per_rank.append(epoch_ids(loader, folder))
    counts = Counter(i for ids in per_rank for i in ids)
    if drop_last:
        assert all(len(ids) == N // ranks for ids in per_rank)
        assert max(counts.values()) == 1  # disjoint
        assert len(counts) == N // ranks * ranks  # all but the N % ranks dropped
    else:
        size = -(-N // ranks)
        padding = size * ranks - N
        assert all(len(ids) == size for ids in per_rank)
        assert set(counts) == set(range(N))  # complete
        repeated = sorted(i for i, c in counts.items() if c > 1)
        assert len(repeated) == padding and all(counts[i] == 2 for i in repeated)
        # The repeats are the padding: the first indices of the shuffled order, which the last
        # ranks receive at the end.
        order = torch.randperm(N, generator=torch.Generator().manual_seed(7 + 1)).tolist()
        assert repeated == sorted(folder.order[i] for i in order[:padding])


# --- files without an index, GZIP files ---------------------------------------------------


def test_files_without_an_index_give_the_same_records(spark, folder: Folder, tmp_path) -> None:
    unindexed = str(tmp_path / "unindexed")
    spark_tfrecord.write(folder.df, unindexed, vector_layout="sparse")
    assert not list(Path(unindexed).glob("_*.idx"))
    ds = spark_tfrecord.torch_dataset(unindexed)
    order = file_order_ids(spark, unindexed)
    assert len(ds) == N and sorted(order) == list(range(N))
    for i, row_id in enumerate(order):
        assert_same(ds[i], folder.want(row_id), f"record {i} (id {row_id})")
    # One index removed from an indexed folder: that file is scanned, the others indexed.
    partly = tmp_path / "partly"
    shutil.copytree(folder.path, partly)
    first_index = sorted(partly.glob("_*.idx"))[0]
    first_index.unlink()
    partial = spark_tfrecord.torch_dataset(str(partly))
    for i in range(N - 1, -1, -1):  # backwards: a scanned file is read from its end first
        assert_same(partial[i], folder.want(folder.order[i]), f"record {i}")


@pytest.mark.parametrize("codec,indexed", [("gzip", True), ("deflate", False)])
def test_compressed_files_give_the_same_records(
    spark, folder: Folder, tmp_path, codec: str, indexed: bool
) -> None:
    """Each file is decompressed whole on first use, and kept in the cache while it fits."""
    path = str(tmp_path / codec)
    spark_tfrecord.write(
        folder.df, path, compression=codec, write_index=indexed, vector_layout="sparse"
    )
    info = spark_tfrecord.dataset_info(path)
    assert {f.compression for f in info.files} == {codec}
    order = file_order_ids(spark, path)
    ds = spark_tfrecord.torch_dataset(path)
    assert len(ds) == N
    loader = DataLoader(ds, batch_size=32, num_workers=2, collate_fn=ds.collate, timeout=TIMEOUT)
    assert epoch_ids(loader, folder) == order
    for i in range(N - 1, -1, -3):
        assert_same(ds[i], folder.want(order[i]), f"record {i}")
    # A decompressed file larger than the cache is refused, saying so.
    assert all(len(_decompressed(f.path, codec)) > 1024 for f in info.files)
    small = spark_tfrecord.torch_dataset(path, cache_bytes=1024, block_size=1024)
    with pytest.raises(ValueError, match="cache_bytes") as raised:
        small[0]
    assert info.files[0].path in str(raised.value)


def _decompressed(path: str, codec: str) -> bytes:
    data = Path(path).read_bytes()
    return gzip.decompress(data) if codec == "gzip" else zlib.decompress(data)


# --- a corrupt file under workers ---------------------------------------------------------


@pytest.mark.parametrize(
    "indexed,damaged",
    [(True, "data"), (False, "data"), (True, "length")],
    ids=["indexed", "no index", "indexed, length checksum"],
)
def test_a_corrupt_file_fails_the_loader_with_file_and_offset_and_no_hang(
    folder: Folder, tmp_path, indexed: bool, damaged: str
) -> None:
    """The third record of a file fails its data checksum, or (with an index, which the
    loader trusts for where records are) its length's checksum."""
    copy = tmp_path / "copy"
    shutil.copytree(folder.path, copy)
    if not indexed:
        for index in copy.glob("_*.idx"):
            index.unlink()
    victim = Path(spark_tfrecord.dataset_info(str(copy)).files[1].path)
    data = bytearray(victim.read_bytes())
    offset = int(index_lines(bytes(data)).splitlines()[2].split()[0])
    data[offset + (12 + 1 if damaged == "data" else 8)] ^= 0x10
    victim.write_bytes(bytes(data))
    ds = spark_tfrecord.torch_dataset(str(copy))
    loader = DataLoader(ds, batch_size=8, num_workers=2, collate_fn=ds.collate, timeout=TIMEOUT)
    with pytest.raises(Exception) as raised:  # the worker's error, re-raised here
        for _ in loader:
            pass
    message = str(raised.value)
    condition = errors.DATA_CHECKSUM if damaged == "data" else errors.LENGTH_CHECKSUM
    assert condition in message, message
    assert str(victim) in message and f"offset {offset}" in message, message


def _same_batch(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_batch(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same_batch, a, b))
    if isinstance(a, torch.Tensor):
        a, b = (a.to_dense(), b.to_dense()) if a.is_sparse else (a, b)
        return a.dtype == b.dtype and a.numpy().tobytes() == b.numpy().tobytes()
    return type(a) is type(b) and bool(a == b)


def test_a_folder_held_in_memory_reads_as_its_files_do(
    folder: Folder, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local folder that fits in half the cache is read whole once per process and its
    frames checked at once, all of them; one that does not, a pread per record, each batch
    checked. Both give the same batches, and the same error for a damaged record (a batch
    without it is read): its file and offset."""
    from spark_tfrecord._format.frames import records

    checked: list[int] = []
    real = records.frames_sound

    def counted(buf: bytes, starts: Any, ends: Any) -> bool:
        checked.append(len(starts))
        return real(buf, starts, ends)

    monkeypatch.setattr(records, "frames_sound", counted)
    info = spark_tfrecord.dataset_info(folder.path)
    held = spark_tfrecord.torch_dataset(folder.path)
    total = info.num_bytes
    by_pread = spark_tfrecord.torch_dataset(folder.path, cache_bytes=2 * total - 2, block_size=1)
    order = np.random.default_rng(3).permutation(N).tolist()
    for indices in (order, order[:17], [N - 1], list(range(N))):
        batch = held.__getitems__(indices)
        assert len(batch.buf) == total  # the folder's bytes, not a copy of the records
        other = by_pread.__getitems__(indices)
        assert len(other.buf) == int((other.stops - other.starts).sum()) + 16 * len(indices)
        for k in range(len(indices)):
            fast = batch.buf[batch.starts[k] : batch.stops[k]]
            assert fast == other.buf[other.starts[k] : other.stops[k]]
        assert _same_batch(held.collate(batch), by_pread.collate(other))
    # the held folder: every frame checked once, when it was first read; each pread batch: its own
    assert checked == [N, N, 17, 1, N]
    copy = tmp_path / "copy"
    shutil.copytree(folder.path, copy)
    victim = Path(spark_tfrecord.dataset_info(str(copy)).files[1].path)
    data = bytearray(victim.read_bytes())
    offset = int(index_lines(bytes(data)).splitlines()[2].split()[0])
    data[offset + 12 + 1] ^= 0x10
    victim.write_bytes(bytes(data))
    for cache_bytes in (256 << 20, 2 * total - 2):
        ds = spark_tfrecord.torch_dataset(str(copy), cache_bytes=cache_bytes, block_size=1)
        checked.clear()
        assert ds.collate(ds.__getitems__([0]))["id"].tolist() == [folder.order[0]]
        assert ds.collate(ds.__getitems__([1]))["id"].tolist() == [folder.order[1]]
        # held: the folder's check fails, so every batch is checked; read by pread: so too
        assert checked == ([N, 1, 1] if cache_bytes == 256 << 20 else [1, 1]), checked
        with pytest.raises(errors.CorruptFileError) as raised:
            ds.__getitems__(order)
        found = errors.parameters(raised.value)
        assert errors.condition(raised.value) == errors.DATA_CHECKSUM
        assert (found["path"], found["offset"]) == (str(victim), str(offset)), cache_bytes


def test_a_held_folder_with_a_damaged_header_reads_its_other_records(tmp_path) -> None:
    """A folder with no index, held in memory: a record whose length does not match its
    checksum, in the second file, does not stop the first file's batches (the whole check at
    first read cannot walk that file, so each batch is checked as it is read); reading the
    second file fails, naming it and the record's offset."""
    from support.tfrecord_bytes import entry, example, feature, int64_list_packed, write_records

    def rec(j: int) -> bytes:
        return example(entry(b"i", feature("int64", int64_list_packed([j]))))

    write_records(tmp_path / "d" / "a.tfrecord", [rec(j) for j in range(3)])
    damaged = tmp_path / "d" / "b.tfrecord"
    write_records(damaged, [rec(j) for j in range(3, 6)])
    # counted (with no manifest, a walk of every file) before the damage, as a file damaged
    # since would be
    ds = spark_tfrecord.torch_dataset(str(tmp_path / "d"), columns="i bigint")
    data = bytearray(damaged.read_bytes())
    offset = 16 + len(rec(3))
    data[offset + 8] ^= 0x01  # record 1's length checksum
    damaged.write_bytes(bytes(data))
    assert ds.collate(ds.__getitems__([2, 0, 1]))["i"][0].tolist() == [2, 0, 1]
    with pytest.raises(errors.CorruptFileError) as raised:
        ds.__getitems__([3])
    found = errors.parameters(raised.value)
    assert errors.condition(raised.value) == errors.LENGTH_CHECKSUM
    assert (found["path"], found["offset"]) == (str(damaged), str(offset))


# --- make_converter, and a trainer without Spark ------------------------------------------


def test_make_converter_torch_dataset_is_torch_dataset_of_its_path(
    folder: Folder, tmp_path
) -> None:
    converter = spark_tfrecord.make_converter(folder.df, str(tmp_path / "cache"))
    ds = converter.torch_dataset()
    same = spark_tfrecord.torch_dataset(converter.path)
    assert type(ds) is type(same) and len(ds) == len(same) == len(converter) == N
    ids = []
    for i in range(N):
        assert_same(ds[i], same[i], f"record {i}")
        ids.append(record_id(ds[i]))
        # make_converter writes vectors dense (write's default): sv is the vector's values.
        assert_same(ds[i], expected(folder.schema, folder.rows[ids[-1]]), f"record {i}")
    assert sorted(ids) == list(range(N))
    picked = converter.torch_dataset(columns=["id", "fx"], transform=_double_id)
    assert [picked[i][0] for i in range(N)] == [2 * i for i in ids]


def test_a_trainer_reads_without_pyspark_py4j_or_tensorflow(folder: Folder) -> None:
    code = (
        "import spark_tfrecord\n"
        f"ds = spark_tfrecord.torch_dataset({folder.path!r})\n"
        "batch = ds.collate(ds.__getitems__(list(range(len(ds)))))\n"
        "result = {'ids': [int(ds[i]['id']) for i in range(len(ds))],\n"
        "          'batch': batch['id'].tolist(), 'names': batch['name'][:2]}\n"
    )
    answer = trainer_side.run(code)
    assert answer == {
        "result": {
            "ids": folder.order,
            "batch": folder.order,
            "names": [f"name {i}" for i in folder.order[:2]],
        },
        "heavy": [],
    }
