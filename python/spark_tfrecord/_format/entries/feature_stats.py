"""What a sample says of each feature, as the jar's ``TFRecordSchemaInferencer`` gathers it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spark_tfrecord._format.entries.walk import CONTEXT, entries, feature, steps
from spark_tfrecord._format.entries.wire import BYTES, FLOAT, INT64, UNSET

#: The type inference gives each kind (``TypeTable.inferred``), by whether bytes were not UTF-8.
_TYPES = {INT64: "long", FLOAT: "float"}


class FeatureStats:
    """What the sample says of one feature (as a context feature, or as a feature list)."""

    __slots__ = ("binary", "kind", "max_values")

    def __init__(self) -> None:
        self.kind = UNSET
        self.max_values = 0
        #: Whether a bytes value was met that is not well-formed UTF-8.
        self.binary = False

    def merge(self, other: FeatureStats) -> None:
        self.kind = merge_kinds(self.kind, other.kind)
        self.max_values = max(self.max_values, other.max_values)
        self.binary = self.binary or other.binary

    def data_type(self) -> str:
        return _TYPES.get(self.kind) or ("binary" if self.binary else "string")


def merge_kinds(a: int, b: int) -> int:
    """int64 + float → float; bytes + anything → bytes; unset takes the other."""
    if a == UNSET:
        return b
    if b == UNSET or a == b:
        return a
    return BYTES if BYTES in (a, b) else FLOAT


class SampledFeatures:
    """Feature names numbered as first met, with context and feature-list stats (None: unmet)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.stats: list[FeatureStats | None] = []
        self.list_stats: list[FeatureStats | None] = []
        self.numbers: dict[bytes | str, int] = {}

    def number(self, name: str) -> int:
        n = self.numbers.get(name)
        if n is None:
            n = self.numbers[name] = len(self.names)
            self.names.append(name)
            self.stats.append(None)
            self.list_stats.append(None)
        return n

    def context(self, key: bytes) -> FeatureStats:
        n = self.numbers.get(key)
        if n is None:
            n = self.number(key.decode("utf-8", "replace"))
            self.numbers[key] = n
        s = self.stats[n]
        if s is None:
            s = self.stats[n] = FeatureStats()
        return s

    def feature_list(self, key: bytes) -> FeatureStats:
        n = self.numbers.get(key)
        if n is None:
            n = self.number(key.decode("utf-8", "replace"))
            self.numbers[key] = n
        s = self.list_stats[n]
        if s is None:
            s = self.list_stats[n] = FeatureStats()
        return s

    def merge(self, other: SampledFeatures) -> None:
        """Adds what ``other`` knows, numbering the names it meets first after these."""
        for i, name in enumerate(other.names):
            n = self.number(name)
            theirs, lists = other.stats[i], other.list_stats[i]
            if theirs is not None:
                mine = self.stats[n]
                if mine is None:
                    mine = self.stats[n] = FeatureStats()
                mine.merge(theirs)
            if lists is not None:
                mine = self.list_stats[n]
                if mine is None:
                    mine = self.list_stats[n] = FeatureStats()
                mine.merge(lists)


def _is_utf8(values: Sequence[bytes]) -> bool:
    try:
        for v in values:
            v.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _note(s: FeatureStats, kind: int, lists: list[Any], count: bool) -> None:
    s.kind = merge_kinds(s.kind, kind)
    if count:
        s.max_values = max(s.max_values, sum(len(v) for v in lists))
    if kind == BYTES and not s.binary and not all(_is_utf8(v) for v in lists):
        s.binary = True


def add_record(buf: bytes, features: SampledFeatures, sequence: bool) -> None:
    """Adds what one Example (or SequenceExample) says of its features to ``features``."""
    for field, key, start, end in entries(buf, sequence):
        if field == CONTEXT:
            kind, lists = feature(buf, start, end)
            _note(features.context(key), kind, lists, True)
            continue
        s = features.feature_list(key)
        for a, b in steps(buf, start, end):
            kind, lists = feature(buf, a, b)
            _note(s, kind, lists, False)
