"""The Arrow columns of a whole batch of serialized Examples at once: the read's fast path.
What would be an error or needs a decision per record raises ``Fallback``: the reader then
decodes that batch record by record, so that values and errors are the record path's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
import pyarrow as pa

from spark_tfrecord._format.columns.batches import LENGTHS, Batch, Fallback
from spark_tfrecord._format.columns.conversions import Conversion, stored
from spark_tfrecord._format.columns.gathered import Gathered
from spark_tfrecord._format.columns.layout import Layout
from spark_tfrecord._format.columns.record_values import float_values
from spark_tfrecord._format.entries.entries import gather
from spark_tfrecord._format.entries.wire import MalformedRecord
from spark_tfrecord._format.frames.packing import offsets
from spark_tfrecord._source import nodes
from spark_tfrecord._source.decimal_arrays import decimal_array
from spark_tfrecord._source.nodes import VALUES, leaf_values
from spark_tfrecord._source.vector_arrays import Part, list_offsets, null_mask, vector_array

#: The largest offset of an Arrow list, string or binary array (int32 offsets).
_MAX_OFFSET = 2**31 - 1


@dataclass
class _Column:
    """One data column; ``length``: per element of an array of structs, a list that long."""

    slot: int
    listed: bool
    conversion: Conversion
    values: pa.DataType
    target: pa.DataType
    length: int = 0

    @property
    def numeric(self) -> bool:
        return not (pa.types.is_string(self.values) or pa.types.is_binary(self.values))

    @property
    def decimal(self) -> bool:
        return bool(pa.types.is_decimal(self.values))


@dataclass
class _Struct:
    """A struct column (or a struct in one): its fields' builders and Arrow fields."""

    children: list[_Node]
    fields: list[pa.Field]


@dataclass
class _Ragged:
    """A list of lists written ragged: its flat values' and row lengths' (outermost first)."""

    values: _Column
    lengths: list[_Column]
    target: pa.DataType


@dataclass
class _Array:
    """An array of structs: its element's fields (each a list with an item per element)."""

    element: _Struct
    target: pa.DataType


@dataclass
class _Vector:
    """An ML vector column: its dense feature's column and its sparse features'."""

    dense: _Column
    sparse: list[_Column]
    target: pa.DataType


@dataclass
class _Steps:
    """A feature list: its steps' values' column; ``one``: each step is one value (not a list)."""

    slot: int
    values: _Column
    target: pa.DataType
    one: bool = False


_Node = Union[_Column, _Struct, _Ragged, _Array, _Vector, _Steps]


def _fast(node: nodes.Node) -> _Node | None:
    """The batch builder of ``node``; None when the fast path cannot read it."""
    if isinstance(node, nodes.Elements):
        if not isinstance(node.element, nodes.Struct) or _in_array(node.element):
            return None
        made = _fast(node.element)
        return _Array(made, node.target) if isinstance(made, _Struct) else None
    if isinstance(node, nodes.Struct):
        children = [_fast(child) for child in node.children]
        if any(c is None for c in children):
            return None
        return _Struct([c for c in children if c is not None], node.fields)
    c = node.column
    if c is None or c.key != node.key or c.conversion is None:
        return None
    if isinstance(node, nodes.Vector):
        if c.shape != "vector":
            return None
        dense = _Column(c.slots[0], True, c.conversion, pa.float64(), pa.list_(pa.float64()))
        index_slot, value_slot, size_slot = c.slots[1:]
        sparse = [
            _Column(index_slot, True, LENGTHS, pa.int64(), pa.int64()),
            _Column(value_slot, True, float_values(), pa.float64(), pa.float64()),
            _Column(size_slot, True, LENGTHS, pa.int64(), pa.int64()),
        ]
        return _Vector(dense, sparse, node.target)
    shape = "ragged" if node.depth > 1 else "list" if node.depth else "scalar"
    values = _leaf_type(node.leaf, node.key)
    if values is None:
        return None
    # a decimal's values as stored: decimal_array converts the batch at once
    read = stored(c.spark) if pa.types.is_decimal(values) else c.conversion
    if c.shape == "uniform" and node.in_array and node.depth == 2 and not c.sequence:
        return _Column(c.slots[0], True, read, values, node.target, length=c.length)
    if c.shape != shape or c.in_array != node.in_array:
        return None
    if c.sequence and len(c.slots) == 1 and (c.in_array or shape == "ragged"):
        # a feature list: a list per step, or an array of structs' field, an item per step
        steps = _Column(0, True, read, values, values)
        return _Steps(c.slots[0], steps, node.target, one=shape == "list")
    if c.sequence or c.length or c.fixed is not None:
        return None
    if shape == "ragged":
        lengths = [_Column(s, True, LENGTHS, pa.int64(), pa.int64()) for s in c.slots[1:]]
        if len(lengths) != node.depth - 1:
            return None
        flat = _Column(c.slots[0], True, read, values, values)
        return _Ragged(flat, lengths, node.target)
    return _Column(c.slots[0], node.depth > 0, read, values, node.target)


def _leaf_type(leaf: Any, key: str) -> pa.DataType | None:
    """The Arrow type of leaf type ``leaf``'s values; None unless plain or a decimal."""
    if isinstance(leaf, str) and leaf in VALUES:
        return VALUES[leaf]
    if isinstance(leaf, str) and leaf.startswith("decimal("):
        return leaf_values(leaf, key)
    return None


def _in_array(node: nodes.Node) -> bool:
    """Whether an array of structs' element holds another array of structs, or a vector."""
    if isinstance(node, nodes.Struct):
        return any(_in_array(child) for child in node.children)
    return isinstance(node, (nodes.Elements, nodes.Vector))


def _columns(plan: Sequence[_Node]) -> Iterator[_Column]:
    """The columns of ``plan`` and of its structs (not those inside arrays or other nodes)."""
    for c in plan:
        if isinstance(c, _Column):
            yield c
        elif isinstance(c, _Struct):
            yield from _columns(c.children)


def _listed(items: Any, counts: Any, present: Any, of: pa.DataType | None = None) -> pa.Array:
    """A list per record of ``items``, ``counts[r]`` in record r, null where not ``present``."""
    return pa.ListArray.from_arrays(list_offsets(counts), items, of, mask=null_mask(~present))


class BatchArrays:
    """The fast path's builders of a schema's data columns, decided once (:meth:`of`)."""

    def __init__(
        self, keys: Sequence[bytes], plan: Sequence[_Node], listed: Sequence[bool] | None = None
    ) -> None:
        self.keys = list(keys)
        self.plan = list(plan)
        #: SequenceExamples: which keys are feature lists (None: the records are Examples).
        self.listed = None if listed is None else list(listed)
        #: The numeric columns' slots (in structs too), gathered at once when each has one value.
        self.numbers = sorted({c.slot for c in _columns(self.plan) if c.numeric})

    @classmethod
    def of(cls, layout: Layout, columns: Sequence[nodes.Node]) -> BatchArrays | None:
        """The builders of ``columns`` (:func:`nodes.walk`'s) with ``layout``; None: not fast."""
        made = [_fast(node) for node in columns]
        if any(m is None for m in made):
            return None
        kept = [m for m in made if m is not None]
        return cls(layout.decoder_keys, kept, layout.listed)

    def arrays(self, buf: bytes, starts: Any, stops: Any) -> list[pa.Array] | None:
        """The data columns of records ``buf[starts[r]:stops[r]]``; None: use the record path."""
        try:
            batch = Batch(self.keys, buf, starts, stops, self.listed, self.numbers)
            return [_node(c, batch) for c in self.plan]
        except (Fallback, MalformedRecord):
            return None


def _node(c: _Node, batch: Batch) -> pa.Array:
    """A node's column; a struct is null where all its fields are, as on the record path."""
    if isinstance(c, _Column):
        return _column(c, batch)
    if isinstance(c, (_Ragged, _Array, _Steps)):
        return _listed(*_items(c, batch)).cast(c.target)
    if isinstance(c, _Vector):
        return _vector(c, batch)
    children = [_node(child, batch) for child in c.children]
    null = np.ones(batch.size, np.bool_)
    for a in children:
        if a.null_count == 0:
            null[:] = False
            break
        null &= np.asarray(a.is_null())
    return pa.StructArray.from_arrays(children, fields=c.fields, mask=null_mask(null))


def _column(c: _Column, batch: Batch) -> pa.Array:
    values, counts, present = _values(c, batch)
    if c.listed:
        return _listed(values, counts, present, pa.list_(c.values)).cast(c.target)
    if (counts > 1).any():
        raise Fallback  # a scalar given several values: the record path's error
    valid = counts == 1
    if c.decimal:  # each record's value or null, taken from the batch's values
        where = pa.array(np.cumsum(valid) - 1, pa.int64(), mask=~valid)
        return values.take(where).cast(c.target)
    if c.numeric:
        if valid.all():  # (one value a record: the values as they are)
            made = pa.array(values, c.values)
        else:
            full = np.zeros(batch.size, values.dtype)
            full[valid] = values
            made = pa.array(full, c.values, mask=~valid)
        return made.cast(c.target)
    ends = np.concatenate([[0], np.cumsum(counts)])
    entry_offsets = np.frombuffer(values.buffers()[1], np.int32, len(values) + 1)
    validity = None if valid.all() else pa.array(valid, pa.bool_()).buffers()[1]
    made = pa.Array.from_buffers(
        c.values,
        batch.size,
        [validity, pa.py_buffer(entry_offsets[ends]), values.buffers()[2]],
    )
    return made.cast(c.target)


def _values(c: _Column, batch: Batch, located: Any = None, array: bool = False) -> Part:
    """The column's values, each record's count, which records hold it (of ``located``: steps)."""
    got = batch.gathered(c.slot, c.conversion, c.numeric, located)
    return _arrow(c, batch, got, array), got.counts, got.present


def _arrow(c: _Column, batch: Batch, got: Gathered, array: bool = False) -> Any:
    """``got``'s values: an Arrow array of decimals, strings, binaries or (``array``) numbers,
    else NumPy numbers.
    """
    if c.decimal:
        made = decimal_array(got.source, got.values, c.values)
        if made is None:
            raise Fallback
        return made
    if c.numeric:
        values = got.values.astype(c.values.to_pandas_dtype(), copy=False)
        return pa.array(values, c.values) if array else values
    return _bytes(c, batch.buf, got.first, got.last)


def _vector(v: _Vector, batch: Batch) -> pa.Array:
    """The vector column (:func:`vector_array`)."""
    dense = _values(v.dense, batch)
    sparse = None
    if any(batch.present(c.slot).any() for c in v.sparse):
        sparse = [_values(c, batch) for c in v.sparse]
    made = vector_array(dense, sparse, batch.size, v.target)
    if made is None:
        raise Fallback
    return made


def _items(c: _Node, batch: Batch) -> Part:
    """The items of a list per record (not cast), each record's count and which records hold them.
    A struct field a record lacks is null in each element, as the jar's ``NestedRowAssembler``.
    """
    if isinstance(c, _Column):
        made, counts, present = _values(c, batch, array=True)
        if c.length:  # k values an element: the record path's error unless all are
            if (counts % c.length).any():
                raise Fallback
            bounds = np.arange(0, len(made) + 1, c.length, dtype=np.int32)
            made, counts = pa.ListArray.from_arrays(bounds, made), counts // c.length
        return made, counts, present
    if isinstance(c, _Ragged):  # its features ragged_flat_values and ragged_row_lengths_k
        flat, levels = batch.ragged(
            [c.values.slot, *(level.slot for level in c.lengths)],
            c.values.conversion,
            c.values.numeric,
            _MAX_OFFSET,
        )
        made = _arrow(c.values, batch, flat, array=True)
        for lengths, _ in reversed(levels):
            made = pa.ListArray.from_arrays(list_offsets(lengths), made)
        return made, levels[0][1], flat.present
    if isinstance(c, _Steps):  # a SequenceExample's feature list
        steps, per_record, present = batch.steps(c.slot)
        made, counts, _ = _values(c.values, batch, steps, array=True)
        if c.one:
            if (np.asarray(counts) != 1).any():
                raise Fallback  # a step of no value or of several: the record path's error
            return made, per_record, present
        return pa.ListArray.from_arrays(list_offsets(counts), made), per_record, present
    if isinstance(c, _Array):
        return _items(c.element, batch)
    if isinstance(c, _Vector):  # (never planned in an array of structs)
        raise Fallback
    parts = [_items(child, batch) for child in c.children]
    counts = np.max([p[1] for p in parts], axis=0)
    present = np.any([p[2] for p in parts], axis=0)
    children = []
    for child, (values, n, held) in zip(c.children, parts):
        if not isinstance(child, _Struct):
            values = values.cast(child.target)
        if not np.array_equal(n[held], counts[held]):
            raise Fallback  # leaves of different lengths: the record path's error
        if not np.array_equal(held, present):
            has = np.repeat(held, counts)
            where = np.cumsum(has) - 1
            values = values.take(pa.array(where, pa.int64(), mask=~has))
        children.append(values)
    return pa.StructArray.from_arrays(children, fields=c.fields), counts, present


def _bytes(c: _Column, buf: bytes, first: Any, last: Any) -> pa.Array:
    """The entries ``buf[first[i]:last[i]]`` as one Arrow string or binary array."""
    lengths = last - first
    if int(lengths.sum()) > _MAX_OFFSET:
        raise Fallback
    data = gather(buf, first, last)
    if pa.types.is_string(c.values):
        # every entry is UTF-8 when the whole is and none starts at a continuation byte
        heads = data[(np.cumsum(lengths) - lengths)[lengths > 0]]
        if ((heads & 0xC0) == 0x80).any():
            raise Fallback
        try:
            str(data, "utf-8")
        except UnicodeDecodeError:
            raise Fallback from None  # the record path's replacement characters, as Java's
    return pa.Array.from_buffers(
        c.values,
        len(first),
        [None, pa.py_buffer(offsets(lengths, np.int32)), pa.py_buffer(data)],
    )
