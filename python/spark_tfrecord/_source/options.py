"""The options of a jar-less read, with the jar's names, defaults and errors (``TFRecordOptions``).

The options inference reads are :class:`~spark_tfrecord._format.inference.InferenceOptions`'; a
read adds ``mode``, ``columnNameOfCorruptRecord`` and ``splitFiles``, and, for this route
only, ``storageOptions`` (fsspec's, as JSON, for ``s3://`` and ``gs://`` paths). An option the
jar takes on read that this route cannot honour is refused by name (:data:`UNSUPPORTED`), never
ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from spark_tfrecord import errors
from spark_tfrecord._format.inference import InferenceOptions

Mode = Literal["FAILFAST", "PERMISSIVE", "DROPMALFORMED"]
#: Spark's parse modes, in the jar's order (``TFRecordOptions.ParseModes``).
MODES: tuple[Mode, ...] = ("FAILFAST", "PERMISSIVE", "DROPMALFORMED")
#: ``spark.sql.columnNameOfCorruptRecord``'s default: the worker that reads has no session.
DEFAULT_CORRUPT_COLUMN = "_corrupt_record"
#: Read options of the jar that the Python route does not read yet, with what to do instead.
UNSUPPORTED = {
    "split": "read the split's folder (or its shard files) by path",
    "tfds": "read the TFDS version folder's shard files by path",
    "tfdsversion": "read the TFDS version folder's shard files by path",
    "tfxsplit": "read the TFX split's folder by path",
    "decoder": "leave it out: the Python route has one decoder",
    "allownontensorflowcodec": "read such files with the jar (Python reads none, gzip, zlib)",
}


def invalid(option: str, value: str, valid: list[str]) -> errors.ArgumentError:
    """The jar's ``TFRECORD_INVALID_OPTION`` for ``option``'s bad ``value``."""
    return errors.ArgumentError(
        errors.INVALID_OPTION,
        f"Invalid value '{value}' for TFRecord option '{option}'. Valid values: "
        f"{', '.join(valid)}.",
        option=option,
        value=value,
        valid=", ".join(valid),
    )


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
        """The options given to ``spark.read`` (names case-insensitive); a bad value raises the
        jar's :class:`~spark_tfrecord.errors.ArgumentError`."""
        given = {k.lower(): (k, str(v)) for k, v in options.items()}
        for name, instead in UNSUPPORTED.items():
            if name in given:
                option = given[name][0]
                raise errors.ArgumentError(
                    errors.INVALID_OPTION,
                    f"The TFRecord option '{option}' needs the jar; the Python data source "
                    f"(no jar) does not read it: {instead}.",
                    option=option,
                    value=given[name][1],
                    valid="",
                )
        mode: Mode = "FAILFAST"
        if "mode" in given:
            v = given["mode"][1]
            found = [m for m in MODES if m.lower() == v.strip().lower()]
            if not found:
                raise invalid("mode", v, list(MODES))
            mode = found[0]
        split_files = True
        if "splitfiles" in given:
            v = given["splitfiles"][1]
            if v.strip().lower() not in ("true", "false"):
                raise invalid("splitFiles", v, ["true", "false"])
            split_files = v.strip().lower() == "true"
        corrupt = given.get("columnnameofcorruptrecord", ("", DEFAULT_CORRUPT_COLUMN))[1]
        storage: dict[str, Any] = {}
        if "storageoptions" in given:
            v = given["storageoptions"][1]
            try:
                storage = json.loads(v)
            except ValueError:
                storage = None  # type: ignore[assignment]
            if not isinstance(storage, dict):
                raise invalid("storageOptions", v, ["a JSON object of fsspec storage options"])
        return cls(InferenceOptions.parse(options), mode, corrupt, split_files, storage)
