"""What a TFRecord folder holds, in plain Python: no Spark, no JVM, no TensorFlow.

Every ``format("tfrecord")`` write leaves ``_tfrecord_manifest.json`` at the root of its folder:
the record type, the schema, and per data file its record count and size.
:func:`dataset_info` reads it after one listing of the folder, and trusts it only when the data
files on disk are exactly the ones it names, with the same sizes. Otherwise (a folder written by
TensorFlow, a job killed mid-commit, a file added by another tool) it counts the records from
their framing and says so in :attr:`DatasetInfo.reason`.

Counting reads every byte: each record's length and both of its CRC32C checksums are checked, as
the data source does, and gzip / ZLIB files are decompressed as a stream. With the ``crc32c`` or
``google-crc32c`` package installed (optional, used when importable) it ran at about 200 MB/s of
records (70 MB/s gzipped); without either the checksums are computed in pure Python, at about
4 MB/s (a 50 MB file of 1 KB records on a busy 2-core machine: benchmarks/count_records.py).
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from spark_tfrecord import errors
from spark_tfrecord._format.files import Files, LocalFiles, file_system, hidden, is_url
from spark_tfrecord._format.files import local_path as _local

_LOCAL = LocalFiles()

#: The manifest's name, at the root of the folder a write wrote (of a partitioned table too).
MANIFEST_NAME = "_tfrecord_manifest.json"
#: The manifest's ``format`` and the ``version`` this reader knows.
MANIFEST_FORMAT, MANIFEST_VERSION = "spark-tfrecord-manifest", 1

_HEADER, _FOOTER = 12, 4
#: How much of a file is read (or decompressed) at a time while counting.
_CHUNK = 1 << 20
_MASK_DELTA = 0xA282EAD8
#: The largest record the data source reads (``TFRecordFraming.MaxRecordBytes``).
_MAX_RECORD_BYTES = 2**31 - 1 - 64


# --- CRC32C -------------------------------------------------------------------------------------


def _crc_tables() -> tuple[list[int], ...]:
    """Slicing-by-8 tables: ``t[0]`` the byte-at-a-time table of CRC32C (Castagnoli),
    ``t[k][i]`` the CRC of byte i followed by k zero bytes."""
    t0 = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t0.append(c)
    tables = [t0]
    for _ in range(7):
        last = tables[-1]
        tables.append([(last[i] >> 8) ^ t0[last[i] & 0xFF] for i in range(256)])
    return tuple(tables)


_TABLES = _crc_tables()
_WORDS = struct.Struct("<Q").iter_unpack


def _crc32c_python(data: bytes | bytearray | memoryview) -> int:
    """CRC32C in pure Python, the fallback: eight bytes a step (slicing-by-8), about twice as
    fast as a byte a step, and some 50 times slower than the crc32c packages' C code."""
    t0, t1, t2, t3, t4, t5, t6, t7 = _TABLES
    data = bytes(data)
    whole = len(data) & ~7
    crc = 0xFFFFFFFF
    for (word,) in _WORDS(data[:whole]):
        x = crc ^ word
        crc = (
            t7[x & 0xFF]
            ^ t6[(x >> 8) & 0xFF]
            ^ t5[(x >> 16) & 0xFF]
            ^ t4[(x >> 24) & 0xFF]
            ^ t3[(x >> 32) & 0xFF]
            ^ t2[(x >> 40) & 0xFF]
            ^ t1[(x >> 48) & 0xFF]
            ^ t0[x >> 56]
        )
    for b in data[whole:]:
        crc = t0[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _fast_crc32c() -> tuple[Callable[[Any], int], str]:
    """The fastest CRC32C importable, and its name: the crc32c package's C code (it takes a
    memoryview, so no copy), google-crc32c's, else pure Python."""
    try:
        import crc32c  # type: ignore[import-not-found, unused-ignore]

        return crc32c.crc32c, "crc32c"
    except ImportError:
        pass
    try:
        import google_crc32c  # type: ignore[import-not-found, unused-ignore]

        if getattr(google_crc32c, "implementation", "c") == "c":
            value = google_crc32c.value  # takes bytes only, not a memoryview
            return (lambda data: value(bytes(data))), "google-crc32c"
    except ImportError:
        pass
    return _crc32c_python, "pure Python"


_crc32c_impl: tuple[Callable[[Any], int], str] | None = None


def crc32c_implementation() -> str:
    """Which CRC32C counting uses: ``"google-crc32c"``, ``"crc32c"`` or ``"pure Python"``."""
    return _crc32c()[1]


def _crc32c() -> tuple[Callable[[Any], int], str]:
    global _crc32c_impl
    if _crc32c_impl is None:
        _crc32c_impl = _fast_crc32c()
    return _crc32c_impl


def _masked(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


# --- compression ----------------------------------------------------------------------------

#: Hadoop codecs' default extensions, as the JVM reader's CompressionCodecFactory knows them.
_HADOOP_EXTENSIONS = {".bz2": "bzip2", ".snappy": "snappy", ".lz4": "lz4", ".zst": "zstd"}


def _compression_by_name(path: str) -> str | None:
    """What the file's name says (as the JVM reader decides), or None: its first bytes decide."""
    name = os.path.basename(path).lower()
    if name.endswith(".gz"):
        return "gzip"
    if name.endswith((".deflate", ".zlib")):
        return "deflate"
    if name.endswith((".tfrecord", ".tfrecords")):
        return None
    for extension, codec in _HADOOP_EXTENSIONS.items():
        if name.endswith(extension):
            return codec
    return None


def _compression_by_head(head: bytes) -> str:
    """The JVM reader's ``TFRecordCompression.detect``: a sound TFRecord header is none (so an
    uncompressed file is never taken for a compressed one), then gzip's magic, then a zlib
    header, else none."""
    if len(head) >= _HEADER:
        (length_crc,) = struct.unpack_from("<I", head, 8)
        if _masked(_crc32c()[0](head[:8])) == length_crc:
            return "none"
    if len(head) >= 3 and head[0] == 0x1F and head[1] == 0x8B and head[2] == 8:
        return "gzip"
    if len(head) >= 2 and head[0] == 0x78 and (head[0] * 256 + head[1]) % 31 == 0:
        return "deflate"
    return "none"


def detect_compression(path: str, files: Files = _LOCAL) -> str:
    """The compression of the file ``path`` as the data source's reader decides it: by its
    extension (``.gz``, ``.deflate`` / ``.zlib``, a Hadoop codec's), else by its first bytes
    (TensorFlow's GZIP shards have no ``.gz``).
    """
    by_name = _compression_by_name(path)
    if by_name is not None:
        return by_name
    return _compression_by_head(files.read_range(path, 0, _HEADER))


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
    #: The data columns' Spark DDL (``StructType.toDDL``), without partition columns; None when
    #: counted.
    schema: str | None
    #: ``"Example"``, ``"SequenceExample"`` or ``"ByteArray"``; None when counted.
    record_type: str | None
    #: The ``partitionBy`` columns, in order (when counted: from the ``name=value`` folders).
    partition_columns: tuple[str, ...]
    #: Per feature key: the smallest and largest number of values in one record (empty when
    #: counted).
    features: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: SequenceExample feature lists: the smallest and largest number of values in one step.
    feature_lists: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: Spark's StructType JSON of the data columns (keeps metadata); None when counted.
    schema_json: Mapping[str, Any] | None = None
    #: ``"manifest"`` or ``"counted"`` (from the records' framing).
    source: Literal["manifest", "counted"] = "manifest"
    #: When counted: why (no manifest, or how the folder and the manifest differ).
    reason: str | None = None

    @property
    def num_bytes(self) -> int:
        """The files' total size on disk."""
        return sum(f.num_bytes for f in self.files)


# --- listing --------------------------------------------------------------------------------


def _list_folder(folder: str, files: Files = _LOCAL) -> list[tuple[str, int]]:
    """The data files under ``folder`` as (path relative to it with ``/``, size), sorted: the
    writer's rule (files and folders not hidden, and at the root no TFDS metadata)."""
    return files.list_data(folder)


def _full(folder: str, relative: str, files: Files = _LOCAL) -> str:
    return files.join(folder, relative)


def _partition_columns(relative_paths: list[str]) -> tuple[str, ...]:
    """The ``name=value`` folder names of the first file, when every folder of it is one."""
    if not relative_paths:
        return ()
    folders = relative_paths[0].split("/")[:-1]
    if not all("=" in f for f in folders):
        return ()
    return tuple(f.split("=", 1)[0] for f in folders)


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
        info_fields = (str(m["record_type"]), str(m["schema"]), list(m["partition_columns"]))
    except (KeyError, TypeError, ValueError) as e:
        raise _Stale(f"{manifest_path} is malformed ({type(e).__name__}: {e})") from None
    on_disk = dict(_list_folder(folder, files))
    unlisted = sorted(on_disk.keys() - listed.keys())
    if unlisted:
        raise _Stale(f"data file {unlisted[0]} is not in {MANIFEST_NAME}")
    missing = sorted(listed.keys() - on_disk.keys())
    if missing:
        raise _Stale(f"{MANIFEST_NAME} names {missing[0]}, which is not there")
    for rel in sorted(listed):
        if on_disk[rel] != listed[rel][1]:
            raise _Stale(f"{rel} has {on_disk[rel]} bytes, {MANIFEST_NAME} says {listed[rel][1]}")
    if num_records != sum(r for r, _ in listed.values()):
        raise _Stale(f"{MANIFEST_NAME}'s num_records is not the sum of its files' records")
    record_type, schema, partition_columns = info_fields
    return DatasetInfo(
        path=folder,
        num_records=num_records,
        files=tuple(
            FileInfo(_full(folder, rel, files), records, size, compressions[rel])
            for rel, (records, size) in sorted(listed.items())
        ),
        schema=schema,
        record_type=record_type,
        partition_columns=tuple(str(c) for c in partition_columns),
        features=features,
        feature_lists=feature_lists,
        schema_json=schema_json if isinstance(schema_json, dict) else None,
        source="manifest",
        reason=None,
    )


def read_manifest(folder: str) -> DatasetInfo | None:
    """The folder's valid manifest, or None (no manifest, or one the folder does not match)."""
    try:
        return _read_manifest(folder)
    except _Stale:
        return None


def manifest_problem(folder: str) -> str | None:
    """Why ``folder`` has no valid manifest, or None when it has one."""
    try:
        _read_manifest(folder)
    except _Stale as e:
        return str(e)
    return None


# --- counting from the framing ----------------------------------------------------------------


def _chunks(path: str, compression: str, files: Files = _LOCAL) -> Iterator[bytes]:
    """The file's record stream (decompressed), in chunks."""
    if compression not in ("none", "gzip", "deflate"):
        raise errors.CorruptFileError(
            errors.UNREADABLE,
            f"compressed with {compression}, which only the data source (Spark) can read",
            path,
            0,
        )
    with files.open(path) as f:
        if compression == "none":
            while chunk := f.read(_CHUNK):
                yield chunk
            return
        # gzip: wbits 31 (a gzip header); ZLIB: 15 (a zlib header). gzip files may hold
        # several members, one after another, as GZIPInputStream reads them.
        wbits = 31 if compression == "gzip" else 15
        d = zlib.decompressobj(wbits)
        produced = 0
        raw = f.read(_CHUNK)
        if not raw:
            return
        while True:
            try:
                out = d.decompress(raw, _CHUNK)
                while out:
                    produced += len(out)
                    yield out
                    out = d.decompress(d.unconsumed_tail, _CHUNK) if d.unconsumed_tail else b""
            except zlib.error as e:
                raise errors.CorruptFileError(
                    errors.UNREADABLE, f"cannot decompress {compression} ({e})", path, produced
                ) from None
            if d.eof:
                raw = d.unused_data or f.read(_CHUNK)
                if not raw:
                    return
                if compression == "deflate":
                    raise errors.CorruptFileError(
                        errors.UNREADABLE,
                        "bytes after the end of the ZLIB stream",
                        path,
                        produced,
                    )
                d = zlib.decompressobj(wbits)
                continue
            raw = f.read(_CHUNK)
            if not raw:
                raise errors.CorruptFileError(
                    errors.UNREADABLE,
                    f"the {compression} stream ends before its end marker",
                    path,
                    produced,
                )


_HEADER_FIELDS = struct.Struct("<QI")


def header_length(buf: bytes, pos: int, path: str, offset: int) -> int:
    """The data length in the record header at ``buf[pos:]`` (stream offset ``offset``),
    checked against its CRC and the largest record; a CorruptFileError naming ``path``."""
    length, length_crc = _HEADER_FIELDS.unpack_from(buf, pos)
    if _masked(_crc32c()[0](buf[pos : pos + 8])) != length_crc:
        raise errors.CorruptFileError(
            errors.LENGTH_CHECKSUM, "Corrupt TFRecord: length checksum mismatch", path, offset
        )
    # A damaged length is refused before its bytes are gathered, as the data source does.
    if length > _MAX_RECORD_BYTES:
        raise errors.CorruptFileError(
            errors.RECORD_TOO_LARGE,
            f"TFRecord of {length} bytes exceeds maxRecordBytes ({_MAX_RECORD_BYTES})",
            path,
            offset,
        )
    return int(length)


def count_records(path: str, compression: str | None = None, files: Files = _LOCAL) -> int:
    """The number of records in the TFRecord file ``path``, from its framing: every
    record's length and both checksums checked. ``compression`` defaults to what
    :func:`detect_compression` finds. A damaged file raises
    :class:`spark_tfrecord.errors.CorruptFileError` naming the file and the record's offset in
    the (decompressed) stream.
    """
    if compression is None:
        compression = detect_compression(path, files)
    crc = _crc32c()[0]
    unpack_footer = struct.Struct("<I").unpack_from
    stream = _chunks(path, compression, files)
    # Uncompressed, the stream is the file: a length running past its end is known at once.
    file_size = files.size(path) if compression == "none" else None
    buf = b""
    pos = 0  # in buf
    base = 0  # the stream offset of buf[0]
    count = 0

    def more(need: int) -> bool:
        """Makes ``need`` bytes available at ``pos``; False if the stream ends first."""
        nonlocal buf, pos, base
        parts = [buf[pos:]]
        have = len(parts[0])
        base += pos
        pos = 0
        for chunk in stream:
            parts.append(chunk)
            have += len(chunk)
            if have >= need:
                break
        buf = b"".join(parts)
        return have >= need

    while True:
        if len(buf) - pos < _HEADER and not more(_HEADER):
            left = len(buf) - pos
            if left == 0:
                return count
            raise errors.CorruptFileError(
                errors.TRUNCATED,
                f"Truncated TFRecord: {left} of {_HEADER} header bytes",
                path,
                base + pos,
            )
        length = header_length(buf, pos, path, base + pos)
        if file_size is not None and length > file_size - (base + pos) - _HEADER - _FOOTER:
            raise errors.CorruptFileError(
                errors.TRUNCATED,
                f"Truncated TFRecord: the header claims {length} data bytes, but the file ends "
                f"{file_size - (base + pos) - _HEADER} bytes after it",
                path,
                base + pos,
            )
        end = pos + _HEADER + length
        if len(buf) < end + _FOOTER and not more(_HEADER + length + _FOOTER):
            raise errors.CorruptFileError(
                errors.TRUNCATED,
                f"Truncated TFRecord: stream ends inside a record of {length} data bytes",
                path,
                base + pos,
            )
        end = pos + _HEADER + length
        (data_crc,) = unpack_footer(buf, end)
        if _masked(crc(memoryview(buf)[pos + _HEADER : end])) != data_crc:
            raise errors.CorruptFileError(
                errors.DATA_CHECKSUM,
                "Corrupt TFRecord: data checksum mismatch",
                path,
                base + pos,
            )
        count += 1
        pos = end + _FOOTER


def _is_glob(path: str) -> bool:
    return any(c in path for c in "*?[")


def _count(path: str, reason: str, fs: Files = _LOCAL) -> DatasetInfo:
    if fs.isdir(path):
        listed = _list_folder(path, fs)
        relative = [rel for rel, _ in listed]
        files = [(_full(path, rel, fs), size) for rel, size in listed]
    elif _is_glob(path):
        files = []
        for match in fs.glob(path):
            if fs.isdir(match):
                files += [(_full(match, rel, fs), size) for rel, size in _list_folder(match, fs)]
            elif not hidden(match.rstrip("/").rsplit("/", 1)[-1]):
                files.append((match, fs.size(match)))
        if not files:
            raise FileNotFoundError(f"no data files match {path}")
        relative = []
    elif fs.isfile(path):
        files, relative = [(path, fs.size(path))], []
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
        partition_columns=_partition_columns(relative),
        features={},
        feature_lists={},
        schema_json=None,
        source="counted",
        reason=reason,
    )


def local_path(path: str, caller: str) -> str:
    """``path`` without a ``file:`` scheme (``file:///tmp/x``, Hadoop's ``file:/tmp/x``); a
    ValueError naming ``caller`` for another scheme."""
    if is_url(path):
        raise ValueError(
            f"{caller} reads local paths (or file: URLs); {path!r} is not one: copy the "
            "folder, or read it with Spark"
        )
    return _local(path)


def dataset_info(
    path: str | os.PathLike[str], *, storage_options: Mapping[str, Any] | None = None
) -> DatasetInfo:
    """The record counts, files and schema of the TFRecord data at ``path``: a local path, a
    ``file://`` URL, or an fsspec URL (``s3://bucket/train``, ``gs://...``; the file system's
    package, s3fs or gcsfs, must be installed), with fsspec's ``storage_options`` (else the
    file system reads its credentials and endpoint from the environment, as the cloud SDKs do:
    ``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``...).

    ``path`` is a folder (a partitioned table's root too), one file, or a glob. A folder that
    a spark-tfrecord write left with a valid ``_tfrecord_manifest.json`` is answered from it,
    after one listing and no file reads: ``source == "manifest"``. Anything else is counted from
    the records' framing (every byte read, both checksums of every record checked):
    ``source == "counted"``, ``reason`` says why, and ``schema`` and ``record_type`` are None.

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
    >>> info.num_records, info.source, info.reason.endswith("has no _tfrecord_manifest.json")
    (5, 'counted', True)
    """
    fs, path = file_system(os.fspath(path), storage_options)
    return dataset_info_in(fs, path)


def dataset_info_in(fs: Files, path: str) -> DatasetInfo:
    """:func:`dataset_info` of ``path`` on the file system ``fs``."""
    if fs.isdir(path):
        try:
            return _read_manifest(path, fs)
        except _Stale as e:
            return _count(path, f"counted from the records: {e}", fs)
    if fs.isfile(path):
        return _count(path, "counted from the records: a file, not a folder with a manifest", fs)
    return _count(path, "counted from the records: a glob, not a folder with a manifest", fs)
