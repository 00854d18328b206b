"""What a TFRecord folder holds: its manifest's counts if it matches the folder, else counted."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from spark_tfrecord._format.files.files import Files, LocalFiles, hidden, is_glob
from spark_tfrecord._format.frames.compression import chunks, detect_compression
from spark_tfrecord._format.frames.framing import walk_stream

_LOCAL = LocalFiles()

#: The manifest's name, at the root of the folder a write wrote (of a partitioned table too).
MANIFEST_NAME = "_tfrecord_manifest.json"
#: The manifest's ``format`` and the ``version`` this reader knows.
MANIFEST_FORMAT, MANIFEST_VERSION = "spark-tfrecord-manifest", 1


# --- what dataset_info returns --------------------------------------------------------------


class _FileFields(NamedTuple):
    path: str
    num_records: int
    num_bytes: int


class FileInfo(_FileFields):
    """One data file: ``(path, num_records, num_bytes)``, a named tuple.

    ``path`` is the file's full local path; ``num_bytes`` its size on disk (compressed).
    """

    def __new__(
        cls, path: str, num_records: int, num_bytes: int, compression: str | None = None
    ) -> FileInfo:
        self = super().__new__(cls, path, num_records, num_bytes)
        # Not a field, so that the tuple unpacks as three values; None: look at the file.
        self.__dict__["_compression"] = compression
        return self

    @property
    def compression(self) -> str:
        """``"none"``, ``"gzip"`` or ``"deflate"`` (TensorFlow's ``"ZLIB"``), or another Hadoop
        codec's name: the manifest's entry, else as the reader decides (extension, first
        bytes)."""
        known: str | None = self.__dict__.get("_compression")
        return known if known is not None else detect_compression(self.path)


@dataclass(frozen=True)
class DatasetInfo:
    """What :func:`dataset_info` found: counts, files and (from a manifest) the schema."""

    #: The path as given.
    path: str
    #: The number of records in all the files.
    num_records: int
    #: The data files, sorted by their path relative to the folder.
    files: tuple[FileInfo, ...]
    #: The data columns' Spark DDL (``StructType.toDDL``), no partition columns; None when counted.
    schema: str | None
    #: ``"Example"``, ``"SequenceExample"`` or ``"ByteArray"``; None when counted.
    record_type: str | None
    #: The ``partitionBy`` columns, in order (when counted: from the ``name=value`` folders).
    partition_columns: tuple[str, ...]
    #: Per feature key: the fewest and most values in one record (empty when counted).
    features: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: SequenceExample feature lists: the smallest and largest number of values in one step.
    feature_lists: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: Spark's StructType JSON of the data columns (keeps metadata); None when counted.
    schema_json: Mapping[str, Any] | None = None
    #: ``"manifest"`` or ``"counted"`` (from the records' framing).
    source: Literal["manifest", "counted"] = "manifest"
    #: When counted: why (no manifest, or how it differs), and why there is no schema, if none.
    reason: str | None = None
    #: Where the schema came from: ``"manifest"``, ``"inferred"`` from the records as the jar
    #: infers, or None when there is none.
    schema_source: Literal["manifest", "inferred"] | None = None

    @property
    def num_bytes(self) -> int:
        """The files' total size on disk."""
        return sum(f.num_bytes for f in self.files)


# --- the manifest ---------------------------------------------------------------------------


class _Stale(Exception):
    """The manifest is missing, unreadable or differs from the folder: the message says how."""


def _min_max(counts: Any, key: str) -> Mapping[str, tuple[int, int]]:
    if not isinstance(counts, dict):
        raise _Stale(f"its {key!r} is not an object")
    return {k: (int(v["min"]), int(v["max"])) for k, v in counts.items()}


def _read_manifest(folder: str, files: Files = _LOCAL) -> DatasetInfo:
    """The manifest of ``folder``, checked against one listing of it; raises :class:`_Stale`."""
    manifest_path = files.join(folder, MANIFEST_NAME)
    try:
        text = files.read_bytes(manifest_path)
    except (FileNotFoundError, IsADirectoryError):
        raise _Stale(f"{folder} has no {MANIFEST_NAME}") from None
    try:
        m = json.loads(text.decode("utf-8"))
    except (OSError, ValueError) as e:
        raise _Stale(f"{manifest_path} is not readable JSON ({e})") from None
    if not isinstance(m, dict) or m.get("format") != MANIFEST_FORMAT:
        raise _Stale(f"{manifest_path} is not a {MANIFEST_FORMAT}")
    if m.get("version") != MANIFEST_VERSION:
        raise _Stale(
            f"{manifest_path} has version {m.get('version')!r}; this reader knows "
            f"version {MANIFEST_VERSION}"
        )
    try:
        listed = {e["path"]: (int(e["num_records"]), int(e["num_bytes"])) for e in m["files"]}
        compressions = {e["path"]: str(e.get("compression", "none")) for e in m["files"]}
        features = _min_max(m.get("features", {}), "features")
        feature_lists = _min_max(m.get("feature_lists", {}), "feature_lists")
        num_records = int(m["num_records"])
        schema_json = m.get("schema_json")
        record_type, schema = str(m["record_type"]), str(m["schema"])
        partition_columns = tuple(str(c) for c in m["partition_columns"])
    except (KeyError, TypeError, ValueError) as e:
        raise _Stale(f"{manifest_path} is malformed ({type(e).__name__}: {e})") from None
    on_disk = dict(files.list_data(folder))
    unlisted = sorted(on_disk.keys() - listed.keys())
    if unlisted:
        raise _Stale(f"data file {unlisted[0]} is not in {MANIFEST_NAME}")
    missing = sorted(listed.keys() - on_disk.keys())
    if missing:
        raise _Stale(f"{MANIFEST_NAME} names {missing[0]}, which is not there")
    for rel, (_, size) in sorted(listed.items()):
        if on_disk[rel] != size:
            raise _Stale(f"{rel} has {on_disk[rel]} bytes, {MANIFEST_NAME} says {size}")
    if num_records != sum(r for r, _ in listed.values()):
        raise _Stale(f"{MANIFEST_NAME}'s num_records is not the sum of its files' records")
    return DatasetInfo(
        path=folder,
        num_records=num_records,
        files=tuple(
            FileInfo(files.join(folder, rel), records, size, compressions[rel])
            for rel, (records, size) in sorted(listed.items())
        ),
        schema=schema,
        record_type=record_type,
        partition_columns=partition_columns,
        features=features,
        feature_lists=feature_lists,
        schema_json=schema_json if isinstance(schema_json, dict) else None,
        schema_source="manifest" if isinstance(schema_json, dict) else None,
    )


def read_manifest(folder: str, files: Files = _LOCAL) -> DatasetInfo | None:
    """The valid manifest of ``folder`` (on ``files``), or None (none, or not matching it)."""
    try:
        return _read_manifest(folder, files)
    except _Stale:
        return None


# --- counting from the framing ----------------------------------------------------------------


def count_records(path: str, compression: str | None = None, files: Files = _LOCAL) -> int:
    """The number of records in the file ``path``, all checked; damage raises CorruptFileError."""
    if compression is None:
        compression = detect_compression(path, files)
    # Uncompressed, the stream is the file: a length running past its end is known at once.
    file_size = files.size(path) if compression == "none" else None
    return sum(1 for _ in walk_stream(chunks(path, compression, files), path, file_size))


def _count(path: str, reason: str, fs: Files) -> DatasetInfo:
    partition_columns: tuple[str, ...] = ()
    if fs.isdir(path):
        listed = fs.list_data(path)
        files = [(fs.join(path, rel), size) for rel, size in listed]
        # the ``name=value`` folder names of the first file, when every folder of it is one
        folders = listed[0][0].split("/")[:-1] if listed else []
        if all("=" in f for f in folders):
            partition_columns = tuple(f.split("=", 1)[0] for f in folders)
    elif is_glob(path):
        files = []
        for match in fs.glob(path):
            if fs.isdir(match):
                files += [(fs.join(match, rel), size) for rel, size in fs.list_data(match)]
            elif not hidden(match.rstrip("/").rsplit("/", 1)[-1]):
                files.append((match, fs.size(match)))
        if not files:
            raise FileNotFoundError(f"no data files match {path}")
    elif fs.isfile(path):
        files = [(path, fs.size(path))]
    else:
        raise FileNotFoundError(f"no such file or directory: {path}")
    infos = []
    for file, size in files:
        compression = detect_compression(file, fs)
        infos.append(FileInfo(file, count_records(file, compression, fs), size, compression))
    return DatasetInfo(
        path=path,
        num_records=sum(f.num_records for f in infos),
        files=tuple(infos),
        schema=None,
        record_type=None,
        partition_columns=partition_columns,
        source="counted",
        reason=reason,
    )


def dataset_info_in(fs: Files, path: str) -> DatasetInfo:
    """``path``'s counts and files on ``fs``: its manifest's, else counted, with no schema."""
    if fs.isdir(path):
        try:
            return _read_manifest(path, fs)
        except _Stale as e:
            return _count(path, f"counted from the records: {e}", fs)
    kind = "a file" if fs.isfile(path) else "a glob"
    return _count(path, f"counted from the records: {kind}, not a folder with a manifest", fs)
