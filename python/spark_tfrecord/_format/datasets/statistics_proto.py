"""TFDV's ``DatasetFeatureStatisticsList`` (``statistics.proto``) encoded and decoded."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from spark_tfrecord._format.entries.wire import delimited, skip, varint
from spark_tfrecord._format.frames import packing

#: ``FeatureNameStatistics.Type``.
INT, FLOAT, STRING, BYTES, STRUCT = 0, 1, 2, 3, 4
#: ``Histogram.HistogramType``.
STANDARD, QUANTILES = 0, 1


@dataclass
class Histogram:
    """``Histogram``: buckets of (low value, high value, sample count)."""

    buckets: list[tuple[float, float, float]]
    type: int = STANDARD
    num_nan: int = 0


@dataclass
class WeightedCommon:
    """``WeightedCommonStatistics``: each example counted by its weight."""

    num_non_missing: float = 0.0
    num_missing: float = 0.0
    avg_num_values: float = 0.0
    tot_num_values: float = 0.0


@dataclass
class Presence:
    """``PresenceAndValencyStatistics``: one level of a nested feature (examples, then steps)."""

    num_non_missing: int = 0
    num_missing: int = 0
    min_num_values: int = 0
    max_num_values: int = 0
    tot_num_values: int = 0


@dataclass
class Common:
    """``CommonStatistics``; for a nested feature, ``presence`` (and weighted) per level."""

    num_non_missing: int = 0
    num_missing: int = 0
    min_num_values: int = 0
    max_num_values: int = 0
    avg_num_values: float = 0.0
    tot_num_values: int = 0
    num_values_histogram: Histogram | None = None
    weighted: WeightedCommon | None = None
    presence: list[Presence] = field(default_factory=list)
    weighted_presence: list[WeightedCommon] = field(default_factory=list)


@dataclass
class WeightedNumeric:
    """``WeightedNumericStatistics``."""

    mean: float = 0.0
    std_dev: float = 0.0
    median: float = 0.0
    histograms: list[Histogram] = field(default_factory=list)


@dataclass
class Numeric:
    """``NumericStatistics``."""

    mean: float = 0.0
    std_dev: float = 0.0
    num_zeros: int = 0
    min: float = 0.0
    median: float = 0.0
    max: float = 0.0
    histograms: list[Histogram] = field(default_factory=list)
    weighted: WeightedNumeric | None = None


@dataclass
class Strings:
    """``StringStatistics``: (value, count) lists, most frequent first; ``weighted``: likewise."""

    unique: int = 0
    top_values: list[tuple[str, float]] = field(default_factory=list)
    avg_length: float = 0.0
    rank: list[tuple[str, float]] = field(default_factory=list)
    invalid_utf8_count: int = 0
    weighted: tuple[list[tuple[str, float]], list[tuple[str, float]]] | None = None


@dataclass
class Feature:
    """``FeatureNameStatistics``: ``numeric`` for INT/FLOAT, ``strings`` for STRING, or neither."""

    path: list[str]
    type: int
    common: Common
    numeric: Numeric | None = None
    strings: Strings | None = None
    custom: list[tuple[str, Histogram]] = field(default_factory=list)


@dataclass
class DatasetStatistics:
    """``DatasetFeatureStatistics``."""

    num_examples: int
    features: list[Feature]
    name: str = ""
    weighted_num_examples: float | None = None


# --- writing --------------------------------------------------------------------------------------


def _key(number: int, wire_type: int) -> bytes:
    return packing.varint(number << 3 | wire_type)


def _uint(number: int, value: int) -> bytes:
    return _key(number, 0) + packing.varint(value & 0xFFFFFFFFFFFFFFFF) if value else b""


def _double(number: int, value: float) -> bytes:
    return _key(number, 1) + struct.pack("<d", value) if value != 0 or str(value)[0] == "-" else b""


def _float(number: int, value: float) -> bytes:
    return _key(number, 5) + struct.pack("<f", value) if value != 0 else b""


def _message(number: int, body: bytes, always: bool = False) -> bytes:
    if not body and not always:
        return b""
    return _key(number, 2) + packing.varint(len(body)) + body


def _text(number: int, value: str) -> bytes:
    return _message(number, value.encode("utf-8"))


def _histogram(h: Histogram) -> bytes:
    body = _uint(1, h.num_nan)
    for low, high, count in h.buckets:
        bucket = _double(1, low) + _double(2, high) + _double(4, count)
        body += _message(3, bucket, always=True)
    return body + _uint(4, h.type)


def _weighted_common(w: WeightedCommon) -> bytes:
    body = _double(1, w.num_non_missing) + _double(2, w.num_missing)
    return body + _double(3, w.avg_num_values) + _double(4, w.tot_num_values)


def _common(c: Common) -> bytes:
    body = _uint(1, c.num_non_missing) + _uint(2, c.num_missing)
    body += _uint(3, c.min_num_values) + _uint(4, c.max_num_values)
    body += _float(5, c.avg_num_values)
    if c.num_values_histogram is not None:
        body += _message(6, _histogram(c.num_values_histogram), always=True)
    if c.weighted is not None:
        body += _message(7, _weighted_common(c.weighted), always=True)
    for p in c.presence:
        level = _uint(1, p.num_non_missing) + _uint(2, p.num_missing)
        level += _uint(3, p.min_num_values) + _uint(4, p.max_num_values)
        body += _message(10, level + _uint(5, p.tot_num_values), always=True)
    body += b"".join(_message(11, _weighted_common(w), always=True) for w in c.weighted_presence)
    return body + _uint(8, c.tot_num_values)


def _top_and_rank(
    top: list[tuple[str, float]], rank: list[tuple[str, float]], number: int
) -> tuple[bytes, bytes]:
    """The ``top_values`` (field ``number``) and the ``RankHistogram``'s body."""
    tops = [_text(2, value) + _double(3, count) for value, count in top]
    buckets = b""
    for i, (label, count) in enumerate(rank):
        bucket = _uint(1, i) + _uint(2, i) + _text(4, label) + _double(5, count)
        buckets += _message(1, bucket, always=True)
    return b"".join(_message(number, t, always=True) for t in tops), buckets


def _feature(f: Feature) -> bytes:
    body = _message(8, b"".join(_text(1, step) for step in f.path), always=True)
    body += _uint(2, f.type)
    common = _message(1, _common(f.common), always=True)
    if f.numeric is not None:
        n = f.numeric
        stats = common + _double(2, n.mean) + _double(3, n.std_dev) + _uint(4, n.num_zeros)
        stats += _double(5, n.min) + _double(6, n.median) + _double(7, n.max)
        stats += b"".join(_message(8, _histogram(h), always=True) for h in n.histograms)
        if n.weighted is not None:
            w = n.weighted
            weighted = _double(1, w.mean) + _double(2, w.std_dev) + _double(3, w.median)
            weighted += b"".join(_message(4, _histogram(h), always=True) for h in w.histograms)
            stats += _message(9, weighted, always=True)
        body += _message(3, stats, always=True)
    elif f.strings is not None:
        s = f.strings
        tops, buckets = _top_and_rank(s.top_values, s.rank, 3)
        stats = common + _uint(2, s.unique) + tops + _float(4, s.avg_length)
        if s.rank:
            stats += _message(5, buckets, always=True)
        if s.weighted is not None:
            # WeightedStringStatistics numbers its top values 1 and its rank histogram 2.
            tops, buckets = _top_and_rank(*s.weighted, 1)
            weighted = tops + (_message(2, buckets, always=True) if s.weighted[1] else b"")
            stats += _message(6, weighted)  # none, as TFDV's, when no value weighs enough
        stats += _uint(8, s.invalid_utf8_count)
        body += _message(4, stats, always=True)
    elif f.type == STRUCT:
        body += _message(7, common, always=True)
    for name, h in f.custom:  # CustomStatistic: its name, and a histogram (field 4)
        custom = _text(1, name) + _message(4, _histogram(h), always=True)
        body += _message(6, custom, always=True)
    return body


def encode(datasets: list[DatasetStatistics]) -> bytes:
    """The binary ``DatasetFeatureStatisticsList`` of ``datasets``."""
    out = b""
    for d in datasets:
        body = _text(1, d.name) + _uint(2, d.num_examples)
        body += b"".join(_message(3, _feature(f), always=True) for f in d.features)
        if d.weighted_num_examples is not None:
            body += _double(4, d.weighted_num_examples)
        out += _message(1, body, always=True)
    return out


# --- reading --------------------------------------------------------------------------------------


def fields(buf: bytes, start: int = 0, end: int | None = None) -> dict[int, list[Any]]:
    """The fields of ``buf[start:end]`` by number: int (varint), bytes, or float (fixed)."""
    end = len(buf) if end is None else end
    out: dict[int, list[Any]] = {}
    pos = start
    while pos < end:
        key, pos = varint(buf, pos, end)
        number, wire_type = key >> 3, key & 7
        value: Any
        if wire_type == 0:
            value, pos = varint(buf, pos, end)
        elif wire_type == 2:
            s, e = delimited(buf, pos, end)
            value, pos = buf[s:e], e
        elif wire_type in (1, 5):
            after = skip(buf, pos, end, wire_type)
            value, pos = struct.unpack("<d" if wire_type == 1 else "<f", buf[pos:after])[0], after
        else:
            pos = skip(buf, pos, end, wire_type)
            continue
        out.setdefault(number, []).append(value)
    return out


def _one(f: dict[int, list[Any]], number: int, default: Any = 0) -> Any:
    values = f.get(number)
    return values[-1] if values else default


def _read_presence(buf: bytes) -> Presence:
    f = fields(buf)
    return Presence(*(int(_one(f, number)) for number in (1, 2, 3, 4, 5)))


def _read_common(buf: bytes) -> Common:
    f = fields(buf)
    return Common(
        num_non_missing=int(_one(f, 1)),
        num_missing=int(_one(f, 2)),
        min_num_values=int(_one(f, 3)),
        max_num_values=int(_one(f, 4)),
        avg_num_values=float(_one(f, 5)),
        tot_num_values=int(_one(f, 8)),
        presence=[_read_presence(bytes(level)) for level in f.get(10, [])],
    )


def _read_feature(buf: bytes) -> Feature:
    f = fields(buf)
    if 8 in f:
        path = [bytes(s).decode() for s in fields(bytes(f[8][-1])).get(1, [])]
    else:
        path = [bytes(_one(f, 1, b"")).decode()]
    type_ = int(_one(f, 2))
    feature = Feature(path, type_, Common())
    for number in (3, 4, 5, 7):  # num_stats, string_stats, bytes_stats, struct_stats
        if number in f:
            stats = fields(bytes(f[number][-1]))
            feature.common = _read_common(bytes(_one(stats, 1, b"")))
            if number == 3:
                mean, low, high = (float(_one(stats, k)) for k in (2, 5, 7))
                feature.numeric = Numeric(mean=mean, min=low, max=high)
            elif number == 4:
                feature.strings = _read_strings(stats)
    return feature


def _read_strings(stats: dict[int, list[Any]]) -> Strings:
    s = Strings(unique=int(_one(stats, 2)), invalid_utf8_count=int(_one(stats, 8)))
    for top in stats.get(3, []):
        t = fields(bytes(top))
        s.top_values.append((bytes(_one(t, 2, b"")).decode(), float(_one(t, 3))))
    if 5 in stats:
        for bucket in fields(bytes(stats[5][-1])).get(1, []):
            b = fields(bytes(bucket))
            s.rank.append((bytes(_one(b, 4, b"")).decode(), float(_one(b, 5))))
    return s


def decode(data: bytes) -> list[DatasetStatistics]:
    """The datasets of a binary ``DatasetFeatureStatisticsList``, as schema inference reads them."""
    out = []
    for d in fields(data).get(1, []):
        f = fields(bytes(d))
        features = [_read_feature(bytes(x)) for x in f.get(3, [])]
        name = bytes(_one(f, 1, b"")).decode()
        out.append(DatasetStatistics(int(_one(f, 2)), features, name))
    return out
