"""The reader of an encoded tensor column (``c/value``, ``c/shape``), checked as by the jar."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from spark_tfrecord._format.columns.column_errors import ColumnError
from spark_tfrecord._format.columns.schema import (
    TENSOR_DTYPE_KEY,
    TENSOR_ELEMENTS,
    TENSOR_ENCODING_KEY,
    Column,
)
from spark_tfrecord._format.columns.values import Ragged
from spark_tfrecord._format.entries.wire import BYTES, FLOAT, INT64, UNSET

#: The most bytes a Spark row can hold (the jar's ``MaxRowBytes``).
_MAX_ROW_BYTES = 2**31 - 1 - 15
_KINDS = {UNSET: "unset", BYTES: "bytes_list", FLOAT: "float_list", INT64: "int64_list"}
#: A decoded feature: its kind and values (None when of no kind).
Feature = tuple[int, Any]


def tensor_reader(c: Column) -> Callable[[list[Any]], Any]:
    """The reader of encoded tensor column ``c``, which ``schema.tensor_reason`` checked."""
    return _EncodedTensor(c).read


class _EncodedTensor:
    """An encoded tensor column's reader: decided once, called per record."""

    def __init__(self, c: Column) -> None:
        dtype = c.tensor[TENSOR_DTYPE_KEY]  # one of the table's: the schema's columns checked it
        self.fail = partial(ColumnError.of, c)
        self.stored = np.dtype(TENSOR_ELEMENTS[dtype][0])
        self.bool = dtype == "bool"
        self.deflate = c.tensor.get(TENSOR_ENCODING_KEY) == "zlib"
        self.rank = c.depth
        self.value_slot, self.shape_slot = c.slots
        self.value_name, self.shape_name = c.features

    def read(self, features: list[Any]) -> Any:
        value, shape_feature = features[self.value_slot], features[self.shape_slot]
        if value is None and shape_feature is None:
            return None
        data, sizes = self.checked(value, shape_feature)
        stored = np.frombuffer(self.inflated(data, sizes), self.stored)
        if self.bool:
            flat: Any = (stored != 0).astype(np.int64)
        elif stored.dtype.kind in "iu":
            flat = stored.astype(np.int64)
        else:
            flat = stored.astype(stored.dtype.newbyteorder("="))
        if len(sizes) == 1:
            return flat
        lengths, above = [], sizes[0]
        for s in sizes[1:]:  # per list of each level, its length: the next size
            lengths.append(np.full(above, s, np.int64))
            above *= s
        return Ragged(flat, tuple(lengths))

    def checked(
        self, value: Feature | None, shape_feature: Feature | None
    ) -> tuple[bytes, list[int]]:
        """The one bytes value of ``value`` and the sizes of ``shape_feature``, checked."""
        fail, value_name, shape_name = self.fail, self.value_name, self.shape_name
        rank = self.rank
        values = _values(value)
        if len(values) and value is not None and value[0] != BYTES:
            raise fail(
                f"cannot be read from its {_KINDS[value[0]]} feature '{value_name}': it holds one "
                "bytes value"
            )
        shape = _values(shape_feature)
        if shape_feature is not None:
            if len(shape) and shape_feature[0] != INT64:
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
        return bytes(values[0]), sizes

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

        def size_mismatch(found: str) -> ColumnError:
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


def _values(feature: Feature | None) -> Any:
    """A decoded feature's values (none for an absent feature, or one of no kind)."""
    return () if feature is None or feature[1] is None else feature[1]
