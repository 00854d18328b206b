"""TFDV's histograms from quantiles, as TFDV's ``utils/quantiles_util.py`` (1.16) builds them."""

from __future__ import annotations

import math

from spark_tfrecord._format.datasets.statistics_proto import QUANTILES, STANDARD, Histogram

Bucket = tuple[float, float, float]


def median(quantiles: list[float]) -> float:
    """The middle boundary (the mean of the two middle ones of an even number)."""
    n = len(quantiles)
    if n % 2 == 0:
        return (quantiles[n // 2 - 1] + quantiles[n // 2]) / 2.0
    return quantiles[n // 2]


def _bin_weights(bounds: list[float], cumulative: list[float]) -> list[Bucket]:
    """Buckets between consecutive boundaries with their counts; runs of one bound evened out."""
    low, high = bounds[:-1], bounds[1:]
    counts = [b - a for a, b in zip(cumulative, cumulative[1:])]
    i = 0
    while i < len(low):
        j = i + 1
        while j < len(low) and high[i] == high[j]:
            j += 1
        if j > i + 1:
            spread = sum(counts[i:j]) / (j - i)
            counts[i:j] = [spread] * (j - i)
        i = j
    i = 0
    while i < len(low) and low[0] == low[i] and high[0] == high[i]:
        i += 1
    if i > 0:
        for k in range(i):
            counts[k] += cumulative[0] / i
    return [(low[k], high[k], counts[k]) for k in range(len(low))]


def quantiles_histogram(quantiles: list[float], cumulative: list[float]) -> Histogram:
    """The QUANTILES histogram of these boundaries and cumulative counts."""
    return Histogram(_bin_weights(quantiles, cumulative), QUANTILES)


def rebin(
    quantiles: list[float], cumulative: list[float], factor: int
) -> tuple[list[float], list[float]]:
    """Every ``factor``-th boundary (and the first), with its cumulative count."""
    return [quantiles[0], *quantiles[factor::factor]], [cumulative[0], *cumulative[factor::factor]]


def _strip_infinities(
    quantiles: list[float], cumulative: list[float], finite_max: float, pos_inf: float
) -> tuple[list[float], list[float], float]:
    neg = sum(1 for q in quantiles if q == -math.inf)
    num_neg_inf = 0.0
    if neg:
        num_neg_inf = cumulative[neg - 1]
        quantiles = quantiles[neg:]
        cumulative = [c - num_neg_inf for c in cumulative[neg:]]
    if pos_inf:
        at = next((i for i, q in enumerate(quantiles) if q >= math.inf), len(quantiles))
        finite_max_count = cumulative[-1] - pos_inf
        quantiles = [*quantiles[:at], finite_max]
        cumulative = [*cumulative[:at], finite_max_count]
    return quantiles, cumulative, num_neg_inf


def _overlap(bucket: Bucket, low: float, high: float, first: bool) -> tuple[float, bool, bool]:
    """The fraction of ``bucket`` in [low, high], whether it lies before, whether after."""
    b_low, b_high, _ = bucket
    if b_high == b_low == low:
        return (1.0, False, False) if first else (0.0, True, False)
    if b_high < low:
        return 0.0, True, False
    if b_low > high:
        return 0.0, False, True
    if low <= b_low and high >= b_high:
        return 1.0, False, False
    if low <= b_low:
        return (high - b_low) / (b_high - b_low), False, False
    if high >= b_high:
        return (b_high - low) / (b_high - b_low), False, False
    return (high - low) / (b_high - b_low), False, False


def equi_width_histogram(
    quantiles: list[float],
    cumulative: list[float],
    finite_min: float,
    finite_max: float,
    num_buckets: int,
    pos_inf: float,
) -> Histogram:
    """The STANDARD histogram: ``num_buckets`` equal buckets over the finite range, ±inf apart."""
    if not math.isfinite(finite_min) and not math.isfinite(finite_max):
        return Histogram([(finite_min, finite_max, cumulative[-1])], STANDARD)
    quantiles, cumulative, num_neg_inf = _strip_infinities(
        quantiles, cumulative, finite_max, pos_inf
    )
    fine = _bin_weights(quantiles, cumulative)
    if finite_min == finite_max:
        bounds = [finite_min, finite_max]
    else:
        step = (finite_max - finite_min) / num_buckets
        bounds = [finite_min + k * step for k in range(num_buckets)] + [finite_max]
        if not all(math.isfinite(b) for b in bounds):
            return Histogram([], STANDARD)
    out: list[Bucket] = []
    if num_neg_inf:
        out.append((-math.inf, -math.inf, num_neg_inf))
    start = 0
    for i in range(len(bounds) - 1):
        low, high = bounds[i], bounds[i + 1]
        count = 0.0
        for k in range(start, len(fine)):
            part, before, after = _overlap(fine[k], low, high, i == 0)
            if after:
                break
            if before:
                start = k
            count += part * fine[k][2]
        out.append((low, high, count))
    if pos_inf:
        out.append((math.inf, math.inf, pos_inf))
    return Histogram(out, STANDARD)


def cumulative(quantiles: list[float], total: float) -> list[float]:
    """The counts at or below each boundary; equal boundaries get the last one's rank, as TFDV's."""
    steps = len(quantiles) - 1
    out = [0.0] * len(quantiles)
    k = steps
    for i in range(steps, -1, -1):
        if i < steps and quantiles[i] != quantiles[i + 1]:
            k = i
        out[i] = total * k / steps
    return out


def numeric_histograms(
    q: list[float],
    total: float,
    finite: tuple[float, float],
    pos_inf: float,
    nan: int,
    buckets: int,
) -> tuple[float, list[Histogram]]:
    """The median and the standard and quantiles histograms (``buckets`` each) of numbers from
    their fine quantiles ``q`` (``buckets * 100 + 1``), their ``total`` count (or weight),
    their ``finite`` min and max, the count (or weight) of +inf and the count of NaN."""
    counts = cumulative(q, total)
    standard = equi_width_histogram(q, counts, finite[0], finite[1], buckets, pos_inf)
    standard.num_nan = nan
    quantiles = quantiles_histogram(*rebin(q, counts, (len(q) - 1) // buckets))
    quantiles.num_nan = nan
    return median(q), [standard, quantiles]
