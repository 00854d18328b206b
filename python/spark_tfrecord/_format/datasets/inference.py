"""Schema inference by sampling, as the jar infers (``TFRecordSchemaInferencer``), in plain Python.

:func:`infer_schema` reads up to ``inferSchemaMaxFiles`` files, spread evenly over the files sorted
by path, and up to ``inferSchemaMaxRecords`` records of each; the rules are the jar's
(docs/inference.md).

>>> import tempfile
>>> from spark_tfrecord._format.datasets.inference import infer_schema
>>> folder = tempfile.mkdtemp()
>>> spark.createDataFrame([(1, [0.5, 1.5])], "id long, x array<float>").write.format(
...     "tfrecord").mode("overwrite").save(folder)
>>> import glob
>>> schema = infer_schema(sorted(glob.glob(folder + "/part-*")))
>>> [(f["name"], f["type"]) for f in schema["fields"]]
[('id', 'long'), ('x', {'type': 'array', 'elementType': 'float', 'containsNull': False})]
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from itertools import chain
from typing import Any

from spark_tfrecord import errors
from spark_tfrecord._format.entries.batch_stats import add_batch
from spark_tfrecord._format.entries.feature_stats import FeatureStats, SampledFeatures, add_record
from spark_tfrecord._format.entries.wire import FLOAT, INT64, UNSET, MalformedRecord
from spark_tfrecord._format.files.files import Files, LocalFiles
from spark_tfrecord._format.frames.file_records import record_batches
from spark_tfrecord._format.frames.read_options import InferenceOptions

_LOG = logging.getLogger("spark_tfrecord")


def _array(element: Any) -> dict[str, Any]:
    return {"type": "array", "elementType": element, "containsNull": False}


def _field(name: str, data_type: Any, nullable: bool = True) -> dict[str, Any]:
    return {"name": name, "type": data_type, "nullable": nullable, "metadata": {}}


def _struct(fields: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "struct", "fields": fields}


#: The jar's Spark ML vector type (``VectorUDT``), as ``StructType.jsonValue()`` gives it.
VECTOR_TYPE: Mapping[str, Any] = {
    "type": "udt",
    "class": "org.apache.spark.ml.linalg.VectorUDT",
    "pyClass": "pyspark.ml.linalg.VectorUDT",
    "sqlType": _struct(
        [
            _field("type", "byte", nullable=False),
            _field("size", "integer"),
            _field("indices", _array("integer")),
            _field("values", _array("double")),
        ]
    ),
}

#: The column of a ByteArray read (``TFRecordSchema.ByteArrayColumn``).
BYTE_ARRAY_COLUMN = "byteArray"
_RAGGED_FLAT, _RAGGED_LENGTHS = "ragged_flat_values", "ragged_row_lengths_"


@dataclass
class _FileSample:
    features: SampledFeatures
    records: int


def _read_sample(path: str, files: Files, options: InferenceOptions, sequence: bool) -> _FileSample:
    """What the first ``inferSchemaMaxRecords`` records of one file say of their features."""
    features = SampledFeatures()
    n = 0
    what = "tf.train.SequenceExample" if sequence else "tf.train.Example"
    try:
        for buf, starts, stops, offsets in record_batches(
            path,
            files,
            compression=options.compression,
            verify_checksums=options.verify_checksums,
            max_record_bytes=options.max_record_bytes,
        ):
            take = min(len(starts), options.max_records - n)
            if take <= 0:
                break
            left: list[int] = list(range(take))
            before = copy.deepcopy(features)
            if not sequence:  # the records laid out as the batch's first, at once
                left = add_batch(buf, starts[:take], stops[:take], features).tolist()
            for i in left:
                try:
                    add_record(bytes(buf[starts[i] : stops[i]]), features, sequence)
                except (MalformedRecord, IndexError) as e:
                    # what the records before it say, and no more (ignoreCorruptFiles keeps it)
                    features, n = before, n + i
                    for k in range(i):
                        add_record(bytes(buf[starts[k] : stops[k]]), features, sequence)
                    reason = getattr(e, "reason", "a field runs past the end of the record")
                    raise errors.CorruptFileError(
                        errors.MALFORMED_RECORD, f"Malformed {what} ({reason})", path, offsets[i]
                    ) from None
            n += take
    except (OSError, ValueError) as e:
        # As Spark's scans do: keep what was read before the bad record, go on with the next file.
        missing = isinstance(e, FileNotFoundError) and options.ignore_missing_files
        if not (missing or options.ignore_corrupt_files):
            raise
        _LOG.warning("Schema inference skipped the rest of %s: %s", path, e)
    return _FileSample(features, n)


def sample_files(paths: Sequence[str], max_files: int) -> list[str]:
    """Up to ``max_files`` of ``paths``, evenly spread over all of them sorted by path."""
    ordered = sorted(paths)
    if len(ordered) <= max_files:
        return ordered
    return [ordered[i * len(ordered) // max_files] for i in range(max_files)]


def _cannot_infer(reason: str) -> errors.ArgumentError:
    return errors.ArgumentError(errors.CANNOT_INFER_SCHEMA, reason)


def infer_schema(
    paths: Sequence[str],
    options: Mapping[str, str] | InferenceOptions | None = None,
    *,
    files: Files | None = None,
    ml_vectors: bool = True,
) -> dict[str, Any]:
    """The schema the data source infers for the data files ``paths`` (``StructType.jsonValue()``).
    ``ml_vectors``: group sparse-vector features into Spark ML vectors, as the jar with spark-mllib.
    Raises ``ArgumentError`` with nothing to infer from, ``CorruptFileError`` for a bad record.
    """
    parsed = options if isinstance(options, InferenceOptions) else InferenceOptions.parse(options)
    if parsed.record_type == "ByteArray":
        return _struct([_field(BYTE_ARRAY_COLUMN, "binary", nullable=False)])
    fs = files if files is not None else LocalFiles()
    sequence = parsed.record_type == "SequenceExample"
    sample = sample_files(paths, parsed.max_files)
    read = partial(_read_sample, files=fs, options=parsed, sequence=sequence)
    threads = min(len(sample), 8, os.cpu_count() or 1)
    if fs.remote and threads > 1:  # an object store's files on up to 8 threads, as the jar
        with ThreadPoolExecutor(threads, thread_name_prefix="tfrecord-schema-inference") as pool:
            samples = list(pool.map(read, sample))
    else:
        samples = [read(p) for p in sample]
    merged = SampledFeatures()
    for s in samples:
        merged.merge(s.features)
    names, stats, list_stats = merged.names, merged.stats, merged.list_stats
    for i, name in enumerate(names):
        if stats[i] is not None and list_stats[i] is not None:
            raise _cannot_infer(
                f"Cannot infer a TFRecord schema: '{name}' is both a context feature and a "
                "feature list. Give the schema with .schema(...): array<array<…>> reads the "
                "feature list, any other type the context feature."
            )
    if not names:
        n = sum(s.records for s in samples)
        what = f"the {n} records read from {len(sample)} of {len(paths)} files have no features"
        if not paths:
            what = "there are no files"
        raise _cannot_infer(
            f"Cannot infer a TFRecord schema: {what}. Give the schema with .schema(...), or "
            "point the reader at files that hold tf.train.Example records."
        )
    separator = parsed.path_separator
    context_stats = {names[i]: (i, s) for i, s in enumerate(stats) if s is not None}
    grouped: dict[int, dict[str, Any]] = {}  # the columns of several features, at their first
    parts: set[int] = set()
    vectors = _sparse_vectors(context_stats, separator) if ml_vectors else iter(())
    for at, column in chain(vectors, _ragged_lists(context_stats, separator)):
        grouped.setdefault(min(at), column)
        parts.update(at)
    fields: list[dict[str, Any]] = []
    for i, context in enumerate(stats):
        if i in grouped:
            fields.append(grouped[i])
        elif context is not None and i not in parts:
            data_type = context.data_type()
            many = context.max_values > 1
            fields.append(_field(names[i], _array(data_type) if many else data_type))
    for i, steps in enumerate(list_stats):
        if steps is not None:
            fields.append(_field(names[i], _array(_array(steps.data_type()))))
    return _nest(fields, separator) if parsed.infer_nesting else _struct(fields)


def _sparse_vectors(
    stats: dict[str, tuple[int, FeatureStats]], separator: str
) -> Iterator[tuple[list[int], dict[str, Any]]]:
    """The jar's ``sparseVectors``: each vector's parts (their numbers) and column."""
    suffix = separator + "size"
    for name in stats:
        if not name.endswith(suffix):
            continue
        x = name[: -len(suffix)]
        found = [stats.get(x + separator + p) for p in ("indices", "values", "size")]
        if not x or x in stats or any(f is None for f in found):
            continue
        (ix, si), (vx, sv), (sx, ss) = found  # type: ignore[misc]
        if (
            ss.kind == INT64
            and ss.max_values <= 1
            and si.kind in (INT64, UNSET)
            and sv.kind in (FLOAT, UNSET)
        ):
            yield [ix, vx, sx], _field(x, dict(VECTOR_TYPE))


def _ragged_lists(
    stats: dict[str, tuple[int, FeatureStats]], separator: str
) -> Iterator[tuple[list[int], dict[str, Any]]]:
    """The jar's ``raggedLists``, as :func:`_sparse_vectors`; a set with a gap: logged, skipped."""
    suffix = separator + _RAGGED_FLAT
    for name, (flat_at, flat) in stats.items():
        if not name.endswith(suffix):
            continue
        x = name[: -len(suffix)]
        prefix = x + separator + _RAGGED_LENGTHS
        levels = sorted(
            int(k)
            for k in (n[len(prefix) :] for n in stats if n.startswith(prefix))
            if k and k.isdecimal() and k.isascii() and (k == "0" or k[0] != "0")
        )
        lengths = [stats[prefix + str(k)] for k in levels]
        if not x or x in stats or any(s.kind not in (INT64, UNSET) for _, s in lengths):
            continue
        if not levels or levels != list(range(len(levels))):
            missing = (
                f"there is no '{prefix}0'"
                if not levels
                else f"'{prefix}{next(k for k in range(len(levels)) if levels[k] != k)}' is missing"
            )
            _LOG.warning(
                "Features '%s'%s are not read as one list of lists '%s': its row lengths must be "
                "'%s0' to '%s<n-1>', without a gap, but %s. They are read as separate columns.",
                name,
                "".join(f", '{prefix}{k}'" for k in levels),
                x,
                prefix,
                prefix,
                missing,
            )
            continue
        data_type: Any = flat.data_type()
        for _ in range(len(levels) + 1):
            data_type = _array(data_type)
        yield [flat_at, *(i for i, _ in lengths)], _field(x, data_type)


class _Node:
    """A struct of ``inferNesting``: children by name, a field or a node; its first feature."""

    def __init__(self, first: str) -> None:
        self.children: dict[str, dict[str, Any] | _Node] = {}
        self.first = first

    def struct(self) -> dict[str, Any]:
        children = self.children.items()
        return _struct([c if isinstance(c, dict) else _field(n, c.struct()) for n, c in children])


def _nest(fields: list[dict[str, Any]], separator: str) -> dict[str, Any]:
    """The jar's ``nest``: path-like names become struct columns."""

    def conflict(leaf: str, other: str) -> errors.ArgumentError:
        return _cannot_infer(
            f"Cannot infer nesting: '{leaf}' is a feature and also the path of the feature "
            f"'{other}'. Read without inferNesting, or give the schema with .schema(...)."
        )

    root = _Node("")
    for f in fields:
        parts = f["name"].split(separator)
        path = [f["name"]] if any(not p for p in parts) else parts
        node = root
        for d, part in enumerate(path[:-1]):
            child = node.children.get(part)
            if isinstance(child, _Node):
                node = child
            elif child is not None:
                raise conflict(separator.join(path[: d + 1]), f["name"])
            else:
                node.children[part] = node = _Node(f["name"])
        last = node.children.get(path[-1])
        if isinstance(last, _Node):
            raise conflict(f["name"], last.first)
        node.children[path[-1]] = {**f, "name": path[-1]}
    return root.struct()


def as_nullable(data_type: Any) -> Any:
    """``data_type`` all nullable: Spark's ``DataType.asNullable``, as a read's schema shows."""
    if isinstance(data_type, dict):
        if data_type.get("type") == "struct":
            return {
                **data_type,
                "fields": [
                    {**f, "type": as_nullable(f["type"]), "nullable": True}
                    for f in data_type["fields"]
                ],
            }
        if data_type.get("type") == "array":
            return {
                **data_type,
                "elementType": as_nullable(data_type["elementType"]),
                "containsNull": True,
            }
    return data_type
