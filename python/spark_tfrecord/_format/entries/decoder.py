"""The ``tf.train.Example`` wire format, decoded in Python for trainers: no TensorFlow, no JVM.
Not protobuf's parser: only wanted keys are parsed, and a packed list is one NumPy call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from spark_tfrecord._format.entries.walk import CONTEXT, entries, feature_values, steps
from spark_tfrecord._format.entries.wire import MalformedRecord

__all__ = ["STEPS", "ExampleDecoder", "MalformedRecord"]

#: Not a ``Feature`` kind: a ``FeatureList``, whose values are its steps' ``(kind, values)``.
STEPS = -1


class ExampleDecoder:
    """Decodes the features ``keys`` of serialized Examples (``sequence``: SequenceExamples)."""

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
        """Per wanted key: None when absent, else ``(kind, values)``; raises MalformedRecord.
        Kinds: :data:`UNSET` (None), :data:`BYTES` (bytes list), :data:`FLOAT` (float32 ndarray),
        :data:`INT64` (ints or int64 ndarray), :data:`STEPS` (the steps' ``(kind, values)``). The
        last occurrence of a repeated key wins (a context feature and feature list both count).
        ``visit(slot, feature)`` sees each wanted occurrence in order; its error stops the walk.
        """
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
