"""A SequenceExample's feature lists, a batch at once, for the source's batch path
(:mod:`spark_tfrecord._source.batch_arrays`): each record's list of steps, each step an item
(the list of its values; for a field of an array of structs that is not a list, its one value),
from the steps the batch decoder located in every list
(:func:`spark_tfrecord._format.entries.sequence.steps`).

A ``array<array<T>>`` column is one feature list, a list per step; an array of structs is a
feature list per field, a step per element, whose items ``batch_arrays`` zips into structs as an
Example's array of structs' fields. A step that is not what the record path reads (a field's
step of no value or of several: the record path's error) gives None: the batch is then read
record by record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from spark_tfrecord._format.entries import sequence
from spark_tfrecord._source.vector_arrays import list_offsets

#: Of a batch: the items, how many each record has, which records hold them.
Items = tuple[pa.Array, Any, Any]
#: ``BatchArrays._values``: a column's values, counts and presence in a located batch.
Gather = Callable[[Any, Any, bytes, int], "tuple[Any, Any, Any] | None"]


@dataclass
class Steps:
    """A feature list: its feature's slot, its steps' values' column plan (read from the
    batch's steps, slot 0), its Arrow type (a column's, or an array's field's item type), and
    whether each step is one value (a field of an array of structs that is not a list)."""

    slot: int
    values: Any
    target: pa.DataType
    one: bool = False


def step_items(s: Steps, located: Any, buf: bytes, gather: Gather) -> Items | None:
    """The steps of feature list ``s`` in every record of the located batch: each step's item
    (cast to ``s.target`` when ``one``; else a list of the step's values, none for a Feature of
    no kind), how many steps each record's list holds (0 where it has none), which records have
    the list; None when the batch needs the record path."""
    found = sequence.steps(buf, located.lists, s.slot)
    if found is None:
        return None
    steps, per_record = found
    got = gather(s.values, steps, buf, len(steps.fallback))
    if got is None:
        return None
    values, counts, _ = got
    made = values if isinstance(values, pa.Array) else pa.array(values, s.values.values)
    present = located.lists.kind[s.slot] >= 0
    if s.one:
        if (np.asarray(counts) != 1).any():
            return None  # a step of no value or of several: the record path's error
        return made.cast(s.target), per_record, present
    inner = pa.ListArray.from_arrays(list_offsets(counts), made)
    return inner, per_record, present
