"""The Arrow columns of a whole batch of serialized Examples at once: the read's fast path.

:class:`BatchArrays` is made once per schema, when every data column is a scalar or a list of a
plain type (integers, booleans, dates, timestamps, floats, doubles, strings, binaries) or of
decimals (:mod:`spark_tfrecord._source.decimal_arrays`), a list of lists of one (written ragged:
``c/ragged_flat_values`` and ``c/ragged_row_lengths_k``), a struct of such (structs in structs
too: its leaves are features of their own, named by their path), an array of structs of such
(each leaf a list with an item per element, or ``tfrecord.listLength`` items), or an ML vector
(dense or sparse: :mod:`spark_tfrecord._source.vector_arrays`), and the records are Examples;
or the records are SequenceExamples, whose context features are read as those, and whose feature
lists as a list per step (``array<array<T>>``), or an array of structs' fields as its elements
(:mod:`spark_tfrecord._source.step_arrays`).
For each batch, the format package's batch decoder
(:func:`spark_tfrecord._format.entries.batch.locate`,
:func:`spark_tfrecord._format.entries.sequence.locate` and their value gatherers) finds each
column's feature in every record (a feature list's steps in every list), and the column's
values and offsets become Arrow buffers in a few NumPy calls, then the same Arrow types and
casts as the record path
(:class:`spark_tfrecord._source.columns.ArrowColumns`). Anything in the batch that would be an
error or needs a decision per record (a record that strays from the usual layout, a kind the
column does not read, a decimal given floats and int64s, a value out of range, a scalar given
two values, text that is not UTF-8, numbers read as text) makes :meth:`BatchArrays.arrays` give
None: the reader then decodes that batch record by record, so that values and errors are the
record path's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
import pyarrow as pa

from spark_tfrecord._format.columns.conversions import Conversion, conversion, stored
from spark_tfrecord._format.columns.gathered import column_values, ragged_fits, scalars
from spark_tfrecord._format.columns.layout import Layout
from spark_tfrecord._format.columns.record_values import float_values
from spark_tfrecord._format.entries import batch as batch_decoder
from spark_tfrecord._format.entries import sequence
from spark_tfrecord._format.entries.entries import gather
from spark_tfrecord._format.frames.packing import offsets
from spark_tfrecord._source import nodes
from spark_tfrecord._source.decimal_arrays import decimal_array
from spark_tfrecord._source.nodes import VALUES, leaf_values
from spark_tfrecord._source.step_arrays import Steps, step_items
from spark_tfrecord._source.vector_arrays import list_offsets, vector_array

#: The largest offset of an Arrow list, string or binary array (int32 offsets).
_MAX_OFFSET = 2**31 - 1


@dataclass
class _Column:
    """One data column: its feature's slot, whether it is a list, its conversion, the Arrow
    type of its decoded values and of the column; ``length``: a list of that fixed length per
    element of an array of structs, the elements' lists concatenated in the feature."""

    slot: int
    listed: bool
    conversion: Conversion
    values: pa.DataType
    target: pa.DataType
    length: int = 0

    @property
    def text(self) -> bool:
        return bool(pa.types.is_string(self.values))

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
    """A list of lists (of depth 2 or more) written ragged: its flat values' column, its row
    lengths' columns (outermost first), and its Arrow type."""

    values: _Column
    lengths: list[_Column]
    target: pa.DataType


@dataclass
class _Array:
    """An array of structs: its element's fields (each a list with an item per element, keyed
    by the array's key and the field's path) and its Arrow type."""

    element: _Struct
    target: pa.DataType


@dataclass
class _Vector:
    """An ML vector column: its dense feature's column (doubles), its sparse features'
    (``c/indices``, ``c/values``, ``c/size``), and its Arrow type (the struct of
    ``VectorUDT``'s SQL type)."""

    dense: _Column
    sparse: list[_Column]
    target: pa.DataType


_Node = Union[_Column, _Struct, _Ragged, _Array, _Vector, Steps]
#: Of a batch: values, the number of them (or of elements) of each record, which records hold
#: them.
Items = tuple[pa.Array, Any, Any]
#: Row lengths: bigints.
_LENGTHS = conversion("bigint")


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
            _Column(index_slot, True, _LENGTHS, pa.int64(), pa.int64()),
            _Column(value_slot, True, float_values(), pa.float64(), pa.float64()),
            _Column(size_slot, True, _LENGTHS, pa.int64(), pa.int64()),
        ]
        return _Vector(dense, sparse, node.target)
    shape = "ragged" if node.depth > 1 else "list" if node.depth else "scalar"
    values = _leaf_type(node.leaf, node.key)
    if values is None:
        return None
    # a decimal's values as stored: decimal_array converts a batch of them at once
    read = stored(c.spark) if pa.types.is_decimal(values) else c.conversion
    if c.shape == "uniform" and node.in_array and node.depth == 2 and not c.sequence:
        return _Column(c.slots[0], True, read, values, node.target, length=c.length)
    if c.shape != shape or c.in_array != node.in_array:
        return None
    if c.sequence and len(c.slots) == 1 and (c.in_array or shape == "ragged"):
        # a feature list: a list per step, or an array of structs' field, an item per step
        steps = _Column(0, True, read, values, values)
        return Steps(c.slots[0], steps, node.target, one=shape == "list")
    if c.sequence or c.length or c.fixed is not None:
        return None
    if shape == "ragged":
        lengths = [_Column(s, True, _LENGTHS, pa.int64(), pa.int64()) for s in c.slots[1:]]
        if len(lengths) != node.depth - 1:
            return None
        flat = _Column(c.slots[0], True, read, values, values)
        return _Ragged(flat, lengths, node.target)
    return _Column(c.slots[0], node.depth > 0, read, values, node.target)


def _leaf_type(leaf: Any, key: str) -> pa.DataType | None:
    """The Arrow type of the values of a leaf of Spark type ``leaf`` (JSON) the fast path reads:
    a plain type's, or a decimal's of a scale not negative; None for any other."""
    if not isinstance(leaf, str):
        return None
    if leaf in VALUES:
        return VALUES[leaf]
    if leaf.startswith("decimal("):
        found = leaf_values(leaf, key)
        return found if found.scale >= 0 else None
    return None


def _in_array(node: nodes.Node) -> bool:
    """Whether an array of structs' element holds another array of structs, or a vector."""
    if isinstance(node, nodes.Struct):
        return any(_in_array(child) for child in node.children)
    return isinstance(node, (nodes.Elements, nodes.Vector))


def _columns(plan: Sequence[_Node]) -> Iterator[_Column]:
    """The columns of ``plan`` and of its structs (not those in arrays, ragged lists, vectors
    or feature lists)."""
    for c in plan:
        if isinstance(c, _Column):
            yield c
        elif isinstance(c, _Struct):
            yield from _columns(c.children)


def _listed(items: pa.Array, counts: Any, present: Any) -> pa.Array:
    """A list per record of ``items``, ``counts[r]`` of them in record r, null where it holds
    none of the features (``present``)."""
    mask = None if present.all() else pa.array(~present, pa.bool_())
    return pa.ListArray.from_arrays(list_offsets(counts), items, mask=mask)


def _validity(valid: Any) -> pa.Buffer | None:
    """Arrow's validity bitmap of the boolean array ``valid`` (None: all valid)."""
    if valid.all():
        return None
    return pa.array(valid, pa.bool_()).buffers()[1]


class BatchArrays:
    """The fast path's builders of a schema's data columns, decided once (:meth:`of`)."""

    def __init__(
        self, keys: Sequence[bytes], plan: Sequence[_Node], listed: Sequence[bool] | None = None
    ) -> None:
        self.keys = list(keys)
        self.plan = list(plan)
        #: SequenceExamples: which keys are feature lists (None: the records are Examples).
        self.listed = None if listed is None else list(listed)
        #: The slots of the numeric columns (in structs too), whose values a batch of one
        #: number a record gives at once for all of them (:func:`scalars`).
        self.numbers = sorted({c.slot for c in _columns(self.plan) if c.numeric})

    @classmethod
    def of(cls, layout: Layout, columns: Sequence[nodes.Node]) -> BatchArrays | None:
        """The builders of the data columns ``columns`` (:func:`nodes.walk`'s) read with
        ``layout`` (:func:`spark_tfrecord._format.columns.record_values.exact_layout`), or None
        when a column is not one the fast path reads (a decimal of a negative scale, an encoded
        tensor)."""
        made = [_fast(node) for node in columns]
        if any(m is None for m in made):
            return None
        listed = None
        if layout.sequence:
            listed = [False] * len(layout.decoder_keys)
            for c in layout.columns:
                for s in c.slots if c.sequence else ():
                    listed[s] = True
        return cls(layout.decoder_keys, [m for m in made if m is not None], listed)

    def arrays(self, buf: bytes, starts: Any, stops: Any) -> list[pa.Array] | None:
        """The data columns of the records ``buf[starts[r]:stops[r]]``, or None when the batch
        needs the record path."""
        if self.listed is None:
            located = batch_decoder.locate(buf, starts, stops, self.keys)
            if not located.fallback.any():
                located.numbers = scalars(buf, located, self.numbers)
        else:
            located = sequence.locate(buf, starts, stops, self.keys, self.listed)
        if located.fallback.any():
            return None
        out = []
        for c in self.plan:
            made = self._node(c, located, buf, len(starts))
            if made is None:
                return None
            out.append(made)
        return out

    def _node(self, c: _Node, located: Any, buf: bytes, size: int) -> pa.Array | None:
        """A leaf's column, or a struct's from its fields' (null where all of them are, as the
        record path makes it)."""
        if isinstance(c, _Column):
            return self._column(c, located, buf, size)
        if isinstance(c, _Ragged):
            return self._ragged(c, located, buf, size)
        if isinstance(c, _Array):
            return self._array(c, located, buf, size)
        if isinstance(c, _Vector):
            return self._vector(c, located, buf, size)
        if isinstance(c, Steps):
            found = step_items(c, located, buf, self._values)
            return None if found is None else _listed(*found).cast(c.target)
        children = []
        for child in c.children:
            made = self._node(child, located, buf, size)
            if made is None:
                return None
            children.append(made)
        null = np.ones(size, np.bool_)
        for a in children:
            if a.null_count == 0:
                null[:] = False
                break
            null &= np.asarray(a.is_null())
        mask = pa.array(null, pa.bool_()) if null.any() else None
        return pa.StructArray.from_arrays(children, fields=c.fields, mask=mask)

    def _column(self, c: _Column, located: Any, buf: bytes, size: int) -> pa.Array | None:
        found = self._values(c, located, buf, size)
        if found is None:
            return None
        values, counts, present = found
        if c.listed:
            mask = None if present.all() else pa.array(~present, pa.bool_())
            bounds = list_offsets(counts)
            made = pa.ListArray.from_arrays(bounds, values, type=pa.list_(c.values), mask=mask)
        elif c.numeric and not c.decimal:
            if (counts > 1).any():
                return None  # a scalar given several values: the record path's error
            valid = counts == 1
            if valid.all():  # (one value a record: the values as they are)
                made = pa.array(values, c.values)
            else:
                full = np.zeros(size, values.dtype)
                full[valid] = values
                made = pa.array(full, c.values, mask=~valid)
        else:
            if (counts > 1).any():
                return None
            valid = counts == 1
            if c.decimal:  # each record's value or null, taken from the batch's values
                where = pa.array(np.cumsum(valid) - 1, pa.int64(), mask=~valid)
                return values.take(where).cast(c.target)
            ends = np.concatenate([[0], np.cumsum(counts)])
            bounds = values.buffers()[1]
            entry_offsets = np.frombuffer(bounds, np.int32, len(values) + 1)
            made = pa.Array.from_buffers(
                c.values,
                size,
                [_validity(valid), pa.py_buffer(entry_offsets[ends]), values.buffers()[2]],
            )
        return made.cast(c.target)

    def _values(
        self, c: _Column, located: Any, buf: bytes, size: int
    ) -> tuple[Any, Any, Any] | None:
        """The column's values (a NumPy array of numbers, or an Arrow array of strings or
        binaries), the number of values of each record, and which records hold its feature;
        None when the batch needs the record path."""
        got = column_values(buf, located, c.slot, c.conversion, c.numeric)
        if got is None:
            return None
        if c.decimal:
            made = decimal_array(got.source, got.values, c.values)
            return None if made is None else (made, got.counts, got.present)
        if c.numeric:
            return (
                got.values.astype(c.values.to_pandas_dtype(), copy=False),
                got.counts,
                got.present,
            )
        values = self._bytes(c, buf, got.first, got.last)
        return None if values is None else (values, got.counts, got.present)

    def _vector(self, v: _Vector, located: Any, buf: bytes, size: int) -> pa.Array | None:
        """Vectors: sparse where the record has any of ``c/indices``, ``c/values`` and
        ``c/size``, else dense, else null (:func:`vector_array`)."""
        dense = self._values(v.dense, located, buf, size)
        if dense is None:
            return None
        sparse = None
        if any((located.kind[c.slot] >= 0).any() for c in v.sparse):
            parts = [self._values(c, located, buf, size) for c in v.sparse]
            sparse = [p for p in parts if p is not None]
            if len(sparse) < len(parts):
                return None
        return vector_array(dense, sparse, size, v.target)

    def _ragged_items(self, r: _Ragged, located: Any, buf: bytes, size: int) -> Items | None:
        """A list of lists' outer items (each a list), how many each record has and which
        records hold it, from its features ``ragged_row_lengths_0`` ... and
        ``ragged_flat_values``, when every record holds all or none of them and its row
        lengths are not negative and add up to what the level below holds (else the record
        path says which does not)."""
        found = self._values(r.values, located, buf, size)
        if found is None:
            return None
        values, below, present = found
        levels = []  # per level, outermost first: its lengths, and how many each record has
        for level in r.lengths:
            got = self._values(level, located, buf, size)
            if got is None or not np.array_equal(got[2], present):
                return None
            levels.append((np.asarray(got[0], np.int64), got[1]))
        if not ragged_fits(levels, below, _MAX_OFFSET):
            return None
        made = values if isinstance(values, pa.Array) else pa.array(values, r.values.values)
        for lengths, _ in reversed(levels):
            made = pa.ListArray.from_arrays(list_offsets(lengths), made)
        return made, levels[0][1], present

    def _ragged(self, r: _Ragged, located: Any, buf: bytes, size: int) -> pa.Array | None:
        found = self._ragged_items(r, located, buf, size)
        if found is None:
            return None
        return _listed(*found).cast(r.target)

    def _array(self, a: _Array, located: Any, buf: bytes, size: int) -> pa.Array | None:
        """An array of structs: its elements' struct from its leaves' lists (a value, or a list,
        per element), null where the record has none of them, as the record path makes it."""
        found = self._items(a.element, located, buf, size)
        if found is None:
            return None
        return _listed(*found).cast(a.target)

    def _items(self, c: _Node, located: Any, buf: bytes, size: int) -> Items | None:
        """A field of an array's element, over all the batch's elements: its values, how many
        elements each record has, and which records hold it. A struct's fields must agree on
        the number (else the record path's error); one a record lacks is null in each of its
        elements, as the jar's ``NestedRowAssembler`` makes it."""
        if isinstance(c, _Column):
            found = self._values(c, located, buf, size)
            if found is None:
                return None
            values, counts, present = found
            made = values if isinstance(values, pa.Array) else pa.array(values, c.values)
            if c.length:  # k values an element: the record path's error unless all are
                if (counts % c.length).any():
                    return None
                bounds = np.arange(0, len(made) + 1, c.length, dtype=np.int32)
                made, counts = pa.ListArray.from_arrays(bounds, made), counts // c.length
            return made.cast(c.target), counts, present
        if isinstance(c, _Ragged):
            found = self._ragged_items(c, located, buf, size)
            return None if found is None else (found[0].cast(c.target), found[1], found[2])
        if isinstance(c, Steps):  # a SequenceExample's: a feature list, an element per step
            found = step_items(c, located, buf, self._values)
            return None if found is None else (found[0].cast(c.target), found[1], found[2])
        if isinstance(c, (_Array, _Vector)):  # (never planned in an array of structs)
            return None
        parts = []
        for child in c.children:
            got = self._items(child, located, buf, size)
            if got is None:
                return None
            parts.append(got)
        counts = np.max([p[1] for p in parts], axis=0)
        present = np.any([p[2] for p in parts], axis=0)
        children = []
        for values, n, held in parts:
            if not np.array_equal(n[held], counts[held]):
                return None  # leaves of different lengths: the record path's error
            if not np.array_equal(held, present):
                has = np.repeat(held, counts)
                where = np.cumsum(has) - 1
                values = values.take(pa.array(where, pa.int64(), mask=~has))
            children.append(values)
        return pa.StructArray.from_arrays(children, fields=c.fields), counts, present

    @staticmethod
    def _bytes(c: _Column, buf: bytes, first: Any, last: Any) -> pa.Array | None:
        """The entries ``buf[first[i]:last[i]]`` as one Arrow string or binary array, its
        offsets and data straight from the batch."""
        lengths = last - first
        if int(lengths.sum()) > _MAX_OFFSET:
            return None
        data = gather(buf, first, last)
        if c.text:
            # the record path's strict decode, for the batch at once: every entry is UTF-8 when
            # the whole is and no entry starts inside a character (at a continuation byte)
            heads = data[(np.cumsum(lengths) - lengths)[lengths > 0]]
            if ((heads & 0xC0) == 0x80).any():
                return None
            try:
                str(data, "utf-8")
            except UnicodeDecodeError:
                return None  # the record path's replacement characters, as Java decodes
        return pa.Array.from_buffers(
            c.values,
            len(first),
            [None, pa.py_buffer(offsets(lengths, np.int32)), pa.py_buffer(data)],
        )
