"""A ready ``tf.data`` pipeline over a folder of TFRecord files, with a known cardinality."""

from __future__ import annotations

import os
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, Union

from spark_tfrecord._format.columns.schema import select

if TYPE_CHECKING:
    from spark_tfrecord._format.files.files import Files
    from spark_tfrecord._format.frames.manifest import DatasetInfo


class InputContextLike(Protocol):
    """What :func:`tf_dataset` reads of a ``tf.distribute.InputContext``."""

    @property
    def input_pipeline_id(self) -> int: ...

    @property
    def num_input_pipelines(self) -> int: ...


Shard = Union[tuple[int, int], InputContextLike]

#: ``TFRecordDataset``'s ``compression_type`` for the manifest's codec names.
_COMPRESSION_TYPES = {"none": "", "gzip": "GZIP", "deflate": "ZLIB"}
#: Records parsed at once when no ``batch_size`` is given (parsed in batches, then unbatched).
_PARSE_BATCH = 256
#: Records read from a file at a time (or a batch, if larger): one element of the parallel reads.
_READ_BLOCK = 1024


def _shard(shard: Shard | None) -> tuple[int, int]:
    """``(index, count)`` of a shard given as a pair or an ``InputContext``."""
    if shard is None:
        return 0, 1
    if isinstance(shard, tuple):
        index, count = shard
    else:
        index, count = shard.input_pipeline_id, shard.num_input_pipelines
    if not (isinstance(index, int) and isinstance(count, int) and 0 <= index < count):
        raise ValueError(f"shard must be (index, count) with 0 <= index < count, not {shard!r}")
    return index, count


def _compression_type(codec: str, path: str) -> str:
    if codec not in _COMPRESSION_TYPES:
        raise ValueError(
            f"{path} is compressed with {codec!r}, which TensorFlow does not read "
            "(it reads none, gzip and deflate)."
        )
    return _COMPRESSION_TYPES[codec]


def _spec(
    path: str,
    info: DatasetInfo,
    files: Files,
    columns: Sequence[str] | str | None,
    label: str | None,
    options: Mapping[str, str] | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The context (or Example) spec and the sequence spec (SequenceExample only) to parse."""
    from spark_tfrecord._format.columns.ddl import parse_ddl
    from spark_tfrecord._format.datasets.datasets import read_options, schema_of
    from spark_tfrecord._loaders.spec import spec_of

    struct: Mapping[str, Any]
    counts: Mapping[str, tuple[int, int]]
    if isinstance(columns, str):
        parsed = read_options(info.record_type if info.source == "manifest" else None, options)
        struct, counts, record_type = parse_ddl(columns), {}, parsed.record_type
    else:
        had = schema_of(info, files, options)
        struct, counts, record_type = had.json, had.counts, had.record_type
    if record_type == "ByteArray":
        raise ValueError(
            f"{path} holds raw records (record_type ByteArray): there are no features to parse; "
            "tf.data.TFRecordDataset reads them as they are."
        )
    if record_type == "SequenceExample":
        context, sequence = spec_of(struct, counts, record_type="SequenceExample")
    else:
        context, sequence = spec_of(struct, counts)
    if columns is not None and not isinstance(columns, str):
        wanted = [*columns, *([label] if label is not None and label not in columns else [])]
        everything = {**context, **sequence}
        chosen = {k: everything[k] for k in select(list(everything), wanted, path)}
        context = {k: v for k, v in chosen.items() if k in context}
        sequence = {k: v for k, v in chosen.items() if k in sequence}
    if label is not None and label not in context and label not in sequence:
        raise ValueError(
            f"label {label!r} is not a feature of the records of {path}; they hold "
            f"{sorted({**context, **sequence})}."
        )
    return context, sequence


def _parse_where_read(
    context: dict[str, Any], sequence: dict[str, Any], shuffle_buffer: int | None, files: int
) -> bool:
    """Whether reading threads parse: dense Examples, no ``shuffle_buffer``, a file per core."""
    import tensorflow as tf  # type: ignore[import-untyped,import-not-found,unused-ignore]

    return (
        not sequence
        and shuffle_buffer is None
        and files >= (os.cpu_count() or 1)
        and all(isinstance(f, tf.io.FixedLenFeature) for f in context.values())
    )


def _checked_seed(
    batch_size: int | None,
    shuffle_buffer: int | None,
    shuffle_files: bool,
    workers: int,
    seed: int | None,
) -> int | None:
    """The seed of the shuffles (drawn when none is given), after checking the arguments."""
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    if shuffle_buffer is not None and shuffle_buffer < 1:
        raise ValueError(f"shuffle_buffer must be at least 1, not {shuffle_buffer}")
    if shuffle_files and workers > 1 and seed is None:
        raise ValueError(
            "shuffle_files with shard: give every worker the same seed, so that all read the "
            "files in the same order (otherwise their records overlap)"
        )
    if seed is None and (shuffle_files or shuffle_buffer is not None):
        seed = random.SystemRandom().randrange(2**31)
    return seed


def _files_of_epoch(
    tf: Any,
    names: list[str],
    kinds: list[str],
    counts: list[int],
    records: tuple[int, int],
    shuffle_files: bool,
) -> Any:
    """A function of an epoch's key: (file, compression, skip, take) of the worker's records."""
    tables = (
        tf.constant(names, tf.string),
        tf.constant(kinds, tf.string),
        tf.constant(counts, tf.int64),
    )
    first, end = records

    def files_of_epoch(key: Any) -> Any:
        order_names, order_kinds, order_counts = tables
        if shuffle_files:
            order = tf.argsort(tf.random.stateless_uniform([len(names)], seed=tf.stack([key, key])))
            order_names, order_kinds, order_counts = (tf.gather(t, order) for t in tables)
        starts = tf.cumsum(order_counts, exclusive=True)
        skip = tf.clip_by_value(first - starts, 0, order_counts)
        take = tf.clip_by_value(end - starts, 0, order_counts) - skip
        wanted = take > 0
        return tf.data.Dataset.from_tensor_slices(
            tuple(tf.boolean_mask(t, wanted) for t in (order_names, order_kinds, skip, take))
        )

    return files_of_epoch


def _parser(tf: Any, context: dict[str, Any], sequence: dict[str, Any], label: str | None) -> Any:
    """The function parsing a batch of serialized records to features or ``(features, label)``."""

    def parse(serialized: Any) -> Any:
        if sequence:
            parsed, lists, _ = tf.io.parse_sequence_example(
                serialized, context_features=context, sequence_features=sequence
            )
            features = {**parsed, **lists}
        else:
            features = tf.io.parse_example(serialized, context)
        if label is None:
            return features
        target = features.pop(label)
        return features, target

    return parse


def tf_dataset(
    path: str,
    *,
    columns: Sequence[str] | str | None = None,
    label: str | None = None,
    batch_size: int | None = None,
    shuffle_files: bool = False,
    seed: int | None = None,
    shuffle_buffer: int | None = None,
    repeat: bool = False,
    shard: Shard | None = None,
    drop_remainder: bool = False,
    options: Mapping[str, str] | None = None,
) -> Any:
    """Return a ``tf.data.Dataset`` of the parsed records of the TFRecord folder ``path``.

    Its ``cardinality()`` is known, so Keras's ``fit`` needs no ``steps_per_epoch``. Without a
    manifest, records are counted and checked first and the schema inferred (``options`` as for
    :func:`dataset_info`). ``columns``: all (None), some, or a DDL string used as schema. ``label``:
    yield ``(features, label)`` pairs. ``batch_size``: records per batch (None: single records; the
    last smaller unless ``drop_remainder``). ``shuffle_files``: a new file order from ``seed`` each
    epoch; ``shuffle_buffer``: a ``Dataset.shuffle`` of that size. ``repeat``: for ever. ``shard``:
    ``(index, count)`` or a ``tf.distribute.InputContext``: each worker reads ``N // count``
    consecutive records (the rest are skipped); with ``shuffle_files`` all need the same ``seed``.
    tf.data's autotuner is off (it slowed this pipeline); ``with_options`` can turn it on.

    >>> import tempfile
    >>> from spark_tfrecord import write
    >>> df = spark.createDataFrame([(i, [i / 2, -i / 2], i % 2) for i in range(10)],
    ...                            "id long, x array<float>, y long")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write(df.coalesce(2), tmp + "/train", compression="gzip")
    ...     ds = tf_dataset(tmp + "/train", label="y", batch_size=4)
    ...     features, label = next(iter(ds))
    ...     print(int(ds.cardinality()), features["x"].shape, label.shape)
    3 (4, 2) (4,)
    """
    import tensorflow as tf  # type: ignore[import-untyped,import-not-found,unused-ignore]

    from spark_tfrecord._format.datasets.datasets import refuse_tfds
    from spark_tfrecord._format.files.files import file_system
    from spark_tfrecord._format.frames.manifest import dataset_info_in, read_manifest

    index, count = _shard(shard)
    seed = _checked_seed(batch_size, shuffle_buffer, shuffle_files, count, seed)

    fs, where = file_system(os.fspath(path))
    info = read_manifest(where, fs) if fs.isdir(where) else None
    if info is None:
        refuse_tfds(fs, where)  # before its records are counted
        info = dataset_info_in(fs, where)
    context, sequence = _spec(path, info, fs, columns, label, options)

    files = [f for f in info.files if f.num_records > 0]
    names = [f.path for f in files]  # dataset_info gives them joined to the folder
    kinds = [_compression_type(f.compression, f.path) for f in files]
    counts = [f.num_records for f in files]
    per_worker = sum(counts) // count
    if per_worker == 0:
        raise ValueError(
            f"{path} holds {sum(counts)} records: too few for {count} workers to get one each."
        )
    ours = (index * per_worker, (index + 1) * per_worker)  # the worker's records
    files_of_epoch = _files_of_epoch(tf, names, kinds, counts, ours, shuffle_files)
    parse = _parser(tf, context, sequence, label)
    shuffling = shuffle_files or shuffle_buffer is not None

    parse_batch = batch_size if batch_size is not None else _PARSE_BATCH
    block = max(parse_batch, _READ_BLOCK)

    parse_blocks = _parse_where_read(context, sequence, shuffle_buffer, len(files) // count)

    def read_file(name: Any, kind: Any, skip: Any, take: Any) -> Any:
        records = tf.data.TFRecordDataset(name, compression_type=kind).skip(skip).take(take)
        return records.batch(block).map(parse) if parse_blocks else records.batch(block)

    def blocks_of_epoch(key: Any) -> Any:
        return files_of_epoch(key).interleave(
            read_file, num_parallel_calls=tf.data.AUTOTUNE, deterministic=not shuffling
        )

    if shuffle_files:
        # One key per pass: a new file order at each epoch, the same on every worker (seed).
        keys = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True)
    else:
        keys = tf.data.Dataset.from_tensors(tf.constant(0, tf.int64)).repeat()
    blocks = keys.take(-1 if repeat else 1).flat_map(blocks_of_epoch)

    drop = batch_size is not None and drop_remainder
    if shuffle_buffer is not None:
        records = blocks.unbatch().shuffle(shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
        ds = records.batch(parse_batch, drop_remainder=drop)
    elif hasattr(blocks, "rebatch"):  # TensorFlow 2.12 and later
        ds = blocks.rebatch(parse_batch, drop_remainder=drop)
    else:
        ds = blocks.unbatch().batch(parse_batch, drop_remainder=drop)
    batches = per_worker // parse_batch if drop else -(-per_worker // parse_batch)

    def known(n: int) -> Any:
        return tf.data.experimental.assert_cardinality(
            tf.data.INFINITE_CARDINALITY if repeat else n
        )

    ds = ds.apply(known(batches))
    if not parse_blocks:
        ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE, deterministic=not shuffling)
    if batch_size is None:
        ds = ds.unbatch().apply(known(per_worker))
    fixed = tf.data.Options()
    fixed.autotune.enabled = False  # nothing here to tune, and it slowed the pipeline
    return ds.prefetch(tf.data.AUTOTUNE).with_options(fixed)
