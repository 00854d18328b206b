"""A batch's decimal values as one Arrow ``decimal128`` array, read as the jar reads them
(``TypeTable.DecimalEntry``): an int64 ``v`` is ``Decimal(v)``, a float its shortest decimal
(Java's ``Float.toString``), rounded half up to the column's scale.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from spark_tfrecord._format.entries.wire import FLOAT

#: 10**k as uint64, k from 0 to 19 (the digits of a uint64 are below 10**20).
_POW10 = np.array([10**k for k in range(20)], np.uint64)
#: 10**k, k from 0 to 38, as the low and high 64-bit words of 128.
_POW10_LOW = np.array([(10**k) & (2**64 - 1) for k in range(39)], np.uint64)
_POW10_HIGH = np.array([(10**k) >> 64 for k in range(39)], np.uint64)
#: The smallest normal float32: below it Java's ``Float.toString`` is not shortest (at scale 38).
_SMALLEST_NORMAL = np.float32(2.0**-126)
_M32 = np.uint64(0xFFFFFFFF)


def decimal_array(source: int, values: Any, target: pa.Decimal128Type) -> pa.Array | None:
    """The decimals of ``values`` (an int64 or float32 ndarray of feature kind ``source``).
    None when one is NaN, infinite, too long for the precision, or subnormal at scale 38.
    """
    precision, scale = target.precision, target.scale
    if source == FLOAT:
        values = np.asarray(values, np.float32)
        if not np.isfinite(values).all():
            return None
        if scale >= 38 and ((values != 0) & (np.abs(values) < _SMALLEST_NORMAL)).any():
            return None
        digits, exponent = _float_digits(values, scale)
    else:
        digits = np.ascontiguousarray(values, np.int64)
        exponent = np.zeros(len(digits), np.int64)
    words = unscaled(digits, exponent + scale, precision)
    if words is None:
        return None
    return pa.Array.from_buffers(target, len(digits), [None, pa.py_buffer(words)])


def _float_digits(values: Any, scale: int) -> tuple[Any, Any]:
    """Each float32 as ``n * 10**e``: rounded in float64 where sure to match its shortest one."""
    digits = np.zeros(len(values), np.int64)
    exponent = np.full(len(values), -scale, np.int64)
    unclear = np.ones(len(values), np.bool_)
    if 0 <= scale <= 22:  # 10**scale exact in float64
        magnitude = np.abs(values)
        power = 10.0**scale
        scaled = magnitude.astype(np.float64) * power
        gap = np.spacing(magnitude).astype(np.float64) * power * (0.5 + 2.0**-40)
        away = np.abs(scaled - (np.floor(scaled) + 0.5))  # from the nearest half: exact
        clear = (scaled < 2.0**52) & (away > gap + scaled * 2.0**-50)
        rounded = np.floor(scaled[clear] + 0.5).astype(np.int64)
        digits[clear] = np.where(values[clear] < 0, -rounded, rounded)
        unclear = ~clear
    if unclear.any():
        digits[unclear], exponent[unclear] = shortest_digits(values[unclear])
    return digits, exponent


def shortest_digits(values: Any) -> tuple[Any, Any]:
    """Each finite float32 as ``n * 10**e`` (int64s): its shortest decimal, from Arrow's text."""
    size = len(values)
    if not size:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    text = pa.array(values, pa.float32()).cast(pa.string())
    bounds = np.frombuffer(text.buffers()[1], np.int32, size + 1).astype(np.int64)
    data = np.frombuffer(text.buffers()[2], np.uint8)
    lengths = bounds[1:] - bounds[:-1]
    width = int(lengths.max())
    columns = np.arange(width)
    inside = columns < lengths[:, None]
    chars = np.where(inside, data[np.minimum(bounds[:-1, None] + columns, len(data) - 1)], 0)
    negative = chars[:, 0] == ord("-")
    marked = (chars == ord("e")) | (chars == ord("E"))
    exp_at = np.where(marked.any(axis=1), marked.argmax(axis=1), lengths)
    mantissa = columns < exp_at[:, None]
    dots = (chars == ord(".")) & mantissa
    dot_at = np.where(dots.any(axis=1), dots.argmax(axis=1), exp_at)
    digit = (chars >= ord("0")) & (chars <= ord("9"))
    nonzero = digit & (chars != ord("0")) & mantissa
    last = np.where(nonzero.any(axis=1), width - 1 - nonzero[:, ::-1].argmax(axis=1), -1)
    n = np.zeros(size, np.int64)
    power = np.zeros(size, np.int64)
    for k in range(width):  # over the texts' characters, not the values
        d = chars[:, k].astype(np.int64) - ord("0")
        taken = digit[:, k] & (k <= last)
        n = np.where(taken, n * 10 + d, n)
        after = digit[:, k] & (k > exp_at)
        power = np.where(after, power * 10 + d, power)
    minus = ((chars == ord("-")) & (columns > exp_at[:, None])).any(axis=1)
    power = np.where(minus, -power, power)
    shift = np.where(last < dot_at, dot_at - last - 1, dot_at - last)
    exponent = np.where(last < 0, 0, power + shift)
    return np.where(negative, -n, n), exponent


def unscaled(digits: Any, exponent: Any, precision: int) -> Any:
    """``digits * 10**exponent`` rounded half up, as decimal128 words; None: over ``precision``."""
    negative = digits < 0
    raw = digits.view(np.uint64)
    magnitude = np.where(negative, ~raw + np.uint64(1), raw)
    up = exponent >= 0
    length = np.searchsorted(_POW10, magnitude, side="right")  # its digits (0 for 0)
    if ((magnitude > 0) & up & (length + exponent > precision)).any():
        return None
    power = np.clip(exponent, 0, 38)
    low, high = _times(magnitude, _POW10_LOW[power], _POW10_HIGH[power])
    down = np.clip(-exponent, 0, 19)
    divisor = _POW10[down]
    quotient = magnitude // divisor
    rest = magnitude - quotient * divisor
    quotient += (rest >= divisor - rest).astype(np.uint64)  # half up
    quotient = np.where(-exponent > 19, np.uint64(0), quotient)  # below half of 10**20
    if precision < 20 and (quotient[~up] >= _POW10[precision]).any():
        return None
    low = np.where(up, low, quotient)
    high = np.where(up, high, np.uint64(0))
    # two's complement of the negatives: invert, add one (carried into the high word at 0)
    low_neg = ~low + np.uint64(1)
    high_neg = ~high + (low == 0).astype(np.uint64)
    words = np.empty((len(digits), 2), np.uint64)
    words[:, 0] = np.where(negative, low_neg, low)
    words[:, 1] = np.where(negative, high_neg, high)
    return words


def _times(a: Any, low: Any, high: Any) -> tuple[Any, Any]:
    """``a * (high * 2**64 + low)`` modulo 2**128, as its low and high words (uint64)."""
    a0, a1 = a & _M32, a >> np.uint64(32)
    b0, b1 = low & _M32, low >> np.uint64(32)
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    middle = (p00 >> np.uint64(32)) + (p01 & _M32) + (p10 & _M32)
    out_low = (p00 & _M32) | ((middle & _M32) << np.uint64(32))
    out_high = p11 + (p01 >> np.uint64(32)) + (p10 >> np.uint64(32)) + (middle >> np.uint64(32))
    return out_low, out_high + a * high
