"""Compressed TFRecord files: codec names, a file's codec as the reader decides, decompression."""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator

from spark_tfrecord import errors
from spark_tfrecord._format.files.files import Files, LocalFiles
from spark_tfrecord._format.frames.framing import HEADER, sound_header

_LOCAL = LocalFiles()
#: How much of a file is read (or decompressed) at a time.
CHUNK = 1 << 20
#: Hadoop codecs' default extensions, as the JVM reader's CompressionCodecFactory knows them.
_HADOOP_EXTENSIONS = {".bz2": "bzip2", ".snappy": "snappy", ".lz4": "lz4", ".zst": "zstd"}
_EXTENSIONS = {".gz": "gzip", ".deflate": "deflate", ".zlib": "deflate", **_HADOOP_EXTENSIONS}
_HADOOP = "org.apache.hadoop.io.compress."
#: ``compression`` / ``codec`` values TensorFlow reads, lower-cased, with the jar's aliases.
_OPTION_CODECS = {
    **dict.fromkeys(("none", "uncompressed", ""), "none"),
    **dict.fromkeys(("gzip", "gz", _HADOOP + "gzipcodec"), "gzip"),
    **dict.fromkeys(
        ("deflate", "zlib", _HADOOP + "deflatecodec", _HADOOP + "defaultcodec"), "deflate"
    ),
}


def tensorflow_codec(value: str) -> str | None:
    """The codec (``none``, ``gzip``, ``deflate``) option ``value`` names; None if not TensorFlow's.

    >>> [tensorflow_codec(v) for v in ("GZIP", " zlib", "uncompressed", "snappy")]
    ['gzip', 'deflate', 'none', None]
    """
    return _OPTION_CODECS.get(value.strip().lower())


def compression_by_name(path: str) -> str | None:
    """What the file's name says (as the JVM reader decides), or None: its first bytes decide."""
    name = os.path.basename(path).lower()
    return next((codec for ext, codec in _EXTENSIONS.items() if name.endswith(ext)), None)


def compression_by_head(head: bytes) -> str:
    """As ``TFRecordCompression.detect``: a sound TFRecord header wins, then gzip, then zlib."""
    if sound_header(head):
        return "none"
    if len(head) >= 3 and head[0] == 0x1F and head[1] == 0x8B and head[2] == 8:
        return "gzip"
    if len(head) >= 2 and head[0] == 0x78 and (head[0] * 256 + head[1]) % 31 == 0:
        return "deflate"
    return "none"


def file_compression(path: str, option: str | None, head: bytes) -> str:
    """The jar's codec for ``path``: by name, else the ``compression`` option, else by ``head``."""
    named = compression_by_name(path) or option
    return named if named not in (None, "none") else compression_by_head(head)


def detect_compression(path: str, files: Files = _LOCAL) -> str:
    """``path``'s codec by extension, else by first bytes (TF's GZIP shards have no ``.gz``)."""
    return compression_by_name(path) or compression_by_head(files.read_range(path, 0, HEADER))


def chunks(path: str, compression: str, files: Files = _LOCAL) -> Iterator[bytes]:
    """The file's record stream (decompressed), in chunks."""
    if compression not in ("none", "gzip", "deflate"):
        raise _unreadable(
            f"compressed with {compression}, which only the data source (Spark) can read", path, 0
        )
    with files.open(path) as f:
        if compression == "none":
            while chunk := f.read(CHUNK):
                yield chunk
            return
        # wbits 31: gzip, 15: zlib; a gzip file may hold several members (GZIPInputStream)
        wbits = 31 if compression == "gzip" else 15
        d = zlib.decompressobj(wbits)
        produced = 0
        raw = f.read(CHUNK)
        if not raw:
            return
        while True:
            try:
                out = d.decompress(raw, CHUNK)
                while out:
                    produced += len(out)
                    yield out
                    out = d.decompress(d.unconsumed_tail, CHUNK) if d.unconsumed_tail else b""
            except zlib.error as e:
                raise _unreadable(
                    f"cannot decompress {compression} ({e})", path, produced
                ) from None
            if d.eof:
                raw = d.unused_data or f.read(CHUNK)
                if not raw:
                    return
                if compression == "deflate":
                    raise _unreadable("bytes after the end of the ZLIB stream", path, produced)
                d = zlib.decompressobj(wbits)
                continue
            raw = f.read(CHUNK)
            if not raw:
                message = f"the {compression} stream ends before its end marker"
                raise _unreadable(message, path, produced)


def _unreadable(reason: str, path: str, offset: int) -> errors.CorruptFileError:
    return errors.CorruptFileError(errors.UNREADABLE, reason, path, offset)
