"""What a trainer gets for each column: a record's values and a batch's arrays, in NumPy.

:func:`layout` decides once per schema (the manifest's, or a DDL string's) which features each
column reads and how it is shaped: the columns of ``feature_spec``, keyed the same way (a
column's name, a struct leaf's path ``image/height``). :class:`Layout` then turns the decoded
features of one record into its values (:meth:`Layout.record`) and a list of records into a
batch (:meth:`Layout.collate`). Kinds are TensorFlow's: int64, float32, bytes (``str`` for a
``string`` column).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from spark_tfrecord._format import batch as batch_decoder
from spark_tfrecord._format.conversions import Conversion, OutOfRange, conversion
from spark_tfrecord._format.decoder import STEPS, ExampleDecoder
from spark_tfrecord._format.schema import Column, columns, select
from spark_tfrecord._format.values import Ragged, Sparse
from spark_tfrecord._format.wire import BYTES, FLOAT, INT64, KIND_NAMES, UNSET, MalformedRecord


class ColumnError(Exception):
    """A record's feature cannot be the column's value; the reader adds the file and offset."""

    def __init__(self, column: str, reason: str) -> None:
        super().__init__(f"Column {column!r}: {reason}")
        self.column = column

    @classmethod
    def said(cls, column: str, message: str) -> ColumnError:
        """The error of ``column`` whose whole message is ``message``."""
        error = cls(column, "")
        Exception.__init__(error, message)
        return error

    @classmethod
    def of(cls, c: Column, what: str) -> ColumnError:
        """The jar's form of a column's error: ``Column 'r' (array<array<bigint>>) what``."""
        return cls.said(c.path, f"Column '{c.path}' ({c.type_name}) {what}")


class NoValue(ColumnError, ValueError):
    """A batch cannot stack a column (not null, or held by every record by the manifest's
    counts) whose value record ``record`` of the batch lacks; the jar reads it null."""

    def __init__(self, c: Column, record: int) -> None:
        ColumnError.__init__(self, c.path, "")
        Exception.__init__(
            self,
            f"Column '{c.path}' ({c.type_name}) has no value in this record, which a batch "
            "cannot stack: the column is NOT NULL, or the manifest says every record holds it",
        )
        self.record = record


class ValueRefused(ColumnError):
    """A value the column's type refuses (a kind it does not read, a value it cannot hold),
    with the jar's message: ``Column 'x' (tinyint) cannot hold the value 300``."""

    def __init__(self, column: str, type_name: str, what: str) -> None:
        Exception.__init__(self, f"Column '{column}' ({type_name}) {what}")
        self.column = column


class StepRefused(ColumnError):
    """A step of a SequenceExample's feature list that does not hold the one value of a field
    of an array of structs; names the array's column, as the jar does."""

    def __init__(self, column: str, message: str) -> None:
        Exception.__init__(self, message)
        self.column = column


_DTYPES = {"int": np.int64, "float": np.float32}
#: Lengths, indices and sizes: bigints.
_LENGTHS = conversion("bigint")


def _conversion(c: Column) -> Conversion:
    """The column's conversion (a ragged column's lengths and a vector's parts: bigints)."""
    return c.conversion if c.conversion is not None else _LENGTHS


class Layout:
    """The columns a reader gives, decided once: a decoder of their features, and how a
    record's features become values and records a batch."""

    def __init__(self, chosen: Sequence[Column], sequence: bool = False) -> None:
        # A SequenceExample's feature list is batched as a list of lists (a list per step), or
        # as a list (a value per step, a field of an array of structs that is not a list).
        self.columns = [
            dataclasses.replace(c, shape="ragged" if c.shape == "list" else "list", depth=2)
            if c.sequence
            else c
            for c in chosen
        ]
        self.sequence = sequence
        keys: dict[str, int] = {}
        for c in self.columns:
            c.slots = [keys.setdefault(f, len(keys)) for f in c.features]
            c.conversion = conversion(c.spark, vector=c.shape == "vector")
        self.decoder = ExampleDecoder(list(keys), sequence)
        self.decoder_keys = [k.encode("utf-8") for k in keys]
        self._readers = [(c.key, self._reader(c)) for c in self.columns]
        arrays: dict[str, list[Column]] = {}
        for c in self.columns:
            if c.array and not c.sequence:  # a SequenceExample's arrays come in steps
                arrays.setdefault(c.array, []).append(c)
        #: Each array of structs' leaves, whose lists must be of one length.
        self.arrays = list(arrays.items())
        self._checks: list[list[Any]] | None = None

    def use_reader(self, key: str, read: Callable[[list[Any]], Any]) -> None:
        """Reads column ``key`` of each record with ``read`` (of the record's features, by the
        column's ``slots``) instead of the layout's own reader: the jar-less source's Spark
        vectors."""
        self._readers = [(k, read if k == key else r) for k, r in self._readers]

    # --- one record -----------------------------------------------------------------------

    def record(self, buf: bytes) -> dict[str, Any]:
        """The values of one serialized Example (or SequenceExample). Raises
        ``MalformedRecord`` or :class:`ColumnError`."""
        try:
            features = self.decoder.decode(buf)
            found = {key: read(features) for key, read in self._readers}
            if self.arrays:
                self._check_arrays(features)
        except (ColumnError, MalformedRecord):
            self.decoder.decode(buf, self._check_feature)  # an error earlier in the record
            raise
        if self.decoder.repeated:  # the jar reads (and checks) every Feature of a key given twice
            self.decoder.decode(buf, self._check_feature)
        return found

    def _check_feature(self, slot: int, feature: tuple[int, Any]) -> None:
        """What the jar checks of one Feature as its walk meets it (its kind, its values'
        range, a scalar's count): the error of the first Feature that fails, in the record's
        order. Only on a record that fails, or gives a key twice."""
        if self._checks is None:
            self._checks = [[] for _ in self.decoder.keys]
            for c in self.columns:
                for k, s in enumerate(c.slots):
                    self._checks[s].append(self._check(c, k))
        for check in self._checks[slot]:
            check(feature)

    def _check(self, c: Column, k: int) -> Any:
        """The check of feature ``k`` of column ``c``."""
        if c.shape in ("scalar", "list", "uniform"):
            read = dict(self._readers)[c.key]
            width, slot = len(self.decoder.keys), c.slots[0]

            def whole(feature: tuple[int, Any]) -> None:
                features: list[Any] = [None] * width
                features[slot] = feature
                read(features)

            return whole
        # a ragged column's values (k 0) and row lengths; a vector's values (dense: k 0, sparse:
        # k 2) and its indices and size
        values = (c.shape == "ragged" and k == 0) or (c.shape == "vector" and k in (0, 2))
        column = c if values else Column(c.key, "int", "list", path=c.path, type_name=c.type_name)
        name = c.features[k]
        return lambda feature: self._values(column, feature, name)

    def _check_arrays(self, features: list[Any]) -> None:
        """Each array of structs' leaves hold one value (or ``length`` values) per element,
        as many in each present leaf, as the jar assembles them; else its error."""
        for path, members in self.arrays:
            n, unequal = -1, False
            counts = []
            for c in members:
                count = _element_values(c, features)
                counts.append(count)
                if count < 0:
                    continue
                per = c.length or 1
                if count % per:
                    unequal = True
                elif n < 0:
                    n = count // per
                elif count // per != n:
                    unequal = True
            if unequal:
                told = [
                    f"'{c.key}' absent"
                    if count < 0
                    else f"'{c.key}' {count}"
                    + (f" values, {c.length} per element" if c.length > 1 else "")
                    for c, count in zip(members, counts)
                ]
                raise ColumnError.said(
                    path,
                    f"Column '{path}' (array<struct>) is read from lists of unequal length: "
                    + ", ".join(told),
                )

    @staticmethod
    def _single(column: Column, feature: Any) -> None:
        """Refuses a feature list where the column reads a single feature (the jar's error)."""
        if feature is not None and feature[0] == STEPS:
            raise ValueRefused(
                column.path,
                column.type_name,
                "is read from a single feature, but the record has a feature list of that "
                f"name: read it as array<array<{column.spark}>>",
            )

    def _steps_reader(self, c: Column) -> Any:
        """A SequenceExample's feature list: a list per step (a :class:`Ragged` of two levels),
        or for a field of an array of structs that is not a list, the one value of each step."""
        values = self._values
        (slot,) = c.slots
        name = c.features[0]
        one_per_step = c.shape == "list"
        numeric = c.value in _DTYPES

        def steps(features: list[Any]) -> Any:
            found = features[slot]
            if found is None:
                return None
            if found[0] != STEPS:
                raise ValueRefused(
                    c.path,
                    c.type_name,
                    "is read from a SequenceExample feature list, but the record has a single "
                    "feature of that name (context or Example feature): read it as "
                    f"array<{c.spark}>",
                )
            got = [values(c, step, name) for step in found[1]]
            lengths = np.array([len(g) for g in got], np.int64)
            if one_per_step and len(lengths) and (lengths != 1).any():
                i = int(np.flatnonzero(lengths != 1)[0])
                what = (
                    "holds no value (Spark reads a null there, which a loader's list cannot hold)"
                    if lengths[i] == 0
                    else f"holds {lengths[i]}"
                )
                field = c.path[len(c.array) + 1 :] if c.array else c.key
                raise StepRefused(
                    c.array or c.key,
                    f"Column '{c.array or c.key}' field '{field}' ({c.spark}) holds one value "
                    f"per step, but step {i} of feature list '{name}' {what}",
                )
            flat = (
                (np.concatenate(got) if got else np.empty(0, _DTYPES[c.value]))
                if numeric
                else [v for g in got for v in g]
            )
            return flat if one_per_step else Ragged(flat, (lengths,))

        return steps

    @staticmethod
    def _values(column: Column, feature: tuple[int, Any], name: str) -> Any:
        """The feature's values as the column's kind: an ndarray, or a list of bytes / str."""
        kind, values = feature
        if kind == UNSET or not len(values):  # no values: of any kind, as the jar reads them
            return [] if column.value not in _DTYPES else np.empty(0, _DTYPES[column.value])
        convert = _conversion(column).by_kind[kind]
        if convert is None:
            raise ValueRefused(
                column.path, column.type_name, f"cannot be read from a {KIND_NAMES[kind]} feature"
            )
        if kind != BYTES and not isinstance(values, np.ndarray):
            values = np.asarray(values, np.int64)
        try:
            return convert(values)
        except OutOfRange as e:
            raise ValueRefused(column.path, column.type_name, str(e)) from None

    def _reader(self, c: Column) -> Any:
        if c.sequence:
            return self._steps_reader(c)
        read = self._plain_reader(c)
        if not self.sequence:
            return read
        single, slots = self._single, c.slots

        def context(features: list[Any]) -> Any:  # a context feature: not a feature list
            for s in slots:
                single(c, features[s])
            return read(features)

        return context

    def _plain_reader(self, c: Column) -> Any:
        values = self._values
        if c.shape == "scalar":
            (slot,) = c.slots
            name = c.features[0]
            dtype = _DTYPES.get(c.value)

            def scalar(features: list[Any]) -> Any:
                feature = features[slot]
                if feature is None or feature[0] == UNSET:
                    return None
                vs = feature[1]
                if len(vs) != 1:
                    if len(vs) == 0:
                        return None
                    if not _conversion(c).accepts(feature[0]):
                        values(c, feature, name)  # the kind's error: the jar checks it first
                    raise ColumnError.of(
                        c,
                        f"is a scalar but the feature holds {len(vs)} values; read it as "
                        f"array<{c.spark}> to get them all",
                    )
                got = values(c, feature, name)
                return got[0] if dtype is None else dtype(got[0])

            return scalar
        if c.shape in ("list", "uniform"):
            (slot,) = c.slots
            name = c.features[0]
            length = c.length

            def listed(features: list[Any]) -> Any:
                feature = features[slot]
                if feature is None:
                    return None
                got = values(c, feature, name)
                if length and not len(got) % length:  # else the array's check (_check_arrays)
                    got = (
                        np.asarray(got).reshape(-1, length)
                        if c.value in _DTYPES
                        else [got[i : i + length] for i in range(0, len(got), length)]
                    )
                return got

            return listed
        if c.shape == "ragged":
            slots, names = c.slots, c.features
            lengths_column = Column(c.key, "int", "list", path=c.path, type_name=c.type_name)
            # the jar's order of the features, in its messages: the row lengths, then the values
            in_order = [*names[1:], names[0]]
            listed_names = ", ".join(f"'{n}'" for n in in_order)

            def ragged(features: list[Any]) -> Any:
                if all(features[s] is None for s in slots):
                    return None
                got = [
                    values(c if k == 0 else lengths_column, features[s] or (UNSET, None), names[k])
                    for k, s in enumerate(slots)
                ]
                for k in range(len(slots)):
                    if features[slots[(k + 1) % len(slots)]] is None:
                        raise ColumnError.of(
                            c,
                            f"is read from the ragged features {listed_names}, but the record "
                            f"has no '{in_order[k]}'",
                        )
                flat, row_lengths = got[0], tuple(got[1:])
                for k, lengths in enumerate(row_lengths):
                    if len(lengths) and int(lengths.min()) < 0:
                        first = int(lengths[lengths < 0][0])
                        raise ColumnError.of(
                            c, f"has the negative row length {first} in '{names[k + 1]}'"
                        )
                    below = row_lengths[k + 1] if k + 1 < len(row_lengths) else flat
                    total = int(np.sum(lengths))
                    if total != len(below):
                        what = "values" if k + 1 == len(row_lengths) else "row lengths"
                        raise ColumnError.of(
                            c,
                            f"has row lengths in '{names[k + 1]}' that add up to {total}, but "
                            f"'{names[(k + 2) % len(names)]}' holds {len(below)} {what}",
                        )
                return Ragged(flat, row_lengths)

            return ragged
        # a vector: dense (the feature c) or sparse (c/indices, c/values, c/size)
        dense_slot, index_slot, value_slot, size_slot = c.slots
        names = c.features
        index_column = Column(c.key, "int", "list", path=c.path, type_name=c.type_name)
        size_column = index_column

        def vector(features: list[Any]) -> Any:
            dense = features[dense_slot]
            if features[index_slot] is None and features[value_slot] is None:
                if dense is None:
                    return None
                got = values(c, dense, names[0])
                if not c.sparse:
                    return got
                (nonzero,) = np.nonzero(got.view(np.uint32))  # by bits: -0.0 and NaN are entries
                return Sparse(nonzero.astype(np.int64), got[nonzero], len(got))
            indices = values(index_column, features[index_slot] or (UNSET, None), names[1])
            entries = values(c, features[value_slot] or (UNSET, None), names[2])
            size = values(size_column, features[size_slot] or (UNSET, None), names[3])
            if len(size) != 1:
                raise ColumnError(c.path, f"feature {names[3]!r} must hold the vector's size")
            n = int(size[0])
            if len(indices) != len(entries):
                raise ColumnError(
                    c.path, f"{len(indices)} indices but {len(entries)} values in {names[1]!r}"
                )
            if len(indices) and (
                int(indices.min()) < 0
                or int(indices.max()) >= n
                or bool(np.any(np.diff(indices) <= 0))
            ):
                raise ColumnError(
                    c.path, f"indices in {names[1]!r} must increase and be below the size {n}"
                )
            found = Sparse(indices, entries, n)
            return found if c.sparse else found.to_dense()

        return vector

    # --- a batch --------------------------------------------------------------------------

    def collate_raw(self, buf: bytes, starts: Any, stops: Any) -> dict[str, Any] | None:
        """:meth:`collate` of the serialized Examples ``buf[starts[r]:stops[r]]``, decoded
        together; None when a record strays from the layout writers produce (then decode the
        batch record by record: the same values, or the error naming the record), and for
        SequenceExamples, which are decoded record by record."""
        if self.sequence:
            return None
        try:
            batch = _BatchColumns(self, buf, starts, stops)
            found = {c.key: batch.column(c) for c in self.columns}
            if self.arrays:
                batch.check_arrays(self.arrays, found)
            return found
        except (_Fallback, MalformedRecord):  # the record path raises the record's error
            return None

    def collate(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """A batch of records, in NumPy, key by key:

        - a column every record holds with the same k values (the manifest's counts), or a
          non-nullable scalar: the values stacked, shape ``(B,)`` or ``(B, k)``;
        - any other list or scalar: ``(values, offsets)``, ``offsets`` int64 of length B+1
          (record j's values are ``values[offsets[j]:offsets[j + 1]]``); a null has none;
        - a list of lists: ``(values, offsets, inner_offsets, ...)``, an offsets array per
          level;
        - str and bytes: a list of B values (fixed) or ``(list of values, offsets)``;
        - a sparse vector: ``(indices, values, shape)``: indices ``(nnz, 2)`` int64 of
          (record, position), as ``tf.SparseTensor`` takes them, and ``shape = (B, size)``.
        """
        return {c.key: self.collate_column(c, [r[c.key] for r in records]) for c in self.columns}

    @staticmethod
    def collate_column(c: Column, items: list[Any]) -> Any:
        """Column ``c``'s values of a batch of records, ``items`` (one a record), in NumPy
        arrays, as :meth:`collate` gives each column."""
        numeric = c.value in _DTYPES
        if c.shape == "vector" and c.sparse:
            sizes = {s.size for s in items if s is not None} | ({c.size} if c.size else set())
            if len(sizes) > 1:
                raise ValueError(
                    f"Column {c.key!r}: vectors of sizes {sorted(sizes)} in a batch (its "
                    "metadata's size included)"
                )
            rows = [np.full(len(s.indices), j, np.int64) for j, s in enumerate(items) if s]
            cols = [s.indices for s in items if s is not None]
            vals = [s.values for s in items if s is not None]
            indices = (
                np.stack([np.concatenate(rows), np.concatenate(cols)], axis=1)
                if rows
                else np.empty((0, 2), np.int64)
            )
            values = np.concatenate(vals) if vals else np.empty(0, np.float32)
            return indices, values, (len(items), sizes.pop() if sizes else 0)
        if c.fixed is not None and c.shape in ("scalar", "list", "vector"):
            if any(v is None for v in items):
                raise NoValue(c, [v is None for v in items].index(True))
            if not numeric:
                return items if c.shape == "scalar" else [list(v) for v in items]
            return np.array(items, _DTYPES[c.value]) if c.shape == "scalar" else np.stack(items)
        if c.shape == "ragged":
            present = [v for v in items if v is not None]
            offsets = [_offsets([len(v.row_lengths[0]) if v is not None else 0 for v in items])]
            for k in range(c.depth - 1):
                lengths = [np.asarray(v.row_lengths[k], np.int64) for v in present]
                offsets.append(_offsets(np.concatenate(lengths) if lengths else []))
            flat = [v.values for v in items if v is not None]
            return (_join(flat, c.value), *offsets)
        if c.shape == "scalar":
            present = [v for v in items if v is not None]
            counts = [0 if v is None else 1 for v in items]
            scalars: Any = np.array(present, _DTYPES[c.value]) if numeric else present
            return scalars, _offsets(counts)
        # variable lists, uniform-length lists of elements, dense vectors of varying size
        present = [v for v in items if v is not None]
        counts = [0 if v is None else len(v) for v in items]
        return _join(present, c.value), _offsets(counts)


def _element_values(c: Column, features: list[Any]) -> int:
    """The values of an array of structs' leaf ``c`` in a record's decoded features: one per
    element (``length`` for a uniform leaf; a ragged leaf's outer lists); -1 when absent."""
    if c.shape == "ragged":
        if all(features[s] is None for s in c.slots):
            return -1
        lengths = features[c.slots[1]]
    else:
        lengths = features[c.slots[0]]
        if lengths is None:
            return -1
    return 0 if lengths is None or lengths[1] is None else len(lengths[1])


#: The kind of the values each loader kind is read from, when no record holds a value.
_NATIVE = {"int": INT64, "float": FLOAT, "str": BYTES, "bytes": BYTES}


class _Fallback(Exception):
    """The batch strays from the common layout: decode it record by record."""


class _BatchColumns:
    """:meth:`Layout.collate_raw`'s work on one batch: each column's values gathered from the
    located features of all its records at once."""

    def __init__(self, layout: Layout, buf: bytes, starts: Any, stops: Any) -> None:
        self.batch = batch_decoder
        self.buf = buf
        self.size = len(starts)
        self.located = batch_decoder.locate(buf, starts, stops, layout.decoder_keys)
        if self.located.fallback.any():
            raise _Fallback

    def _present(self, slot: int) -> Any:
        return self.located.kind[slot] >= 0

    def values(self, slot: int, conv: Conversion) -> tuple[Any, Any, Any, bool]:
        """Feature ``slot``'s values as the column's (concatenated: an array, or a list of str /
        bytes), their counts per record, which records have the feature, and whether the values
        are the float32s of the records' float lists as they are (for :func:`fixed_floats`)."""
        loc = self.located
        kind, start, stop = loc.kind[slot], loc.start[slot], loc.stop[slot]
        present = kind >= 0
        start = np.where(present, start, 0)
        stop = np.where(present, stop, 0)
        kinds = kind[present & (stop > start)]  # the kinds of the lists that hold values
        source = int(kinds[0]) if len(kinds) else _NATIVE[conv.value]
        convert = conv.by_kind[source]
        if convert is None or (kinds != source).any():
            raise _Fallback  # a kind the column does not read, or two: the record path
        if source == BYTES:
            values, counts = self.batch.bytes_values(self.buf, start, stop)
            return values if conv.exact[BYTES] else convert(values), counts, present, False
        if conv.value not in _DTYPES:
            raise _Fallback  # numbers as text: the record path
        if source == FLOAT:
            if ((stop - start) & 3).any():
                raise _Fallback
            values, counts = self.batch.float_values(self.buf, start, stop)
        else:
            found = self.batch.int_values(self.buf, start, stop)
            if found is None:
                raise _Fallback
            values, counts = found
        if not conv.exact[source]:
            try:
                values = convert(values)
            except OutOfRange:
                raise _Fallback from None  # the record path names the record
        return values, counts, present, source == FLOAT and conv.exact[FLOAT]

    def column(self, c: Column) -> Any:
        if c.shape == "vector":
            return self.vector(c)
        if c.shape == "ragged":
            return self.ragged(c)
        (slot,) = c.slots
        if c.fixed is not None and c.shape in ("scalar", "list"):
            fixed = self.fixed_numbers(slot, _conversion(c), c.fixed)
            if fixed is not None:
                return fixed if c.shape == "list" else fixed.reshape(self.size)
        values, counts, present, floats = self.values(slot, _conversion(c))
        numeric = c.value in _DTYPES
        if c.shape == "uniform":
            if (counts % c.length).any():
                raise _Fallback
            shaped = (
                values.reshape(-1, c.length)
                if numeric
                else [values[i : i + c.length] for i in range(0, len(values), c.length)]
            )
            return shaped, _offsets(counts // c.length)
        if c.fixed is not None:
            if not present.all() or (counts != c.fixed).any():
                raise _Fallback  # a record lacks it: the record path says which
            if c.shape == "scalar":
                return values
            if not numeric:
                return [values[i : i + c.fixed] for i in range(0, len(values), c.fixed)]
            if floats:
                loc = self.located
                return self.batch.fixed_floats(self.buf, loc.start[slot], c.fixed)
            return values.reshape(self.size, c.fixed)
        if c.shape == "scalar" and (counts > 1).any():
            raise _Fallback
        return values, _offsets(counts)

    def fixed_numbers(self, slot: int, conv: Conversion, k: int) -> Any:
        """The ``(B, k)`` numbers of feature ``slot`` when every record holds k of them in a list
        of one kind the column takes as it is: float32s gathered straight from the bytes, or
        one int64 varint per record decoded in one pass. None otherwise (then :meth:`values`
        reads them, or finds why the batch cannot be read at once)."""
        loc = self.located
        kind, start, stop = loc.kind[slot], loc.start[slot], loc.stop[slot]
        source = int(kind[0])
        if (kind != source).any() or not conv.exact.get(source, False):
            return None
        if source == FLOAT and conv.value == "float":
            if ((stop - start) != 4 * k).any():
                return None
            return self.batch.fixed_floats(self.buf, start, k)
        if source == INT64 and conv.value == "int" and k == 1:
            found = self.batch.one_varint(self.buf, start, stop)
            return None if found is None else found.reshape(self.size, 1)
        return None

    def ragged(self, c: Column) -> Any:
        present = [self._present(slot) for slot in c.slots]
        if (np.logical_or.reduce(present) & ~np.logical_and.reduce(present)).any():
            raise _Fallback  # a record lacks a part: the record path names it
        parts = []
        for k, slot in enumerate(c.slots):
            parts.append(self.values(slot, _conversion(c) if k == 0 else _LENGTHS))
        flat, flat_counts, _, _ = parts[0]
        levels = [p[0] for p in parts[1:]]
        level_counts = [p[1] for p in parts[1:]]
        for k, lengths in enumerate(levels):
            below = level_counts[k + 1] if k + 1 < len(levels) else flat_counts
            if len(lengths) and int(lengths.min()) < 0:
                raise _Fallback
            if (_segment_sums(lengths, level_counts[k]) != below).any():
                raise _Fallback
        offsets = [_offsets(level_counts[0])] + [_offsets(lengths) for lengths in levels]
        return (flat, *offsets)

    def check_arrays(self, arrays: list[tuple[str, list[Column]]], found: dict[str, Any]) -> None:
        """:meth:`Layout._check_arrays` for the batch: falls back where it fails."""
        for _, members in arrays:
            n = np.full(self.size, -1, np.int64)
            unequal = np.zeros(self.size, bool)
            for c in members:
                present = np.zeros(self.size, bool)
                for slot in c.slots:
                    present |= self._present(slot)
                got = found[c.key]
                counts: Any = np.diff(got[1]) if isinstance(got, tuple) else c.fixed
                unequal |= present & (n >= 0) & (counts != n)
                n = np.where(present & (n < 0), counts, n)
            if unequal.any():
                raise _Fallback

    def vector(self, c: Column) -> Any:
        dense_slot, index_slot, value_slot, size_slot = c.slots
        has_parts = self._present(index_slot) | self._present(value_slot)
        has_dense = self._present(dense_slot)
        if not c.sparse:
            if has_parts.any():
                raise _Fallback
            dense = Column(
                c.key,
                "float",
                "list",
                fixed=c.fixed,
                slots=[dense_slot],
                conversion=c.conversion,
            )
            return self.column(dense)
        if has_dense.any():
            raise _Fallback
        indices, index_counts, _, _ = self.values(index_slot, _LENGTHS)
        entries, entry_counts, _, _ = self.values(value_slot, _conversion(c))
        sizes, size_counts, _, _ = self.values(size_slot, _LENGTHS)
        if (index_counts != entry_counts).any() or (size_counts != has_parts).any():
            raise _Fallback
        distinct = set(sizes.tolist()) | ({c.size} if c.size else set())
        if len(distinct) > 1:
            raise _Fallback
        size = distinct.pop() if distinct else 0
        rows = np.repeat(np.arange(self.size, dtype=np.int64), index_counts)
        if len(indices):
            if int(indices.min()) < 0 or int(indices.max()) >= size:
                raise _Fallback
            step = np.diff(indices)
            if (step[rows[1:] == rows[:-1]] <= 0).any():
                raise _Fallback
        return np.stack([rows, indices], axis=1), entries, (self.size, size)


def _segment_sums(values: Any, counts: Any) -> Any:
    """The sums of ``values`` in consecutive runs of ``counts`` items."""
    total = np.concatenate([[0], np.cumsum(np.asarray(values, np.int64))])
    ends = np.cumsum(counts)
    return total[ends] - total[ends - counts]


def _offsets(counts: Any) -> Any:
    out = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(np.asarray(counts, np.int64), out=out[1:])
    return out


def _join(parts: list[Any], value: str) -> Any:
    if value not in _DTYPES:
        return [v for part in parts for v in part]
    if not parts:
        return np.empty(0, _DTYPES[value])
    return np.concatenate([np.asarray(p, _DTYPES[value]) for p in parts])


def layout(
    schema_json: Mapping[str, Any],
    counts: Mapping[str, tuple[int, int]],
    selected: Sequence[str] | None,
    where: str,
    separator: str = "/",
    record_type: Literal["Example", "SequenceExample"] = "Example",
) -> Layout:
    """The layout of the schema's columns, or of ``selected`` ones (a struct column brings its
    leaves), read from the records (of ``record_type``) at ``where`` (for messages)."""
    found = list(columns(schema_json, counts, separator=separator, record_type=record_type))
    if selected is not None:
        by_key = {c.key: c for c in found}
        found = [by_key[k] for k in select(list(by_key), selected, where, separator)]
    return Layout(found, record_type == "SequenceExample")
