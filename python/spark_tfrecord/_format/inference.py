"""Schema inference by sampling, as the jar infers (``TFRecordSchemaInferencer``), in plain Python.

:func:`infer_schema` reads up to ``inferSchemaMaxFiles`` files, spread evenly over the files
sorted by path, and up to ``inferSchemaMaxRecords`` records of each, and decides once, from what
those records hold per feature name, the schema the data source would give them: Spark's JSON
form of a ``StructType`` (a dict, as ``StructType.jsonValue()``). The rules are the jar's
(docs/inference.md):

- kind: int64 → bigint, float → float, bytes → string, or binary when some sampled value is not
  well-formed UTF-8; int64 with float → float; bytes with anything → string (binary by the same
  rule); a feature never seen with a kind → string;
- shape: an array when some record holds more than one value, else a scalar; a SequenceExample's
  feature lists are ``array<array<…>>``, after the context columns;
- columns in the order their features are first met, the files merged in path order;
- ``x/indices``, ``x/values``, ``x/size`` (``vectorLayout=sparse``) one ML vector column ``x``
  (when ``ml_vectors``: the jar's when spark-mllib is on its class path);
- ``x/ragged_flat_values`` with ``x/ragged_row_lengths_0`` … ``_{n-1}`` one column of n+1 nested
  arrays;
- ``inferNesting``: path-like names become struct columns.

>>> import tempfile
>>> from spark_tfrecord._format.inference import infer_schema
>>> folder = tempfile.mkdtemp()
>>> spark.createDataFrame([(1, [0.5, 1.5])], "id long, x array<float>").write.format(
...     "tfrecord").mode("overwrite").save(folder)
>>> import glob
>>> schema = infer_schema(sorted(glob.glob(folder + "/part-*")))
>>> [(f["name"], f["type"]) for f in schema["fields"]]
[('id', 'long'), ('x', {'type': 'array', 'elementType': 'float', 'containsNull': False})]
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from spark_tfrecord import errors
from spark_tfrecord._format.compression import chunks, file_compression, tensorflow_codec
from spark_tfrecord._format.decoder import LIST_READERS
from spark_tfrecord._format.files import Files, LocalFiles
from spark_tfrecord._format.framing import HEADER as _HEADER
from spark_tfrecord._format.framing import MAX_RECORD_BYTES as _MAX_RECORD_BYTES
from spark_tfrecord._format.framing import walk_stream
from spark_tfrecord._format.wire import (
    BYTES,
    FLOAT,
    INT64,
    UNSET,
    MalformedRecord,
    cursor_delimited,
    cursor_error,
    cursor_skip,
    cursor_varint,
)

_LOG = logging.getLogger("spark_tfrecord")

#: The type inference gives each kind (``TypeTable.inferred``), by whether bytes were not UTF-8.
_TYPES = {INT64: "long", FLOAT: "float"}

#: The jar's Spark ML vector type (``VectorUDT``), as ``StructType.jsonValue()`` gives it.
VECTOR_TYPE: Mapping[str, Any] = {
    "type": "udt",
    "class": "org.apache.spark.ml.linalg.VectorUDT",
    "pyClass": "pyspark.ml.linalg.VectorUDT",
    "sqlType": {
        "type": "struct",
        "fields": [
            {"name": "type", "type": "byte", "nullable": False, "metadata": {}},
            {"name": "size", "type": "integer", "nullable": True, "metadata": {}},
            {
                "name": "indices",
                "type": {"type": "array", "elementType": "integer", "containsNull": False},
                "nullable": True,
                "metadata": {},
            },
            {
                "name": "values",
                "type": {"type": "array", "elementType": "double", "containsNull": False},
                "nullable": True,
                "metadata": {},
            },
        ],
    },
}

RECORD_TYPES = ("Example", "SequenceExample", "ByteArray")
#: The column of a ByteArray read (``TFRecordSchema.ByteArrayColumn``).
BYTE_ARRAY_COLUMN = "byteArray"
_RAGGED_FLAT, _RAGGED_LENGTHS = "ragged_flat_values", "ragged_row_lengths_"


@dataclass(frozen=True)
class InferenceOptions:
    """The options inference takes, with the data source's names and defaults (``TFRecordOptions``,
    with Spark's session-free defaults for ``ignoreCorruptFiles`` and ``ignoreMissingFiles``)."""

    record_type: str = "Example"
    #: ``inferSchemaMaxFiles`` (-1 given: no limit).
    max_files: int = 32
    #: ``inferSchemaMaxRecords`` per file (-1 given: no limit).
    max_records: int = 1000
    path_separator: str = "/"
    infer_nesting: bool = False
    ignore_corrupt_files: bool = False
    ignore_missing_files: bool = False
    #: ``compression`` / ``codec``: for files whose name does not say; None: their first bytes.
    compression: str | None = None
    verify_checksums: bool = True
    max_record_bytes: int = _MAX_RECORD_BYTES

    @classmethod
    def parse(cls, options: Mapping[str, str] | None) -> InferenceOptions:
        """The options of a read (names case-insensitive); a bad value raises
        :class:`~spark_tfrecord.errors.ArgumentError` (``TFRECORD_INVALID_OPTION``) as the jar
        does."""
        given = {k.lower(): (k, str(v)) for k, v in (options or {}).items()}

        def get(name: str) -> str | None:
            found = given.get(name.lower())
            return None if found is None else found[1]

        def boolean(name: str, default: bool) -> bool:
            v = get(name)
            if v is None:
                return default
            if v.strip().lower() in ("true", "false"):
                return v.strip().lower() == "true"
            raise errors.invalid_option(name, v, ["true", "false"])

        def positive_or_all(name: str, default: int) -> int:
            v = get(name)
            if v is None:
                return default
            n = _int(v)
            if n == -1:
                return 2**31 - 1
            if n is not None and n > 0:
                return n
            raise errors.invalid_option(name, v, ["a positive integer", "-1 (no limit)"])

        record_type = "Example"
        v = get("recordType")
        if v is not None:
            match = [t for t in RECORD_TYPES if t.lower() == v.strip().lower()]
            if not match:
                raise errors.invalid_option("recordType", v, RECORD_TYPES)
            record_type = match[0]
        separator = get("pathSeparator")
        if separator is not None and not separator:
            raise errors.invalid_option(
                "pathSeparator", separator, ["a non-empty string (default /)"]
            )
        max_bytes = _MAX_RECORD_BYTES
        v = get("maxRecordBytes")
        if v is not None:
            n = _int(v)
            if n is None or not 0 < n <= _MAX_RECORD_BYTES:
                raise errors.invalid_option(
                    "maxRecordBytes", v, [f"an integer from 1 to {_MAX_RECORD_BYTES}"]
                )
            max_bytes = n
        compression = None
        for name in ("compression", "codec"):
            v = get(name)
            if v is not None:
                compression = tensorflow_codec(v)
                if compression is None:
                    raise errors.invalid_option(name, v, ["none", "gzip", "deflate", "zlib"])
                break
        return cls(
            record_type=record_type,
            max_files=positive_or_all("inferSchemaMaxFiles", 32),
            max_records=positive_or_all("inferSchemaMaxRecords", 1000),
            path_separator=separator or "/",
            infer_nesting=boolean("inferNesting", False),
            ignore_corrupt_files=boolean("ignoreCorruptFiles", False),
            ignore_missing_files=boolean("ignoreMissingFiles", False),
            compression=None if compression == "none" else compression,
            verify_checksums=boolean("verifyChecksums", True),
            max_record_bytes=max_bytes,
        )


def _int(v: str) -> int | None:
    """Java's ``Integer.parseInt`` of the trimmed text: None when not an int."""
    v = v.strip()
    if not re.fullmatch(r"[+-]?[0-9]+", v):
        return None
    n = int(v)
    return n if -(2**31) <= n < 2**31 else None


# --- reading records ----------------------------------------------------------------------------


def records(
    path: str,
    files: Files,
    *,
    compression: str | None = None,
    verify_checksums: bool = True,
    max_record_bytes: int = _MAX_RECORD_BYTES,
) -> Iterator[tuple[int, bytes]]:
    """The records of one file in order, as (offset in the decompressed stream, data), each
    length checked (and, with ``verify_checksums``, its data's CRC). Damage raises
    :class:`~spark_tfrecord.errors.CorruptFileError` naming the file and offset."""
    codec = file_compression(path, compression, files.read_range(path, 0, _HEADER))
    file_size = files.size(path) if codec == "none" else None
    for offset, data in walk_stream(
        chunks(path, codec, files),
        path,
        file_size,
        verify_checksums=verify_checksums,
        max_record_bytes=max_record_bytes,
    ):
        yield offset, bytes(data)


# --- walking records ----------------------------------------------------------------------------
# The jar's WireCursor (wire.py's cursor_* functions), with its messages and positions (a byte of
# the record), so that a malformed record is reported as the jar reports it.


class _Stats:
    """What the sample says of one feature (as a context feature, or as a feature list)."""

    __slots__ = ("binary", "kind", "max_values")

    def __init__(self) -> None:
        self.kind = UNSET
        self.max_values = 0
        #: Whether a bytes value was met that is not well-formed UTF-8.
        self.binary = False

    def merge(self, other: _Stats) -> None:
        self.kind = merge_kinds(self.kind, other.kind)
        self.max_values = max(self.max_values, other.max_values)
        self.binary = self.binary or other.binary

    def data_type(self) -> str:
        return _TYPES.get(self.kind) or ("binary" if self.binary else "string")


def merge_kinds(a: int, b: int) -> int:
    """int64 + float → float; bytes + anything → bytes; unset takes the other."""
    if a == UNSET:
        return b
    if b == UNSET or a == b:
        return a
    return BYTES if BYTES in (a, b) else FLOAT


class _Features:
    """Feature names numbered in the order they are first met, with their statistics as a
    context feature and as a feature list (None until met as one)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.stats: list[_Stats | None] = []
        self.list_stats: list[_Stats | None] = []
        self.numbers: dict[bytes | str, int] = {}

    def number(self, name: str) -> int:
        n = self.numbers.get(name)
        if n is None:
            n = self.numbers[name] = len(self.names)
            self.names.append(name)
            self.stats.append(None)
            self.list_stats.append(None)
        return n

    def context(self, key: bytes) -> _Stats:
        n = self.numbers.get(key)
        if n is None:
            n = self.number(key.decode("utf-8", "replace"))
            self.numbers[key] = n
        s = self.stats[n]
        if s is None:
            s = self.stats[n] = _Stats()
        return s

    def feature_list(self, key: bytes) -> _Stats:
        n = self.numbers.get(key)
        if n is None:
            n = self.number(key.decode("utf-8", "replace"))
            self.numbers[key] = n
        s = self.list_stats[n]
        if s is None:
            s = self.list_stats[n] = _Stats()
        return s

    def merge(self, other: _Features) -> None:
        """Adds what ``other`` knows, numbering the names it meets first after these."""
        for i, name in enumerate(other.names):
            n = self.number(name)
            theirs, lists = other.stats[i], other.list_stats[i]
            if theirs is not None:
                mine = self.stats[n]
                if mine is None:
                    mine = self.stats[n] = _Stats()
                mine.merge(theirs)
            if lists is not None:
                mine = self.list_stats[n]
                if mine is None:
                    mine = self.list_stats[n] = _Stats()
                mine.merge(lists)


def feature_lists(buf: bytes, start: int, end: int) -> tuple[int, list[Any]]:
    """A ``Feature``'s kind (the last of its oneof fields) and the lists of that kind since the
    last switch, as the jar's ``ExampleWalker.readFeature`` reads them (each list's values)."""
    kind = UNSET
    lists: list[Any] = []
    pos = start
    while pos < end:
        tag_at = pos
        tag, pos = cursor_varint(buf, pos, end)
        field = tag >> 3
        if 1 <= field <= 3:
            if tag & 7 != 2:
                raise cursor_error(f"Feature field {field} has wire type {tag & 7}", tag_at)
            lstart, pos = cursor_delimited(buf, pos, end)
            if field != kind:
                kind, lists = field, []
            lists.append(LIST_READERS[field](buf, lstart, pos))
        else:
            pos = cursor_skip(buf, pos, end, tag & 7)
    return kind, lists


def _is_utf8(values: Sequence[bytes]) -> bool:
    try:
        for v in values:
            v.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _note(s: _Stats, kind: int, lists: list[Any], count: bool) -> None:
    s.kind = merge_kinds(s.kind, kind)
    if count:
        s.max_values = max(s.max_values, sum(len(v) for v in lists))
    if kind == BYTES and not s.binary and not all(_is_utf8(v) for v in lists):
        s.binary = True


def map_entries(buf: bytes, pos: int, end: int) -> Iterator[tuple[bytes, int, int]]:
    """The map entries of a ``Features`` / ``FeatureLists`` message: (key, value start, end),
    key and value in either order or missing (then empty), other fields skipped."""
    while pos < end:
        tag, pos = cursor_varint(buf, pos, end)
        if tag != 0x0A:
            pos = cursor_skip(buf, pos, end, tag & 7)
            continue
        epos, eend = cursor_delimited(buf, pos, end)
        pos = eend
        key, vstart, vend = b"", eend, eend
        while epos < eend:
            etag, epos = cursor_varint(buf, epos, eend)
            if etag == 0x0A:
                kstart, epos = cursor_delimited(buf, epos, eend)
                key = buf[kstart:epos]
            elif etag == 0x12:
                vstart, epos = cursor_delimited(buf, epos, eend)
                vend = epos
            else:
                epos = cursor_skip(buf, epos, eend, etag & 7)
        yield key, vstart, vend


def _walk(buf: bytes, features: _Features, sequence: bool) -> None:
    """Adds what one Example (or SequenceExample) says of its features to ``features``."""
    pos, end = 0, len(buf)
    while pos < end:
        tag, pos = cursor_varint(buf, pos, end)
        if tag == 0x0A or (sequence and tag == 0x12):
            mstart, pos = cursor_delimited(buf, pos, end)
            if tag == 0x0A:
                for key, vstart, vend in map_entries(buf, mstart, pos):
                    kind, lists = feature_lists(buf, vstart, vend)
                    _note(features.context(key), kind, lists, True)
            else:
                for key, vstart, vend in map_entries(buf, mstart, pos):
                    s = features.feature_list(key)
                    spos = vstart
                    while spos < vend:
                        stag, spos = cursor_varint(buf, spos, vend)
                        if stag == 0x0A:
                            fstart, spos = cursor_delimited(buf, spos, vend)
                            kind, lists = feature_lists(buf, fstart, spos)
                            _note(s, kind, lists, False)
                        else:
                            spos = cursor_skip(buf, spos, vend, stag & 7)
        else:
            pos = cursor_skip(buf, pos, end, tag & 7)


@dataclass
class _FileSample:
    features: _Features
    records: int


def _read_sample(path: str, files: Files, options: InferenceOptions, sequence: bool) -> _FileSample:
    """What the first ``inferSchemaMaxRecords`` records of one file say of their features."""
    features = _Features()
    n = 0
    what = "tf.train.SequenceExample" if sequence else "tf.train.Example"
    try:
        for offset, data in records(
            path,
            files,
            compression=options.compression,
            verify_checksums=options.verify_checksums,
            max_record_bytes=options.max_record_bytes,
        ):
            if n >= options.max_records:
                break
            try:
                _walk(data, features, sequence)
            except (MalformedRecord, IndexError) as e:
                reason = getattr(e, "reason", "a field runs past the end of the record")
                raise errors.CorruptFileError(
                    errors.MALFORMED_RECORD, f"Malformed {what} ({reason})", path, offset
                ) from None
            n += 1
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


# --- the schema ---------------------------------------------------------------------------------


def _array(element: Any) -> dict[str, Any]:
    return {"type": "array", "elementType": element, "containsNull": False}


def _field(name: str, data_type: Any) -> dict[str, Any]:
    return {"name": name, "type": data_type, "nullable": True, "metadata": {}}


def _cannot_infer(reason: str) -> errors.ArgumentError:
    return errors.ArgumentError(errors.CANNOT_INFER_SCHEMA, reason)


def infer_schema(
    paths: Sequence[str],
    options: Mapping[str, str] | InferenceOptions | None = None,
    *,
    files: Files | None = None,
    ml_vectors: bool = True,
) -> dict[str, Any]:
    """The schema the data source infers for the data files ``paths`` (listed as Spark lists
    them: no partition columns, no TFDS handling), as ``StructType.jsonValue()``.

    ``options`` are the read's (``recordType``, ``inferSchemaMaxFiles``,
    ``inferSchemaMaxRecords``, ``pathSeparator``, ``inferNesting``, ``compression``,
    ``ignoreCorruptFiles``, ``ignoreMissingFiles``, ``verifyChecksums``, ``maxRecordBytes``).
    ``ml_vectors``: group sparse-vector features into Spark ML's vector type, as the jar does
    when spark-mllib is on its class path. Raises
    :class:`~spark_tfrecord.errors.ArgumentError` (``TFRECORD_CANNOT_INFER_SCHEMA``) when there
    is nothing to infer from, :class:`~spark_tfrecord.errors.CorruptFileError` for a damaged or
    malformed record.
    """
    parsed = options if isinstance(options, InferenceOptions) else InferenceOptions.parse(options)
    if parsed.record_type == "ByteArray":
        return {
            "type": "struct",
            "fields": [
                {"name": BYTE_ARRAY_COLUMN, "type": "binary", "nullable": False, "metadata": {}}
            ],
        }
    fs = files if files is not None else LocalFiles()
    sequence = parsed.record_type == "SequenceExample"
    sample = sample_files(paths, parsed.max_files)
    samples = _read_in_parallel(sample, lambda p: _read_sample(p, fs, parsed, sequence), fs)
    merged = _Features()
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
        what = (
            "there are no files"
            if not paths
            else f"the {n} records read from {len(sample)} of {len(paths)} files have no features"
        )
        raise _cannot_infer(
            f"Cannot infer a TFRecord schema: {what}. Give the schema with .schema(...), or "
            "point the reader at files that hold tf.train.Example records."
        )
    separator = parsed.path_separator
    context_stats = {names[i]: (i, s) for i, s in enumerate(stats) if s is not None}
    vectors, vector_parts = (
        _sparse_vectors(names, context_stats, separator) if ml_vectors else ({}, set())
    )
    lists, list_parts = _ragged_lists(names, context_stats, separator)
    fields: list[dict[str, Any]] = []
    for i, context in enumerate(stats):
        if context is None:
            continue
        column = vectors.get(i) or lists.get(i)
        if column is not None:
            fields.append(column)
        elif i not in vector_parts and i not in list_parts:
            data_type = context.data_type()
            many = context.max_values > 1
            fields.append(_field(names[i], _array(data_type) if many else data_type))
    for i, steps in enumerate(list_stats):
        if steps is not None:
            fields.append(_field(names[i], _array(_array(steps.data_type()))))
    if parsed.infer_nesting:
        return _nest(fields, separator)
    return {"type": "struct", "fields": fields}


def _read_in_parallel(
    sample: list[str], read: Callable[[str], _FileSample], files: Files
) -> list[_FileSample]:
    """The samples of the files, in their order: on an object store read on up to 8 threads
    (most of the time is waiting), as the jar reads them; the first failure in that order."""
    threads = min(len(sample), 8, os.cpu_count() or 1)
    if not files.remote or threads <= 1:
        return [read(p) for p in sample]
    with ThreadPoolExecutor(threads, thread_name_prefix="tfrecord-schema-inference") as pool:
        return list(pool.map(read, sample))


def _sparse_vectors(
    names: list[str], stats: dict[str, tuple[int, _Stats]], separator: str
) -> tuple[dict[int, dict[str, Any]], set[int]]:
    """The jar's ``sparseVectors``: each vector column by the number of its first part, and the
    numbers of every part."""
    suffix = separator + "size"
    columns: dict[int, dict[str, Any]] = {}
    parts: set[int] = set()
    for name, (_, _s) in stats.items():
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
            columns[min(ix, vx, sx)] = _field(x, dict(VECTOR_TYPE))
            parts.update((ix, vx, sx))
    return columns, parts


def _ragged_lists(
    names: list[str], stats: dict[str, tuple[int, _Stats]], separator: str
) -> tuple[dict[int, dict[str, Any]], set[int]]:
    """The jar's ``raggedLists``: each list-of-lists column by the number of its first part, and
    the numbers of every part; a set with a gap in its levels is logged and left alone."""
    suffix = separator + _RAGGED_FLAT
    columns: dict[int, dict[str, Any]] = {}
    parts: set[int] = set()
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
        columns[min([flat_at, *(i for i, _ in lengths)])] = _field(x, data_type)
        parts.update([flat_at, *(i for i, _ in lengths)])
    return columns, parts


class _Node:
    """A struct of ``inferNesting``: children by name, a field or a node; its first feature."""

    def __init__(self, first: str) -> None:
        self.children: dict[str, dict[str, Any] | _Node] = {}
        self.first = first

    def struct(self) -> dict[str, Any]:
        return {
            "type": "struct",
            "fields": [
                c if isinstance(c, dict) else _field(name, c.struct())
                for name, c in self.children.items()
            ],
        }


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
    """``data_type`` with every field nullable and every array able to hold nulls: what Spark's
    ``DataType.asNullable`` makes of a file source's inferred schema (``spark.read…schema``
    shows that form; the inferencer's own has ``containsNull`` false)."""
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
