"""The first records of TFRecord files as the rows of ``spark-tfrecord inspect`` (the jar's)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from spark_tfrecord import errors
from spark_tfrecord._format.columns.column_errors import ColumnError
from spark_tfrecord._format.columns.feature_paths import (
    reject_maps,
    supports,
    unsupported,
    validate,
)
from spark_tfrecord._format.columns.json_values import json_bytes, json_value
from spark_tfrecord._format.columns.record_values import exact_layout, zip_elements
from spark_tfrecord._format.columns.schema import (
    depth,
    innermost,
    is_array,
    is_struct,
    is_vector,
    type_string,
)
from spark_tfrecord._format.columns.values import Ragged
from spark_tfrecord._format.entries.wire import MalformedRecord
from spark_tfrecord._format.files.files import Files, LocalFiles
from spark_tfrecord._format.frames.encode_errors import EncodeError
from spark_tfrecord._format.frames.file_records import records
from spark_tfrecord._format.frames.read_options import InferenceOptions

#: A column's JSON value (per element for an array of structs' field) from a record's values.
Read = Callable[[Mapping[str, Any]], Any]


def _nested_column(t: Any) -> bool:
    """A struct or an array of structs (the jar's ``FeaturePaths.isNested``)."""
    return is_struct(t) or (is_array(t) and is_struct(t["elementType"]))


def row_decoder(
    schema: Mapping[str, Any], record_type: str = "Example", separator: str = "/"
) -> Callable[[bytes], dict[str, Any]]:
    """The record-to-row function for ``schema``; ``ArgumentError`` for one the jar refuses."""
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
    fields = [
        (f["name"], _column(f["type"], f["name"], f["name"], separator, False))
        for f in schema["fields"]
    ]
    try:
        layout = exact_layout(
            schema, separator, "SequenceExample" if sequence else "Example", text_bytes=True
        )
    except errors.ArgumentError:
        raise
    except (ValueError, KeyError) as e:  # a type no feature holds
        raise errors.ArgumentError(errors.UNSUPPORTED_TYPE, str(e)) from None

    def decode(data: bytes) -> dict[str, Any]:
        values = layout.record(data)
        return {name: read(values) for name, read in fields}

    return decode


def _column(t: Any, key: str, column: str, separator: str, element: bool) -> Read:
    """The reader of column type ``t`` at feature path ``key`` (``element``: per element)."""
    if is_struct(t):
        parts: list[tuple[str, Read]] = []
        for f in t["fields"]:
            name = f["name"]
            read = _column(
                f["type"], key + separator + name, f"{column}.{name}", separator, element
            )
            parts.append((name, read))
        return _struct(parts, element)
    if is_array(t) and is_struct(t["elementType"]):
        return _column(t["elementType"], key, column, separator, True)
    if is_vector(t):
        return lambda values: _vector(values[key])
    leaf = innermost(t)
    shown = json_value(leaf) if isinstance(leaf, str) else None
    if shown is None:
        raise errors.ArgumentError(
            errors.UNSUPPORTED_TYPE, f"column {column!r} of type {type_string(t, simple=False)}"
        )
    levels = depth(t)

    def value(values: Mapping[str, Any]) -> Any:
        found = values[key]
        if found is None:
            return None
        if element:  # one item per element (a list leaf's lists; a step's value, or None)
            items = found.to_list() if isinstance(found, Ragged) else list(found)
            return [_json(item, shown, levels) for item in items]
        return _json(found.to_list() if isinstance(found, Ragged) else found, shown, levels)

    return value


def _struct(parts: list[tuple[str, Read]], element: bool) -> Read:
    """A struct: null when none of its fields has a value; ``element``: an array of structs,
    element i holds item i of each field's list (None if no field is)."""

    def struct(values: Mapping[str, Any]) -> Any:
        row = [(name, read(values)) for name, read in parts]
        if element:
            return zip_elements(row)
        return None if all(v is None for _, v in row) else dict(row)

    return struct


def _json(value: Any, shown: Callable[[Any], Any], levels: int) -> Any:
    """``value`` (``levels`` lists deep) with each value shown as JSON (a None stays None)."""
    if value is None:
        return None
    if levels == 0:
        return shown(value)
    return [_json(v, shown, levels - 1) for v in value]


def _vector(found: Any) -> Any:
    """A Spark vector as JSON: ``VectorUDT``'s row, its numbers as Python's."""
    if found is None:
        return None
    indices = found["indices"]
    return {
        "type": found["type"],
        "size": found["size"],
        "indices": None if indices is None else [int(i) for i in indices],
        "values": [float(v) for v in found["values"]],
    }


def head(
    paths: Sequence[str],
    schema: Mapping[str, Any],
    n: int,
    *,
    record_type: str = "Example",
    options: Mapping[str, str] | None = None,
    files: Files | None = None,
) -> Iterator[dict[str, Any]]:
    """The first ``n`` records of the files as rows; ``ArgumentError`` (before any read) for a
    schema the jar refuses, ``CorruptFileError`` naming file, offset (and column) for a bad value.
    """
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
            except MalformedRecord as e:
                raise errors.CorruptFileError(
                    errors.MALFORMED_RECORD, f"Malformed {what} ({e.reason})", path, offset
                ) from None
            except ColumnError as e:
                raise errors.CorruptFileError(
                    errors.DATA_MISMATCH, str(e), path, offset, e.column
                ) from None
            yield path, row
            shown += 1
            if shown >= n:
                return
