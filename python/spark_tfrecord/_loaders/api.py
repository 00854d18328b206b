"""Map-style loaders of a TFRecord folder for PyTorch and JAX (Grain): no TensorFlow, no JVM.

Importing this module imports nothing heavy: NumPy, torch and grain come in when a loader is
made.
"""

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
    """A map-style ``torch.utils.data.Dataset`` of the records of the TFRecord folder ``path``
    (a local path, a ``file://`` URL, or an fsspec URL such as ``s3://bucket/train`` with
    fsspec's ``storage_options``), decoded in Python: neither TensorFlow nor a JVM is needed.

    - ``len(ds)`` is the record count (``dataset_info(path).num_records``: the manifest's, or
      counted from the framing when there is none); ``ds[i]`` is record i: the files in order
      of their path, records in file order. ``__getitems__`` reads a DataLoader's batch in one
      call.
    - A record is a dict: one key per column (a struct's leaves by their path ``a/b``), values
      as TensorFlow reads them: ``np.int64`` / ``np.float32`` scalars, 1-D arrays for lists,
      ``str`` / ``bytes``, :class:`Ragged` for lists of lists, :class:`Sparse` for vectors
      written sparse, None for a null. A table written with ``partitionBy`` has its
      partition columns (``name=value`` folders) after the others, typed as Spark types them.
      A SequenceExample folder reads its context features and feature lists (a
      :class:`Ragged` per ``array<array<T>>``). ``transform`` is applied to each record.
    - ``columns``: all (None), some by name, or a DDL string (``"x array<float>, y long"``),
      which is then the schema. All and some are of the folder's schema: its manifest's, or
      for a folder with none (files TensorFlow, TFX or TFDS wrote: any shard names, GZIP by
      its first bytes) inferred from its records as the data source infers it
      (``ds.schema_source`` is ``"inferred"``), with the data source's read ``options``
      (``{"recordType": "SequenceExample"}``, ``inferSchemaMaxFiles``,
      ``inferSchemaMaxRecords``, ``inferNesting``, ``pathSeparator``: ``dataset_info``'s).
    - ``DataLoader(ds, batch_size=B, collate_fn=ds.collate)`` batches: a column every record
      holds with the same number of values stacked into a tensor, others as
      ``(values, offsets)`` (docs/pytorch.md). It pickles: workers (``num_workers``, fork or
      spawn), ``shuffle=True`` and ``DistributedSampler`` work as with any map-style dataset.
    - Offsets come from each file's index (``write_index=True``), else from one scan of the
      file per process. GZIP files are decompressed whole when first read, and kept while
      they fit ``cache_bytes``; object stores are read in blocks of ``block_size`` bytes into a
      per-process cache of ``cache_bytes``. A local, uncompressed folder that fits in half of
      ``cache_bytes`` is read whole into it, once per process (no system call per record).

    >>> import tempfile
    >>> from spark_tfrecord import torch_dataset, write
    >>> rows = [(i, [i / 2, -1.0]) for i in range(6)]
    >>> df = spark.createDataFrame(rows, "id long, x array<float>")
    >>> folder = tempfile.mkdtemp() + "/train"
    >>> write(df.coalesce(1), folder)
    >>> ds = torch_dataset(folder)
    >>> len(ds), ds[3]["id"], ds[3]["x"].tolist()
    (6, np.int64(3), [1.5, -1.0])
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
    """A random-access source of the records of the TFRecord folder ``path`` for Grain, JAX's
    data loader: ``grain.MapDataset.source(src)``, or ``grain.DataLoader(data_source=src,
    sampler=grain.samplers.IndexSampler(len(src), shard_options=..., shuffle=True, seed=...))``.
    Records, order, columns, ``options`` and object stores are as for :func:`torch_dataset`;
    ``src.collate`` batches records into NumPy arrays (a ``batch_fn`` for
    ``grain.transforms.Batch`` when some columns vary in length).

    >>> import tempfile
    >>> from spark_tfrecord import grain_source, write
    >>> folder = tempfile.mkdtemp() + "/train"
    >>> write(spark.range(5).coalesce(1), folder)
    >>> src = grain_source(folder)
    >>> len(src), src[4]
    (5, {'id': np.int64(4)})
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
