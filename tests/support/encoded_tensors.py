"""Encoded tensor columns made by hand (a TFDS ``Tensor`` with an encoding: ``c/value``, the
values' little-endian bytes in C order, zlib-compressed for ``zlib``, and ``c/shape``), of
several dtypes and ranks, zlib and not: :data:`SCHEMA` (Spark's JSON, with the field metadata
``tfrecord.tensorEncoding`` / ``tfrecord.tensorDtype``) and :data:`CASES`, files of records that
read (the first) or that each fail one of the jar's ``EncodedTensorReader`` checks; and
:data:`REFUSED`, columns with that metadata which a read or a write refuses before any record
(:func:`refused_schema`, :data:`SCALAR_RECORDS`, :func:`refused_reason`)."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    float_list_packed,
    int64_list_packed,
)


def _tensor(name: str, dtype: str, element: str, rank: int, encoding: str) -> dict[str, Any]:
    t: Any = element
    for _ in range(rank):
        t = {"type": "array", "elementType": t, "containsNull": False}
    meta = {"tfrecord.tensorEncoding": encoding, "tfrecord.tensorDtype": dtype}
    return {"name": name, "type": t, "nullable": True, "metadata": meta}


#: name: dtype, Spark type, rank, encoding.
COLUMNS = {
    "depth": ("float32", "float", 2, "zlib"),
    "mask": ("uint8", "short", 3, "bytes"),
    "flags": ("bool", "boolean", 2, "zlib"),
    "d": ("float64", "double", 2, "bytes"),
    "i": ("int64", "long", 2, "bytes"),
    "b": ("int8", "byte", 1, "zlib"),
    "s": ("int16", "short", 2, "bytes"),
    "n": ("int32", "integer", 3, "zlib"),
    "v": ("float32", "float", 1, "bytes"),
}
SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        *(_tensor(name, *spec) for name, spec in COLUMNS.items()),
    ],
}


def _int(key: bytes, values: list[int]) -> bytes:
    return entry(key, feature("int64", int64_list_packed(values)))


def _bytes(key: bytes, values: list[bytes]) -> bytes:
    return entry(key, feature("bytes", bytes_list(values)))


def encoded(key: bytes, shape: list[int], data: bytes, zlib_level: int | None) -> bytes:
    """The features ``key/value`` (``data``, deflated at ``zlib_level`` unless None) and
    ``key/shape``."""
    value = data if zlib_level is None else zlib.compress(data, zlib_level)
    return _bytes(key + b"/value", [value]) + _int(key + b"/shape", shape)


DEPTH = np.arange(6, dtype="<f4") / 4
_MASK = np.array([[[0, 255]], [[7, 128]]], dtype=np.uint8)
_NUMBERS = np.array([[[-(2**31), 2**31 - 1, 0]], [[1, -1, 7]]], dtype="<i4")
_FLOATS = np.array([np.nan, -0.0, np.inf, 1e-45, 3.4028235e38], dtype="<f4")

#: name: the records of a file. The first reads; each other fails one check of the jar's.
CASES: dict[str, list[bytes]] = {
    "encoded tensors": [
        example(
            _int(b"id", [1]),
            encoded(b"depth", [2, 3], DEPTH.tobytes(), 6),
            encoded(b"mask", [2, 1, 2], _MASK.tobytes(), None),
            encoded(b"flags", [1, 3], bytes([1, 0, 2]), 9),
            encoded(b"d", [2, 1], np.array([1.5, -0.0]).tobytes(), None),
            encoded(b"i", [1, 2], np.array([-1, 2**40], dtype="<i8").tobytes(), None),
            encoded(b"b", [3], np.array([-128, 127, 0], dtype="<i1").tobytes(), 1),
            encoded(b"s", [2, 2], np.array([-(2**15), 2**15 - 1, 5, -5], "<i2").tobytes(), None),
            encoded(b"n", [2, 1, 3], _NUMBERS.tobytes(), 6),
            encoded(b"v", [5], _FLOATS.tobytes(), None),
        ),
        example(
            _int(b"id", [2]),
            encoded(b"depth", [0, 3], b"", 6),
            encoded(b"mask", [2, 0, 5], b"", None),
            encoded(b"b", [0], b"", 6),
            encoded(b"n", [1, 2, 0], b"", 6),
        ),
        example(_int(b"id", [3])),
    ],
    "encoded tensor, no shape": [example(_bytes(b"depth/value", [b""]))],
    "encoded tensor, no value": [example(_int(b"v/shape", [0]))],
    "encoded tensor, two values": [
        example(_bytes(b"depth/value", [b"", b""]), _int(b"depth/shape", [0, 0]))
    ],
    "encoded tensor, shape of another rank": [example(encoded(b"depth", [6], b"", None))],
    "encoded tensor, a float shape": [
        example(
            _bytes(b"depth/value", [b""]),
            entry(b"depth/shape", feature("float", float_list_packed([1, 1]))),
        )
    ],
    "encoded tensor, an int64 value": [
        example(_int(b"depth/value", [1]), _int(b"depth/shape", [1, 1]))
    ],
    "encoded tensor, a negative size": [example(encoded(b"depth", [-1, 2], b"", 6))],
    "encoded tensor, too many lists": [example(encoded(b"mask", [2**31 - 1, 2, 0], b"", None))],
    "encoded tensor, bytes too few": [example(encoded(b"mask", [1, 1, 3], b"ab", None))],
    "encoded tensor, bytes too many": [example(encoded(b"depth", [1, 1], b"abcdefgh", 6))],
    "encoded tensor, int32 bytes not a multiple": [example(encoded(b"n", [1, 1, 1], b"abc", 6))],
    "encoded tensor, not zlib": [
        example(_bytes(b"depth/value", [b"not zlib"]), _int(b"depth/shape", [1, 1]))
    ],
    "encoded tensor, zlib cut short": [
        example(
            _bytes(b"depth/value", [zlib.compress(DEPTH.tobytes())[:-6]]),
            _int(b"depth/shape", [2, 3]),
        )
    ],
}


_RANK = "an encoded tensor column must be an array of rank 1 or more (one array per dimension)."
_HELD = "Column 'x' holds an encoded tensor"
_DTYPES = "bool, float32, float64, int16, int32, int64, int8, uint8"


def _no_array(dtype: str, element: str, simple: str, encoding: str) -> tuple[dict[str, Any], str]:
    """A column ``x`` of no array (rank 0), and why it is refused."""
    reason = f"{_HELD} (tfrecord.tensorEncoding) but has type {simple}: {_RANK}"
    return _tensor("x", dtype, element, 0, encoding), reason


#: Columns ``x`` with an encoded tensor's metadata that a read or a write refuses before any
#: record, with the condition ``TFRECORD_INVALID_SCHEMA`` and the same words through the jar and
#: the Python codec: of no array (rank 0), or of an encoding, a dtype or an element type that the
#: tensor cannot have. name: the field, the reason.
REFUSED: dict[str, tuple[dict[str, Any], str]] = {
    "float, zlib": _no_array("float32", "float", "float", "zlib"),
    "bigint, bytes": _no_array("int64", "long", "bigint", "bytes"),
    "smallint, uint8": _no_array("uint8", "short", "smallint", "zlib"),
    "binary, float32": _no_array("float32", "binary", "binary", "bytes"),
    "encoding gzip": (
        _tensor("x", "float32", "float", 2, "gzip"),
        f"{_HELD} of encoding 'gzip' (tfrecord.tensorEncoding), which is not one of bytes, zlib.",
    ),
    "encoding a number": (
        {
            **_tensor("x", "float32", "float", 2, ""),
            "metadata": {"tfrecord.tensorEncoding": 1, "tfrecord.tensorDtype": "float32"},
        },
        f"{_HELD} of encoding '' (tfrecord.tensorEncoding), which is not one of bytes, zlib.",
    ),
    "dtype float16": (
        _tensor("x", "float16", "float", 2, "bytes"),
        f"{_HELD} of dtype 'float16' (tfrecord.tensorDtype), which is not one of {_DTYPES}.",
    ),
    "no dtype": (
        {**_tensor("x", "", "float", 2, ""), "metadata": {"tfrecord.tensorEncoding": "zlib"}},
        f"{_HELD} of dtype '' (tfrecord.tensorDtype), which is not one of {_DTYPES}.",
    ),
    "float32 of bigint": (
        _tensor("x", "float32", "long", 2, "bytes"),
        f"{_HELD} of dtype 'float32' (tfrecord.tensorDtype), whose values are float, but has "
        "type array<array<bigint>>.",
    ),
    "uint8 of tinyint": (
        _tensor("x", "uint8", "byte", 1, "zlib"),
        f"{_HELD} of dtype 'uint8' (tfrecord.tensorDtype), whose values are smallint, but has "
        "type array<tinyint>.",
    ),
}


def refused_schema(case: str) -> dict[str, Any]:
    """``id bigint`` and the column ``x`` of :data:`REFUSED`' ``case``."""
    return {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", "nullable": True, "metadata": {}},
            REFUSED[case][0],
        ],
    }


def refused_reason(case: str) -> str:
    """The reason both sides refuse :func:`refused_schema` with (``TFRECORD_INVALID_SCHEMA``)."""
    return REFUSED[case][1]


#: Records that a schema of :data:`REFUSED` would meet: a scalar as TFDS stores
#: ``Tensor(shape=(), encoding=...)`` (one bytes value under its own name), and ``x/value`` with
#: an empty ``x/shape``.
SCALAR_RECORDS = [
    example(_int(b"id", [1]), _bytes(b"x", [zlib.compress(np.float32(1.5).tobytes())])),
    example(_int(b"id", [2]), encoded(b"x", [], np.float32(2.5).tobytes(), None)),
]
