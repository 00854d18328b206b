"""SequenceExamples located as :mod:`.batch` locates Examples; strays go to the record decoder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from spark_tfrecord._format.entries import batch
from spark_tfrecord._format.entries.batch import Located
from spark_tfrecord._format.entries.entries import bytes_entries
from spark_tfrecord._format.entries.wire import varints_at


class Sequenced(Located):
    """Context features as a :class:`Located`; ``lists``: each wanted ``FeatureList``'s payload."""

    lists: Located


def _field(u8: Any, at: Any, end: Any, tag: int, ok: Any) -> tuple[Any, Any]:
    """Where the optional ``tag`` field at ``at`` ends (``at`` if none); ``ok`` where it fits."""
    has = (at < end) & (u8[np.minimum(at, len(u8) - 1)] == tag)
    length, body, read = varints_at(u8, at + 1, ok)
    after = np.where(has, body + length, at)
    return after, ok & (~has | read) & (after <= end)


def locate(
    buf: bytes, starts: Any, stops: Any, keys: Sequence[bytes], listed: Sequence[bool]
) -> Sequenced:
    """Locates ``keys``: in the feature lists where ``listed[w]`` is True, else in the context."""
    u8 = np.frombuffer(buf, np.uint8)
    begin = np.asarray(starts, np.int64)
    end = np.asarray(stops, np.int64)
    ok = np.ones(len(begin), bool)
    context_end, ok = _field(u8, begin, end, 0x0A, ok)
    lists_end, ok = _field(u8, context_end, end, 0x12, ok)
    ok &= lists_end == end
    # a record that strays is read whole by the record decoder: its ranges emptied here
    context_end = np.where(ok, context_end, begin)
    lists_end = np.where(ok, lists_end, context_end)
    context = batch.locate(buf, begin, context_end, keys)
    lists = batch.walk(buf, context_end, lists_end, keys, lists=True)
    out = Sequenced.__new__(Sequenced)
    out.kind, out.start, out.stop, out.lists = context.kind, context.start, context.stop, lists
    wanted = np.asarray(listed, bool)[:, None]
    misplaced = np.where(wanted, context.kind >= 0, lists.kind >= 0).any(axis=0)
    out.fallback = context.fallback | lists.fallback | ~ok | misplaced
    return out


def steps(buf: bytes, lists: Located, slot: int) -> tuple[Located, Any] | None:
    """Feature list ``slot``'s steps located (slot 0, record-major), and counts; None: strays."""
    present = lists.kind[slot] >= 0
    start = np.where(present, lists.start[slot], 0)
    stop = np.where(present, lists.stop[slot], 0)
    found = bytes_entries(buf, start, stop)  # a step: 0x0A, a length, the Feature
    if found is None:
        return None
    first, last, counts = found
    u8 = np.frombuffer(buf, np.uint8)
    kind, payload, good = batch.feature_at(u8, first, last, np.ones(len(first), bool))
    if not good.all():
        return None
    return Located.of(kind[None, :], payload[None, :], last[None, :]), counts
