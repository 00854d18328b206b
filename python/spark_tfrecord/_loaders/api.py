"""Map-style loaders of a TFRecord folder for PyTorch and JAX (Grain): no TensorFlow, no JVM."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spark_tfrecord._loaders.grain import GrainSource
    from spark_tfrecord._loaders.torch import TorchDataset


def torch_dataset(
    path: str | os.PathLike[str],
    columns: Sequence[str] | str | None = None,
    transform: Callable[[dict[str, Any]], Any] | None = None,
    *,
    options: Mapping[str, str] | None = None,
    storage_options: Mapping[str, Any] | None = None,
    cache_bytes: int = 256 << 20,
    block_size: int = 4 << 20,
) -> TorchDataset:
    """A map-style ``torch.utils.data.Dataset`` of the records of the TFRecord folder ``path``.

    ``path``: local, ``file://`` or fsspec URL (``storage_options``). ``ds[i]`` is record i (files
    in path order): a dict of column (struct leaves as ``a/b``) to value as TensorFlow reads it
    (NumPy scalars and 1-D arrays, ``str``, ``bytes``, :class:`Ragged`, :class:`Sparse`, None), then
    ``transform``. ``columns``: all (None), some, or a DDL string used as schema (else the
    manifest's, or inferred with the read ``options``). ``ds.collate`` is a ``collate_fn``.
    ``cache_bytes``: per-process cache of ``block_size``-byte object-store blocks and GZIP files.

    >>> import tempfile
    >>> from spark_tfrecord import torch_dataset, write
    >>> rows = [(i, [i / 2, -1.0]) for i in range(6)]
    >>> df = spark.createDataFrame(rows, "id long, x array<float>")
    >>> folder = tempfile.mkdtemp() + "/train"
    >>> write(df.coalesce(1), folder)
    >>> ds = torch_dataset(folder)
    >>> len(ds), ds[3]["id"].dtype, int(ds[3]["id"]), ds[3]["x"].tolist()
    (6, dtype('int64'), 3, [1.5, -1.0])
    >>> import torch
    >>> batch = next(iter(torch.utils.data.DataLoader(ds, batch_size=4, collate_fn=ds.collate)))
    >>> batch["id"].tolist(), batch["x"].shape
    ([0, 1, 2, 3], torch.Size([4, 2]))
    """
    from spark_tfrecord._loaders.torch import TorchDataset

    return TorchDataset(
        os.fspath(path),
        columns,
        transform,
        options=options,
        storage_options=storage_options,
        cache_bytes=cache_bytes,
        block_size=block_size,
    )


def grain_source(
    path: str | os.PathLike[str],
    columns: Sequence[str] | str | None = None,
    *,
    options: Mapping[str, str] | None = None,
    storage_options: Mapping[str, Any] | None = None,
    cache_bytes: int = 256 << 20,
    block_size: int = 4 << 20,
) -> GrainSource:
    """A random-access Grain (JAX) source of the records of the TFRecord folder ``path``.

    Arguments and records as for :func:`torch_dataset`; ``src.collate`` is a Grain ``batch_fn``.

    >>> import tempfile
    >>> from spark_tfrecord import grain_source, write
    >>> folder = tempfile.mkdtemp() + "/train"
    >>> write(spark.range(5).coalesce(1), folder)
    >>> src = grain_source(folder)
    >>> len(src), list(src[4]), int(src[4]["id"])
    (5, ['id'], 4)
    """
    from spark_tfrecord._loaders.grain import GrainSource

    return GrainSource(
        os.fspath(path),
        columns,
        options=options,
        storage_options=storage_options,
        cache_bytes=cache_bytes,
        block_size=block_size,
    )
