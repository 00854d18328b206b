"""The reader of an encoded tensor column in ``inspect``'s rows (a TFDS ``Tensor`` with an
encoding, ``array<…<T>>`` of rank r): from ``c/value`` (one bytes value: the values'
little-endian bytes in C order, zlib-compressed for ``zlib``) and ``c/shape`` (r int64 sizes),
with the checks and messages of the jar's ``EncodedTensorReader``.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from spark_tfrecord import errors
from spark_tfrecord._format.columns.conversions import java_float
from spark_tfrecord._format.columns.feature_paths import (
    TENSOR_DTYPE_KEY,
    TENSOR_ELEMENTS,
    TENSOR_ENCODING_KEY,
)
from spark_tfrecord._format.columns.json_errors import Mismatch
from spark_tfrecord._format.columns.json_values import (
    Features,
    Lists,
    Reader,
    flat_values,
    java_double,
    json_number,
)
from spark_tfrecord._format.columns.schema import depth
from spark_tfrecord._format.columns.type_table import simple_string
from spark_tfrecord._format.entries.wire import BYTES, FLOAT, INT64, UNSET

#: Per dtype of an encoded tensor: the JSON value of one of its stored values.
_TENSOR_VALUES: dict[str, Callable[[Any], Any]] = {
    "float32": lambda v: json_number(java_float(v)),
    "float64": lambda v: json_number(java_double(v)),
    "bool": lambda v: v != 0,
}
#: The most bytes a Spark row can hold (the jar's ``MaxRowBytes``).
_MAX_ROW_BYTES = 2**31 - 1 - 15
_KINDS = {UNSET: "unset", BYTES: "bytes_list", FLOAT: "float_list", INT64: "int64_list"}


def tensor_reader(
    t: Any, column: str, name: str, separator: str, meta: Mapping[str, Any]
) -> tuple[Reader, list[str]]:
    """The reader of an encoded tensor column of type ``t`` stored under ``name``, and the
    features it reads; :class:`~spark_tfrecord.errors.ArgumentError` for a dtype that has
    none."""
    reader = _EncodedTensor(t, column, name, separator, meta)
    return reader, [reader.value_name, reader.shape_name]


class _EncodedTensor:
    """An encoded tensor column's reader: decided once (dtype, encoding, rank, names), called
    per record."""

    def __init__(
        self, t: Any, column: str, name: str, separator: str, meta: Mapping[str, Any]
    ) -> None:
        dtype = str(meta.get(TENSOR_DTYPE_KEY))
        if dtype not in TENSOR_ELEMENTS:
            raise errors.ArgumentError(
                errors.INVALID_SCHEMA,
                f"Column '{column}' holds an encoded tensor of dtype '{dtype}' "
                f"({TENSOR_DTYPE_KEY}), which is not one of {', '.join(sorted(TENSOR_ELEMENTS))}.",
                column=column,
            )
        self.column = column
        self.stored = np.dtype(TENSOR_ELEMENTS[dtype])
        self.value_of = _TENSOR_VALUES.get(dtype, int)
        self.deflate = meta.get(TENSOR_ENCODING_KEY) == "zlib"
        self.rank = depth(t)
        self.value_name, self.shape_name = name + separator + "value", name + separator + "shape"
        self.prefix = f"Column '{column}' ({simple_string(t)}) "

    def fail(self, what: str) -> Mismatch:
        return Mismatch(self.column, self.prefix + what, whole=True)

    def __call__(self, feats: Features, lists: Lists) -> Any:
        value, shape_feature = feats.get(self.value_name), feats.get(self.shape_name)
        if value is None and shape_feature is None:
            return None
        data, sizes = self.checked(value, shape_feature)
        value_of, stored = self.value_of, np.frombuffer(self.inflated(data, sizes), self.stored)
        flat = [value_of(v) for v in stored.tolist()]
        return _shaped(flat, sizes)

    def checked(
        self, value: tuple[int, list[Any]] | None, shape_feature: tuple[int, list[Any]] | None
    ) -> tuple[bytes, list[int]]:
        """The one bytes value of ``value`` and the sizes of ``shape_feature``, checked."""
        fail, value_name, shape_name = self.fail, self.value_name, self.shape_name
        rank = self.rank
        values = flat_values(value[1]) if value is not None else []
        if values and value is not None and value[0] != BYTES:
            raise fail(
                f"cannot be read from its {_KINDS[value[0]]} feature '{value_name}': it holds one "
                "bytes value"
            )
        shape = flat_values(shape_feature[1]) if shape_feature is not None else []
        if shape_feature is not None:
            if shape and shape_feature[0] != INT64:
                raise fail(
                    f"cannot be read from its {_KINDS[shape_feature[0]]} feature '{shape_name}': "
                    "a shape is int64"
                )
            if len(shape) != rank:
                raise fail(
                    f"has a shape of {len(shape)} sizes in '{shape_name}', but its rank is {rank}"
                )
        for n, feature in ((value_name, value), (shape_name, shape_feature)):
            if feature is None:
                raise fail(
                    f"is read from the features '{value_name}' and '{shape_name}', but the "
                    f"record has no '{n}'"
                )
        if len(values) != 1:
            raise fail(f"has {len(values)} values in '{value_name}', which holds one bytes value")
        sizes = [int(s) for s in shape]
        for s in sizes:
            if s < 0 or s > 2**31 - 1:
                raise fail(f"has the size {s} in '{shape_name}'")
        return values[0], sizes

    def inflated(self, data: bytes, sizes: list[int]) -> bytes:
        """The values' bytes of ``data`` (inflated for ``zlib``), checked against ``sizes``."""
        fail, value_name, shape_name = self.fail, self.value_name, self.shape_name
        stored = self.stored
        count = 0 if 0 in sizes else math.prod(sizes)
        shape_text = "(" + ", ".join(map(str, sizes)) + ")"
        lists_bytes, above = 0, 1
        for s in sizes[:-1]:
            above = min(above * s, _MAX_ROW_BYTES)
            lists_bytes += above
        if lists_bytes > _MAX_ROW_BYTES // 8:
            raise fail(
                f"has the shape {shape_text} in '{shape_name}', whose lists do not fit in a "
                f"Spark row (at most {_MAX_ROW_BYTES} bytes)"
            )
        expected = count * stored.itemsize

        def size_mismatch(found: str) -> Mismatch:
            return fail(
                f"has {found} bytes of values in '{value_name}', but its shape {shape_text} of "
                f"{stored.itemsize}-byte values takes {expected}"
            )

        if self.deflate:
            if expected > 2**31 - 2:
                raise size_mismatch("more")
            inflater = zlib.decompressobj()
            try:
                data = inflater.decompress(data, expected + 1)
            except zlib.error as e:
                reason = str(e).split(": ", 1)[-1]
                raise fail(f"has a bad zlib stream in '{value_name}': {reason}") from None
            if len(data) > expected:
                raise size_mismatch("more")
            if not inflater.eof:
                raise fail(
                    f"has a truncated zlib stream in '{value_name}' ({len(data)} bytes inflated)"
                )
        if len(data) != expected:
            raise size_mismatch(str(len(data)))
        return data


def _shaped(flat: list[Any], sizes: list[int]) -> list[Any]:
    """``flat`` (C order) as nested lists of the sizes ``sizes``."""
    if len(sizes) == 1:
        return flat
    step = math.prod(sizes[1:])
    return [_shaped(flat[i * step : (i + 1) * step], sizes[1:]) for i in range(sizes[0])]
