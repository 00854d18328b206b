"""Framed records to a file, compressed whole as the jar writes them, byte for byte."""

from __future__ import annotations

import gzip
import zlib
from typing import Any, BinaryIO

from spark_tfrecord import errors
from spark_tfrecord._format.frames.compression import tensorflow_codec
from spark_tfrecord._format.frames.encode_errors import argument_error
from spark_tfrecord._format.frames.frames import Encoded

#: The extension each codec adds after ``.tfrecord``, as the jar names its files.
EXTENSIONS = {"none": "", "gzip": ".gz", "deflate": ".deflate"}


def compression(value: str, option: str = "compression") -> str:
    """The codec the ``compression`` option names; refuses codecs TensorFlow cannot read."""
    if (codec := tensorflow_codec(value)) is not None:
        return codec
    lower = value.strip().lower()
    if lower in ("snappy", "bzip2", "lz4", "zstd") or lower.endswith("codec"):
        raise argument_error(
            errors.INVALID_OPTION,
            f"TFRecord option '{option}' is '{value}', a codec TensorFlow cannot read "
            "(TFRecordDataset reads only GZIP and ZLIB). Use compression gzip or deflate, or "
            "set allowNonTensorFlowCodec=true if the files are only for Spark.",
        )
    flagged = ("bzip2", "lz4", "snappy", "zstd", "a Hadoop CompressionCodec class name")
    valid = "none, gzip, deflate, zlib, " + ", ".join(
        f"{c} (with allowNonTensorFlowCodec)" for c in flagged
    )
    raise argument_error(
        errors.INVALID_OPTION,
        f"Invalid value '{value}' for TFRecord option '{option}'. Valid values: {valid}.",
        option=option,
        value=value,
        valid=valid,
    )


class RecordFileWriter:
    """Writes encoded batches to one open binary file, compressed whole.

    >>> import io
    >>> out = io.BytesIO()
    >>> with RecordFileWriter(out, "gzip") as w:
    ...     pass
    >>> out.getvalue()[:2]
    b'\\x1f\\x8b'
    """

    def __init__(self, file: BinaryIO, codec: str = "none") -> None:
        self.codec = compression(codec)
        self._file = file
        self._out: Any = file
        self._deflater: Any = None
        if self.codec == "gzip":
            # No file name or time in the header, as the JVM's GZIPOutputStream writes it.
            self._out = gzip.GzipFile(
                filename="", fileobj=file, mode="wb", compresslevel=6, mtime=0
            )
        elif self.codec == "deflate":
            self._deflater = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION)
        #: Records written.
        self.records = 0

    def write(self, encoded: Encoded) -> None:
        """Appends a batch's framed records."""
        data = encoded.framed_bytes()
        self._out.write(data if self._deflater is None else self._deflater.compress(data))
        self.records += len(encoded)

    def close(self) -> None:
        """Ends the compressed stream (the file itself stays open: it is the caller's)."""
        if self._deflater is not None:
            self._file.write(self._deflater.flush())
            self._deflater = None
        elif self._out is not self._file:
            self._out.close()
            self._out = self._file

    def __enter__(self) -> RecordFileWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
