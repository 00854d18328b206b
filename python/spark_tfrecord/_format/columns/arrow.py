"""Arrow arrays (pyarrow's ``Array`` interface) read as NumPy, without importing pyarrow."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from spark_tfrecord._format.frames.packing import Bytes, Ints, Mask

#: Seconds in each unit an Arrow timestamp may have, as a divisor to microseconds.
_PER_MICRO = {"s": -1_000_000, "ms": -1_000, "us": 1, "ns": 1_000}


def type_name(a: Any) -> str:
    """The array's Arrow type as text (``int64``, ``large_string``, ``timestamp[us, tz=UTC]``)."""
    return str(a.type)


def valid(a: Any) -> Mask | None:
    """Which values are not null, or None when none is."""
    if a.null_count == 0:
        return None
    bitmap = a.buffers()[0]
    n = len(a)
    if bitmap is None:  # a null type, or a union: every value is null
        return np.zeros(n, np.bool_)
    return _bits(bitmap, a.offset, n)


def present(a: Any, n: int) -> Mask:
    """Which values are not null, as an array of n."""
    v = valid(a)
    return np.ones(n, np.bool_) if v is None else v


def _bits(buffer: Any, offset: int, n: int) -> Mask:
    raw = np.frombuffer(buffer, np.uint8)
    bits = np.unpackbits(raw, bitorder="little")[offset : offset + n]
    return bits.astype(np.bool_)


def fixed(a: Any, dtype: str) -> npt.NDArray[Any]:
    """A fixed-width array's values as a view of its data buffer (a null's: whatever is there)."""
    buf = a.buffers()[1]
    if buf is None:
        return np.zeros(len(a), dtype)
    return np.frombuffer(buf, dtype)[a.offset : a.offset + len(a)]


def booleans(a: Any) -> npt.NDArray[np.int64]:
    """A boolean array's values as 0 and 1."""
    buf = a.buffers()[1]
    if buf is None:
        return np.zeros(len(a), np.int64)
    return _bits(buf, a.offset, len(a)).astype(np.int64)


def micros(a: Any) -> npt.NDArray[np.int64]:
    """A timestamp array's values in microseconds since 1970-01-01 (Spark's unit)."""
    values = fixed(a, "<i8")
    per = _PER_MICRO[str(getattr(a.type, "unit", "us"))]
    if per == 1:
        return values
    return values * -per if per < 0 else np.floor_divide(values, per)


def nanos_of_day(a: Any) -> npt.NDArray[np.int64]:
    """A time32 or time64 array's values in nanoseconds since midnight (Spark's ``TIME`` unit)."""
    t = type_name(a)
    if t.startswith("time32"):
        per = 1_000_000 if t == "time32[ms]" else 1_000_000_000
        return fixed(a, "<i4").astype(np.int64) * per
    values = fixed(a, "<i8")
    return values * 1000 if t == "time64[us]" else values


def days(a: Any) -> npt.NDArray[np.int64]:
    """A date array's values in days since 1970-01-01 (date32, or date64's milliseconds)."""
    if type_name(a) == "date64[ms]":
        return fixed(a, "<i8") // 86_400_000
    return fixed(a, "<i4").astype(np.int64)


def binary(a: Any) -> tuple[Bytes, Ints]:
    """A string or binary array's bytes and n+1 offsets into them (int64)."""
    n = len(a)
    if n == 0:  # its offsets buffer may be empty (see list_offsets)
        return np.zeros(0, np.uint8), np.zeros(1, np.int64)
    buffers = a.buffers()
    wide = type_name(a).startswith("large_")
    off = np.frombuffer(buffers[1], "<i8" if wide else "<i4")[a.offset : a.offset + n + 1]
    data = buffers[2]
    buf = np.zeros(0, np.uint8) if data is None else np.frombuffer(data, np.uint8)
    return buf, off.astype(np.int64)


def list_offsets(a: Any) -> Ints:
    """A list array's n+1 offsets into :func:`list_values` (int64, the first 0)."""
    if len(a) == 0:
        # Spark's ArrowWriter gives an empty list array an empty offsets buffer (Arrow allows it).
        return np.zeros(1, np.int64)
    off = np.asarray(a.offsets.to_numpy(zero_copy_only=False), np.int64)
    return off - off[0] if off[0] else off


def list_values(a: Any) -> Any:
    """A list array's child sliced to its rows (no copy), as :func:`list_offsets` index it."""
    values = a.values
    if len(a) == 0:
        return values.slice(0, 0)
    start, stop = a.offsets[0].as_py(), a.offsets[-1].as_py()
    if start == 0 and stop == len(values):
        return values
    return values.slice(start, stop - start)


def child(a: Any, i: int) -> Any:
    """Field ``i`` of a struct array, sliced as the struct is."""
    return a.field(i)


def decimal_words(a: Any) -> npt.NDArray[np.int64]:
    """A decimal128 array's unscaled values as (low, high) int64 pairs, one row each."""
    return np.frombuffer(a.buffers()[1], "<i8").reshape(-1, 2)[a.offset : a.offset + len(a)]
