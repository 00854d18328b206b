"""Encoded tensor columns, ``<name>/value`` and ``<name>/shape``, as TFDS's ``Tensor`` stores."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from spark_tfrecord import errors
from spark_tfrecord._format.columns import arrow
from spark_tfrecord._format.columns.feature_paths import Leaf
from spark_tfrecord._format.columns.features import (
    Feature,
    Issues,
    Plan,
    column_of,
    feature,
    read_values,
)
from spark_tfrecord._format.columns.schema import (
    TENSOR_DTYPE_KEY,
    TENSOR_ELEMENTS,
    TENSOR_ENCODING_KEY,
    depth,
    innermost,
)
from spark_tfrecord._format.entries.wire import BYTES, INT64
from spark_tfrecord._format.frames.encode_errors import EncodeError, data_error
from spark_tfrecord._format.frames.packing import Bytes, offsets


def tensor_plan(leaf: Leaf, i: int) -> Plan:
    """An encoded tensor: ``x/value`` (little-endian C-order bytes, zlib if set) and ``x/shape``."""
    rank = depth(leaf.data_type)
    dtype_name = leaf.tensor[TENSOR_DTYPE_KEY]  # one of the table's: the leaves checked it
    dtype = TENSOR_ELEMENTS[dtype_name][0]
    deflate = leaf.tensor.get(TENSOR_ENCODING_KEY) == "zlib"
    t = innermost(leaf.data_type)

    def fail(what: str, row: int) -> Callable[[], EncodeError]:
        return lambda: data_error(
            errors.DATA_MISMATCH,
            leaf.column,
            f"Column '{leaf.column}' holds an encoded tensor of rank {rank} that {what} in a row: "
            "each row's value must be a rectangular array without nulls.",
            row,
        )

    def plan(batch: Any, n: int, issues: Issues) -> list[Feature | None]:
        a, present = column_of(batch, leaf, n)
        arrays = [a]
        maps = []
        for _ in range(rank):
            maps.append(arrow.list_offsets(arrays[-1]))
            arrays.append(arrow.list_values(arrays[-1]))
        flat = _tensor_values(t, arrays[-1], dtype)
        valids = [arrow.valid(x) for x in arrays[1:]]
        blobs: list[bytes] = []
        shapes: list[int] = []
        ok = True
        for row in np.flatnonzero(present).tolist():
            lo, hi = row, row + 1
            dims = []
            problem = None
            for level in range(rank):
                lengths = np.diff(maps[level][lo : hi + 1])
                if len(lengths) and not np.all(lengths == lengths[0]):
                    first = int(lengths[0])
                    other = int(lengths[np.argmax(lengths != lengths[0])])
                    problem = (
                        f"is not rectangular: its arrays at depth {level + 1} hold {first} and "
                        f"{other} values"
                    )
                    break
                dims.append(int(lengths[0]) if len(lengths) else 0)
                lo, hi = int(maps[level][lo]), int(maps[level][hi])
                ok_level = valids[level]
                if ok_level is not None and not ok_level[lo:hi].all():
                    problem = f"holds a null at depth {level + 1}"
                    break
            if problem is None and dtype_name == "uint8" and hi > lo:
                raw_values = flat[1][lo:hi]
                outside = (raw_values < 0) | (raw_values > 255)
                if outside.any():
                    v = int(raw_values[np.argmax(outside)])
                    problem = f"holds {v}, which an uint8 tensor cannot hold"
            if problem is not None:
                issues.add(row, i, (), fail(problem, row))
                ok = False
                break
            raw = flat[0][lo:hi].tobytes()
            blobs.append(zlib.compress(raw) if deflate else raw)
            shapes.extend(dims)
        if not ok:
            return [None, None]
        return _tensor_features(blobs, shapes, present, n, rank)

    return plan


def _tensor_features(
    blobs: list[bytes], shapes: list[int], present: Any, n: int, rank: int
) -> list[Feature | None]:
    """A batch's ``x/value`` (one bytes value) and ``x/shape`` (``rank`` sizes) features."""
    lengths = np.zeros(n, np.int64)
    lengths[present] = [len(b) for b in blobs]
    data = np.frombuffer(b"".join(blobs), np.uint8)
    units = np.arange(n + 1, dtype=np.int64)
    values = feature(BYTES, (data, offsets(lengths)), units, present)
    shape_counts = np.where(present, rank, 0)
    shape = feature(INT64, np.array(shapes, np.int64), offsets(shape_counts), present)
    ones = present.astype(np.int64)
    return [Feature(present, values, ones), Feature(present, shape, rank * ones)]


def _tensor_values(t: Any, a: Any, dtype: str) -> tuple[Bytes, np.ndarray[Any, Any]]:
    """An encoded tensor's values as stored (little-endian ``dtype``), and as read."""
    if t == "boolean":
        read: np.ndarray[Any, Any] = arrow.booleans(a)
    elif t in ("float", "double"):
        read = arrow.fixed(a, "<f4" if t == "float" else "<f8")
    else:
        read = read_values(t, a)  # type: ignore[assignment]
    if not len(read):
        return np.zeros((0, 1), np.uint8), read
    with np.errstate(over="ignore", invalid="ignore"):
        return read.astype(dtype).view(np.uint8).reshape(len(read), -1), read
