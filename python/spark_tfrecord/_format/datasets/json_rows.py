"""The first records of TFRecord files as the rows ``spark-tfrecord inspect`` prints, in plain
Python: what the jar's ``TFRecordInspector.readRecordsJson`` gives (``JsonText``), decided once
per schema: :func:`row_decoder` checks the schema as the jar does, builds one reader per column
(:mod:`spark_tfrecord._format.columns.json_readers`) and walks each record's features for them;
:func:`head` reads the files' first records (:mod:`spark_tfrecord._format.frames.file_records`).

Each row is a dict of JSON values, as ``json.loads`` reads the jar's text
(:mod:`spark_tfrecord._format.columns.json_values`); columns are read as the data source reads them
(docs/types.md). A value that does not fit its column fails with the jar's words, naming the
file, the offset and the column. A map column (which no writer, manifest or TFDS folder gives)
is refused as the data source refuses it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from spark_tfrecord import errors
from spark_tfrecord._format.columns.feature_paths import (
    reject_maps,
    supports,
    unsupported,
    validate,
)
from spark_tfrecord._format.columns.json_errors import Mismatch, Unsupported
from spark_tfrecord._format.columns.json_readers import reader
from spark_tfrecord._format.columns.json_values import json_bytes
from spark_tfrecord._format.columns.schema import depth, is_array, is_struct
from spark_tfrecord._format.entries.walk import CONTEXT, entries, feature, steps
from spark_tfrecord._format.entries.wire import MalformedRecord
from spark_tfrecord._format.files.files import Files, LocalFiles
from spark_tfrecord._format.frames.encode_errors import EncodeError
from spark_tfrecord._format.frames.file_records import records
from spark_tfrecord._format.frames.read_options import InferenceOptions


def _nested_column(t: Any) -> bool:
    """A struct or an array of structs (the jar's ``FeaturePaths.isNested``)."""
    return is_struct(t) or (is_array(t) and is_struct(t["elementType"]))


def row_decoder(
    schema: Mapping[str, Any], record_type: str = "Example", separator: str = "/"
) -> Callable[[bytes], dict[str, Any]]:
    """The function that turns one record into its row, decided once for ``schema`` (Spark's
    JSON form of a ``StructType``); :class:`~spark_tfrecord.errors.ArgumentError`, with the
    jar's condition, for a schema the data source does not read (a map, a vector in an array
    of structs, lists deeper than a SequenceExample holds...)."""
    if record_type == "ByteArray":
        names = [f["name"] for f in schema["fields"]]
        return lambda data: {n: json_bytes(data) for n in names}
    sequence = record_type == "SequenceExample"
    try:
        if any(_nested_column(f["type"]) for f in schema["fields"]):
            # A nested schema: the jar checks its features first (FeaturePaths.leaves).
            validate(schema, record_type, separator, sparse_vectors=False)
        else:
            reject_maps(schema, record_type)
            for f in schema["fields"]:
                if not supports(f["type"]) or (sequence and depth(f["type"]) > 2):
                    raise unsupported(f["name"], f["type"], record_type)
    except EncodeError as e:
        rest = {k: v for k, v in e.parameters.items() if k != "reason"}
        raise errors.ArgumentError(e.condition, e.reason, **rest) from None
    try:
        readers = [
            (
                f["name"],
                reader(f["type"], f["name"], f["name"], separator, sequence, f.get("metadata", {}))[
                    0
                ],
            )
            for f in schema["fields"]
        ]
    except Unsupported as e:
        raise errors.ArgumentError(errors.UNSUPPORTED_TYPE, str(e)) from None

    def decode(data: bytes) -> dict[str, Any]:
        feats: dict[str, tuple[int, list[Any]]] = {}
        lists: dict[str, list[tuple[int, list[Any]]]] = {}
        _walk(data, feats, lists, sequence)
        return {name: r(feats, lists) for name, r in readers}

    return decode


def _walk(
    buf: bytes,
    feats: dict[str, tuple[int, list[Any]]],
    lists: dict[str, list[tuple[int, list[Any]]]],
    sequence: bool,
) -> None:
    for field, key, start, end in entries(buf, sequence):
        name = key.decode("utf-8", "replace")
        if field == CONTEXT:
            feats[name] = feature(buf, start, end)
        else:
            lists[name] = [feature(buf, a, b) for a, b in steps(buf, start, end)]


def head(
    paths: Sequence[str],
    schema: Mapping[str, Any],
    n: int,
    *,
    record_type: str = "Example",
    options: Mapping[str, str] | None = None,
    files: Files | None = None,
) -> Iterator[dict[str, Any]]:
    """The first ``n`` records of the files as rows (the jar's ``readRecordsJson``).
    :class:`~spark_tfrecord.errors.ArgumentError` (before any file is read) for a schema the jar
    refuses; a damaged or malformed record, or a value that does not fit its column, raises
    :class:`~spark_tfrecord.errors.CorruptFileError` naming the file, the offset (and column)."""
    for _, row in head_of_files(
        paths, schema, n, record_type=record_type, options=options, files=files
    ):
        yield row


def head_of_files(
    paths: Sequence[str],
    schema: Mapping[str, Any],
    n: int,
    *,
    record_type: str = "Example",
    options: Mapping[str, str] | None = None,
    files: Files | None = None,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """:func:`head`'s rows, each with the file it comes from."""
    parsed = InferenceOptions.parse(options)
    decode = row_decoder(schema, record_type, parsed.path_separator)
    fs = files if files is not None else LocalFiles()
    what = "tf.train.SequenceExample" if record_type == "SequenceExample" else "tf.train.Example"
    shown = 0
    for path in paths:
        if shown >= n:
            return
        for offset, data in records(
            path,
            fs,
            compression=parsed.compression,
            verify_checksums=parsed.verify_checksums,
            max_record_bytes=parsed.max_record_bytes,
        ):
            try:
                row = decode(data)
            except (MalformedRecord, IndexError) as e:
                reason = getattr(e, "reason", "a field runs past the end of the record")
                raise errors.CorruptFileError(
                    errors.MALFORMED_RECORD, f"Malformed {what} ({reason})", path, offset
                ) from None
            except Mismatch as e:
                raise errors.CorruptFileError(
                    errors.DATA_MISMATCH, e.message, path, offset, e.column
                ) from None
            yield path, row
            shown += 1
            if shown >= n:
                return
