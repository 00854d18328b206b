"""A batch of serialized SequenceExamples located at once, with NumPy, as
:mod:`spark_tfrecord._format.entries.batch` locates Examples.

A SequenceExample as writers lay it out (ours, the jar's, TensorFlow's) is its ``context``
field (``0x0A``, a length, a ``Features``' map entries: an Example's bytes exactly), then its
``feature_lists`` field (``0x12``, a length, map entries whose values are ``FeatureList``\\ s),
either absent. So each record's two fields are found in a few NumPy calls; the context's
features are located by :func:`batch.locate` as an Example's (its layout predicted), the feature
lists by the same walk (:func:`batch.walk` with ``lists``), and a feature list's steps
(``Feature``\\ s, each ``0x0A``, a length, the Feature) by :func:`steps`, one NumPy step per
step, each step's Feature then read as the walk reads a record's.

A record laid out otherwise (the fields in the other order or twice, unknown fields), or with a
wanted key in the wrong field (a feature list's name in the context, or the other way round:
the record path's error) is left to the record decoder
(:class:`spark_tfrecord._format.entries.decoder.ExampleDecoder`): ``fallback``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from spark_tfrecord._format.entries import batch
from spark_tfrecord._format.entries.batch import Located
from spark_tfrecord._format.entries.entries import bytes_entries
from spark_tfrecord._format.entries.wire import varints_at


class Sequenced(Located):
    """Where each wanted feature is in each record of a batch of SequenceExamples: the
    context's features as :class:`Located` has an Example's (so that the Example's columns
    read them), and ``lists``: each wanted feature list's ``FeatureList`` (its payload: the
    steps), a :class:`Located` of kind :data:`batch.FEATURE_LIST` where the record has it."""

    lists: Located


def _field(u8: Any, at: Any, end: Any, tag: int, ok: Any) -> tuple[Any, Any]:
    """Where the field of ``tag`` that each record may have at ``at`` ends (``at``: it has
    none), and ``ok`` with False where its length cannot be read or runs past ``end``."""
    has = (at < end) & (u8[np.minimum(at, len(u8) - 1)] == tag)
    length, body, read = varints_at(u8, at + 1, ok)
    after = np.where(has, body + length, at)
    return after, ok & (~has | read) & (after <= end)


def locate(
    buf: bytes, starts: Any, stops: Any, keys: Sequence[bytes], listed: Sequence[bool]
) -> Sequenced:
    """Finds the features ``keys`` in the SequenceExamples ``buf[starts[r]:stops[r]]``: in
    the context where ``listed[w]`` is False, in the feature lists where it is True."""
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
    """The steps of feature list ``slot`` in the located batch: each step's ``Feature``
    located (a :class:`Located` of one feature, slot 0, over the batch's steps, record after
    record), and how many steps each record's list holds (0 where it has none); None where a
    ``FeatureList`` or a step strays from the layout writers produce (the record path's)."""
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
