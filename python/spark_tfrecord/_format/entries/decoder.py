"""The ``tf.train.Example`` wire format, decoded in Python for trainers: no TensorFlow, no JVM.

:class:`ExampleDecoder` is built once for the feature keys a reader wants; :meth:`decode` walks
one serialized Example (:func:`spark_tfrecord._format.entries.walk.entries`) and returns, per wanted
key, its kind and values (:mod:`spark_tfrecord._format.entries.lists`). Keys not wanted are skipped
by their length, never parsed.

Why this and not the ``protobuf`` package's parser (upb, in C): parsing is fast there, but a
trainer then walks generic message objects feature by feature (``features.feature[key]
.float_list.value``), one Python object per value, and protobuf becomes a dependency whose
version must suit TensorFlow's. Here a packed float list becomes an ndarray in one
``numpy.frombuffer``, a packed int64 list one vectorized varint decode, and only the wanted keys
are touched (benchmarks/loaders.py measures both ways).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from spark_tfrecord._format.entries.walk import CONTEXT, entries, feature_values, steps
from spark_tfrecord._format.entries.wire import MalformedRecord

__all__ = ["STEPS", "ExampleDecoder", "MalformedRecord"]

#: Not a ``Feature`` kind: a SequenceExample's ``FeatureList``, whose values are its steps'
#: ``(kind, values)``, one per ``Feature``.
STEPS = -1


class ExampleDecoder:
    """Decodes the features named ``keys`` from serialized Examples (with ``sequence``,
    SequenceExamples: the context's features and the feature lists); built once per reader."""

    def __init__(self, keys: Sequence[str], sequence: bool = False) -> None:
        self.keys = tuple(keys)
        self._slots = {k.encode("utf-8"): i for i, k in enumerate(self.keys)}
        self._width = len(self.keys)
        #: Whether the last record decoded gave a wanted key twice (the last Feature wins).
        self.repeated = False
        self._sequence = sequence

    def decode(
        self, buf: bytes, visit: Callable[[int, tuple[int, Any]], None] | None = None
    ) -> list[tuple[int, Any] | None]:
        """Per key: None when the record has no such feature, else ``(kind, values)``: kind one
        of :data:`UNSET` (values None), :data:`BYTES` (a list of bytes), :data:`FLOAT` (a
        float32 ndarray), :data:`INT64` (a list of ints or an int64 ndarray), or in a
        SequenceExample :data:`STEPS` for a feature list (values: its steps, a list of
        ``(kind, values)``). A key that appears twice takes its last Feature, as a protobuf
        map does, and a key both a context feature and a feature list counts as given twice.
        Raises :class:`MalformedRecord`. ``visit(slot, feature)``, if given, is called with each
        wanted Feature and feature list in the record's order, every occurrence of a key given
        twice included: an error it raises stops the walk there, as the jar's walk stops."""
        out: list[tuple[int, Any] | None] = [None] * self._width
        repeated = False
        slots = self._slots
        for field, key, start, end in entries(buf, self._sequence):
            slot = slots.get(key)
            if slot is None:
                continue
            try:
                if field == CONTEXT:
                    found = feature_values(buf, start, end)
                else:
                    found = (STEPS, [feature_values(buf, a, b) for a, b in steps(buf, start, end)])
            except MalformedRecord as e:
                raise MalformedRecord(e.reason, self.keys[slot]) from None
            if out[slot] is not None:
                repeated = True
            out[slot] = found
            if visit is not None:
                visit(slot, found)
        self.repeated = repeated
        return out
