"""A jar-less read's or write's options, with the jar's names, defaults and errors."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from spark_tfrecord import errors
from spark_tfrecord._format.frames.read_options import InferenceOptions

Mode = Literal["FAILFAST", "PERMISSIVE", "DROPMALFORMED"]
#: Spark's parse modes, in the jar's order (``TFRecordOptions.ParseModes``).
MODES: tuple[Mode, ...] = ("FAILFAST", "PERMISSIVE", "DROPMALFORMED")
#: ``spark.sql.columnNameOfCorruptRecord``'s default: the worker that reads has no session.
DEFAULT_CORRUPT_COLUMN = "_corrupt_record"
#: The jar's read options this route refuses by name (never ignores), with what to do instead.
UNSUPPORTED = {
    "split": "read the split's folder (or its shard files) by path",
    "tfds": "read the TFDS version folder's shard files by path",
    "tfdsVersion": "read the TFDS version folder's shard files by path",
    "tfxSplit": "read the TFX split's folder by path",
    "decoder": "leave it out: the Python route has one decoder",
    "allowNonTensorFlowCodec": "read such files with the jar (Python reads none, gzip, zlib)",
}


@dataclass(frozen=True)
class ReadOptions:
    """A read's options, parsed once on the driver."""

    inference: InferenceOptions
    mode: Mode = "FAILFAST"
    corrupt_column: str = DEFAULT_CORRUPT_COLUMN
    split_files: bool = True
    #: ``storageOptions``: fsspec's storage options for ``s3://``, ``gs://``... paths (JSON).
    storage_options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> ReadOptions:
        """``spark.read``'s options (names case-insensitive); a bad value raises ArgumentError."""
        given = {k.lower(): str(v) for k, v in options.items()}
        for name, instead in UNSUPPORTED.items():
            if name.lower() in given:
                raise needs_jar(name, given[name.lower()], instead, "read")
        v = given.get("mode", "FAILFAST")
        found = [m for m in MODES if m.lower() == v.strip().lower()]
        if not found:
            raise errors.invalid_option("mode", v, list(MODES))
        split = given.get("splitfiles", "true").strip().lower()
        if split not in ("true", "false"):
            raise errors.invalid_option("splitFiles", given["splitfiles"], ["true", "false"])
        corrupt = given.get("columnnameofcorruptrecord", DEFAULT_CORRUPT_COLUMN)
        v = given.get("storageoptions", "{}")
        try:
            storage = json.loads(v)
        except ValueError:
            storage = None
        if not isinstance(storage, dict):
            raise errors.invalid_option(
                "storageOptions", v, ["a JSON object of fsspec storage options"]
            )
        return cls(InferenceOptions.parse(options), found[0], corrupt, split == "true", storage)


#: The jar's write options the Python route does not take, with what to do instead.
UNSUPPORTED_WRITE = {
    **dict.fromkeys(
        ["tfds", "split", "tfdsVersion", "tfdsFeatures", "tfdsClassNames", "tfdsMode"],
        "write TFDS datasets with the jar (spark_tfrecord.write_tfds)",
    ),
    "tfxSplit": "write TFX splits with the jar",
    "shardPrefix": "write the part- files, then rename them, or write with the jar",
    "shuffleSeed": "order the rows before the write (orderBy(rand(seed)))",
    "writeIndex": "index the files after the write (spark-tfrecord index)",
    "maxRecordsPerFile": "repartition the DataFrame: each write task writes one file",
    "allowNonTensorFlowCodec": "write none, gzip or deflate (TensorFlow's codecs)",
}


def needs_jar(option: str, value: str, instead: str, verb: str = "write") -> errors.ArgumentError:
    """The error of an option of the jar that the Python data source does not take."""
    return errors.ArgumentError(
        errors.INVALID_OPTION,
        f"The TFRecord option '{option}' needs the jar; the Python data source (no jar) does "
        f"not {verb} it: {instead}.",
        option=option,
        value=value,
        valid="",
    )


@dataclass(frozen=True)
class WriteOptions:
    """A write's options, parsed once on the driver (the encoder and file writer check them too)."""

    record_type: str = "Example"
    compression: str = "none"
    path_separator: str = "/"
    vector_layout: str = "dense"
    #: ``numShards``: the number of files the write ends with (None: one per write task).
    num_shards: int | None = None

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> WriteOptions:
        """``df.write``'s options (names case-insensitive); a bad value raises ArgumentError."""
        from spark_tfrecord._format.frames.record_writer import compression

        given = {k.lower(): str(v) for k, v in options.items()}
        for name, instead in UNSUPPORTED_WRITE.items():
            if name.lower() in given:
                raise needs_jar(name, given[name.lower()], instead)
        codec = "none"
        for name in ("compression", "codec"):
            if name in given:
                codec = compression(given[name], name)
                break
        num_shards = None
        if "numshards" in given:
            v = given["numshards"]
            try:
                num_shards = int(v.strip())
            except ValueError:
                num_shards = 0
            if not 0 < num_shards <= 99999:
                raise errors.invalid_option("numShards", v, ["an integer from 1 to 99999"])
        return cls(
            record_type=given.get("recordtype", "Example"),
            compression=codec,
            path_separator=given.get("pathseparator", "/"),
            vector_layout=given.get("vectorlayout", "dense"),
            num_shards=num_shards,
        )
