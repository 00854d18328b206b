"""A dataset's files, counts and schema, whoever wrote it; the readers' one source of schemas.
Without a valid manifest the schema is inferred as the jar infers it, with no value counts (so
the readers take every list as ragged and every scalar as nullable).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from spark_tfrecord import errors
from spark_tfrecord._format.columns.ddl import to_ddl
from spark_tfrecord._format.datasets import tfds_dataset
from spark_tfrecord._format.datasets.folders import list_files_in
from spark_tfrecord._format.datasets.inference import infer_schema
from spark_tfrecord._format.files.files import Files, file_system
from spark_tfrecord._format.frames.manifest import DatasetInfo, dataset_info_in, read_manifest
from spark_tfrecord._format.frames.read_options import InferenceOptions

_LOG = logging.getLogger("spark_tfrecord")

#: The read options a folder's schema takes, as the data source names them.
INFERENCE_OPTIONS = (
    "recordType",
    "inferSchemaMaxFiles",
    "inferSchemaMaxRecords",
    "inferNesting",
    "pathSeparator",
    "compression",
    "ignoreCorruptFiles",
    "ignoreMissingFiles",
)


class FolderSchema(NamedTuple):
    """A folder's schema, and where it came from."""

    #: Spark's JSON of the data columns (``StructType.jsonValue()``).
    json: Mapping[str, Any]
    #: Per feature, the fewest and most values in one record: the manifest's; empty if inferred.
    counts: Mapping[str, tuple[int, int]]
    #: ``"Example"``, ``"SequenceExample"`` or ``"ByteArray"``.
    record_type: str
    source: Literal["manifest", "inferred"]
    #: The read options, parsed (``record_type`` is the manifest's when there is one).
    options: InferenceOptions


def refuse_tfds(files: Files, path: str) -> None:
    """Refuses a TFDS version folder, as the jar does: one read of all its shards mixes splits."""
    if not files.isdir(path) or not files.isfile(files.join(path, tfds_dataset.INFO_FILE)):
        return
    raise errors.ArgumentError(
        errors.DATASET_FOLDER,
        f"{path} is a TensorFlow Datasets folder, whose splits' shards lie side by side: read "
        f"one split's shards with a glob, {path.rstrip('/')}/<name>-<split>.tfrecord*",
    )


def read_options(manifest_type: str | None, options: Mapping[str, str] | None) -> InferenceOptions:
    """The read ``options`` parsed, record type ``manifest_type``'s if given; refuses bad ones."""
    given = dict(options or {})
    known = {o.lower() for o in INFERENCE_OPTIONS}
    unknown = sorted(k for k in given if k.lower() not in known)
    if unknown:
        raise errors.invalid_option(unknown[0], str(given[unknown[0]]), INFERENCE_OPTIONS)
    parsed = InferenceOptions.parse(given)
    if manifest_type is None:
        return parsed
    if parsed.record_type != manifest_type and any(k.lower() == "recordtype" for k in given):
        raise errors.invalid_option(
            "recordType", parsed.record_type, [f"{manifest_type} (the folder's manifest)"]
        )
    return dataclasses.replace(parsed, record_type=manifest_type)


def _inferred(
    where: str, paths: Sequence[str], files: Files, parsed: InferenceOptions
) -> FolderSchema:
    schema = infer_schema(paths, parsed, files=files)
    _LOG.info(
        "%s has no valid manifest: its schema is inferred from up to %d records of each of up "
        "to %d files, as the jar infers it",
        where,
        parsed.max_records,
        parsed.max_files,
    )
    return FolderSchema(schema, {}, parsed.record_type, "inferred", parsed)


def schema_of(
    info: DatasetInfo, files: Files, options: Mapping[str, str] | None = None
) -> FolderSchema:
    """The schema of ``info``'s data: its manifest's, or inferred (raising as inference does)."""
    parsed = read_options(info.record_type if info.source == "manifest" else None, options)
    if info.schema_json is not None and info.record_type == parsed.record_type:
        source: Literal["manifest", "inferred"] = info.schema_source or "manifest"
        return FolderSchema(info.schema_json, info.features, parsed.record_type, source, parsed)
    return _inferred(info.path, [f.path for f in info.files], files, parsed)


def folder_schema(
    files: Files, path: str, options: Mapping[str, str] | None = None
) -> FolderSchema:
    """:func:`schema_of` the folder, file or glob ``path``, without counting its records."""
    info = read_manifest(path, files) if files.isdir(path) else None
    if info is not None and info.schema_json is not None:
        return schema_of(info, files, options)
    refuse_tfds(files, path)
    parsed = read_options(None, options)
    return _inferred(path, [f.path for f in list_files_in(path, files)], files, parsed)


def dataset_info(
    path: str | os.PathLike[str],
    *,
    storage_options: Mapping[str, Any] | None = None,
    options: Mapping[str, str] | None = None,
) -> DatasetInfo:
    """The record counts, files and schema of the TFRecord data at ``path``.

    ``path``: a folder (a partitioned table's root too), a file or a glob; local, ``file://``, or an
    fsspec URL (``s3://...``, ``gs://...``; s3fs or gcsfs installed) with fsspec's
    ``storage_options`` (default: credentials from the environment). ``options``: the read options
    of schema inference (:data:`INFERENCE_OPTIONS`). A folder with a valid manifest is answered from
    it (``source == "manifest"``); else its records are counted, checksums checked (``source ==
    "counted"``, ``reason`` says why) and its schema inferred, or None when there is nothing to
    infer from (``reason`` says why).

    >>> import os, tempfile
    >>> from spark_tfrecord import dataset_info
    >>> folder = tempfile.mkdtemp() + "/ids"
    >>> spark.range(5).repartition(2).write.format("tfrecord").save(folder)
    >>> info = dataset_info(folder)
    >>> info.num_records, len(info.files), info.source, info.schema
    (5, 2, 'manifest', 'id BIGINT NOT NULL')
    >>> sorted(n for _, n, _ in info.files)
    [2, 3]
    >>> os.remove(os.path.join(folder, "_tfrecord_manifest.json"))
    >>> info = dataset_info(folder)
    >>> info.num_records, info.source, info.schema, info.schema_source
    (5, 'counted', 'id BIGINT', 'inferred')
    >>> info.reason.endswith("has no _tfrecord_manifest.json")
    True
    """
    fs, path = file_system(os.fspath(path), storage_options)
    info = dataset_info_in(fs, path)
    if info.source == "manifest":
        read_options(info.record_type, options)  # a bad option fails here too
        return info
    try:
        found = schema_of(info, fs, options)
    except (errors.ArgumentError, errors.CorruptFileError) as e:
        if isinstance(e, errors.ArgumentError) and e.condition != errors.CANNOT_INFER_SCHEMA:
            raise  # a bad option
        return dataclasses.replace(info, reason=f"{info.reason}; no schema: {e}")
    return dataclasses.replace(
        info,
        schema=to_ddl(dict(found.json)),
        record_type=found.record_type,
        schema_json=found.json,
        schema_source="inferred",
    )
