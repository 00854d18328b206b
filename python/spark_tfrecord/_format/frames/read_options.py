"""The read options the format package parses, with the data source's names and defaults."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from spark_tfrecord import errors
from spark_tfrecord._format.frames.compression import tensorflow_codec
from spark_tfrecord._format.frames.framing import MAX_RECORD_BYTES as _MAX_RECORD_BYTES

RECORD_TYPES = ("Example", "SequenceExample", "ByteArray")


@dataclass(frozen=True)
class InferenceOptions:
    """Inference's options, named and defaulted as the data source's (Spark's, session-free)."""

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
        """Parses a read's options (names case-insensitive); a bad value raises ArgumentError."""
        given = {k.lower(): str(v) for k, v in (options or {}).items()}

        def get(name: str) -> str | None:
            return given.get(name.lower())

        def boolean(name: str, default: bool) -> bool:
            v = get(name)
            if v is not None and v.strip().lower() not in ("true", "false"):
                raise errors.invalid_option(name, v, ["true", "false"])
            return default if v is None else v.strip().lower() == "true"

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

        v = get("recordType")
        match = [t for t in RECORD_TYPES if v is not None and t.lower() == v.strip().lower()]
        if v is not None and not match:
            raise errors.invalid_option("recordType", v, RECORD_TYPES)
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
            record_type=match[0] if match else "Example",
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
