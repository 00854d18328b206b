"""What a trainer gets for each column: a record's values and a batch's arrays, in NumPy."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from spark_tfrecord._format.columns.batches import (
    Batch,
    Fallback,
    batch_column,
    check_arrays,
    collate_column,
    conversion_of,
)
from spark_tfrecord._format.columns.column_errors import ColumnError, StepRefused, ValueRefused
from spark_tfrecord._format.columns.conversions import OutOfRange, conversion
from spark_tfrecord._format.columns.gathered import DTYPES
from spark_tfrecord._format.columns.schema import Column, columns, select
from spark_tfrecord._format.columns.tensor_reader import tensor_reader
from spark_tfrecord._format.columns.values import Ragged, Sparse
from spark_tfrecord._format.entries.decoder import STEPS, ExampleDecoder
from spark_tfrecord._format.entries.wire import BYTES, KIND_NAMES, UNSET, MalformedRecord


class Layout:
    """The columns a reader gives, decided once: their decoder, record readers and batching."""

    def __init__(self, chosen: Sequence[Column], sequence: bool = False) -> None:
        # A feature list: a list of lists (a list per step), or a list for a non-list struct field.
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
        in_lists = {s for c in self.columns if c.sequence for s in c.slots}
        #: In a SequenceExample, per key: whether it is a feature list's (else the context's).
        self.listed = [s in in_lists for s in range(len(keys))] if sequence else None
        self.decoder_keys = [k.encode("utf-8") for k in keys]
        self._readers = [(c.key, self._reader(c)) for c in self.columns]
        arrays: dict[str, list[Column]] = {}
        for c in self.columns:
            if c.array:  # (a SequenceExample's: a feature list per field, a step an element)
                arrays.setdefault(c.array, []).append(c)
        #: Each array of structs' leaves, whose lists must be of one length.
        self.arrays = list(arrays.items())
        #: The slots of numeric Example features, gathered at once for one number a record.
        self.numbers = sorted(
            {s for c in self.columns if c.value in DTYPES and not c.sequence for s in c.slots}
        )
        self._checks: list[list[Any]] | None = None
        #: Whether an empty step of a non-list struct field is a null (as in Spark), not an error.
        self.step_nulls = False

    def use_reader(self, key: str, read: Callable[[list[Any]], Any]) -> None:
        """Reads column ``key`` with ``read`` (of the record's features, by ``slots``) instead."""
        self._readers = [(k, read if k == key else r) for k, r in self._readers]

    # --- one record -----------------------------------------------------------------------

    def record(self, buf: bytes) -> dict[str, Any]:
        """The values of one serialized (Sequence)Example; raises MalformedRecord or ColumnError."""
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
        """Raises the jar's error of one Feature (kind, range, scalar count) in record order."""
        if self._checks is None:
            self._checks = [[] for _ in self.decoder.keys]
            for c in self.columns:
                for k, s in enumerate(c.slots):
                    self._checks[s].append(self._check(c, k))
        for check in self._checks[slot]:
            check(feature)

    def _check(self, c: Column, k: int) -> Any:
        """The jar's check of feature ``k`` of column ``c``, context vs feature list included."""
        if c.shape == "tensor":  # its reader checks it, from both its features at once
            return _no_check
        if c.sequence or c.shape in ("scalar", "list", "uniform"):
            read = dict(self._readers)[c.key]
            width, slot = len(self.decoder.keys), c.slots[0]

            def whole(feature: tuple[int, Any]) -> None:
                features: list[Any] = [None] * width
                features[slot] = feature
                read(features)

            return whole
        # values: a ragged column's k 0, a vector's k 0 (dense) or 2 (sparse); else int lists
        values = (c.shape == "ragged" and k == 0) or (c.shape == "vector" and k in (0, 2))
        column = c if values else Column(c.key, "int", "list", path=c.path, type_name=c.type_name)
        single, read_values = self._single, self.feature_values

        def part(feature: tuple[int, Any]) -> None:
            single(c, feature)
            read_values(column, feature)

        return part

    def _check_arrays(self, features: list[Any]) -> None:
        """Raises the jar's error unless each array of structs' leaves agree on its length."""
        for path, members in self.arrays:
            counts = [_element_values(c, features) for c in members]
            # each present leaf's elements: (count, remainder) by its values per element
            split = {divmod(n, c.length or 1) for c, n in zip(members, counts) if n >= 0}
            if len(split) > 1 or any(rest for _, rest in split):
                told = [
                    f"'{c.key}' absent"
                    if count < 0
                    else f"'{c.key}' {count}"
                    + (f" values, {c.length} per element" if c.length > 1 else "")
                    for c, count in zip(members, counts)
                ]
                what = "feature lists of unequal length (steps)" if self.sequence else "lists"
                if not self.sequence:
                    what += " of unequal length"
                raise ColumnError.said(
                    path, f"Column '{path}' (array<struct>) is read from {what}: " + ", ".join(told)
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
        """A feature list's reader: a two-level Ragged, or a non-list field's one value per step."""
        values = self.feature_values
        (slot,) = c.slots
        name = c.features[0]
        one_per_step = c.shape == "list"
        numeric = c.value in DTYPES

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
            got = [values(c, step) for step in found[1]]
            lengths = np.array([len(g) for g in got], np.int64)
            if one_per_step and len(lengths) and (lengths != 1).any():
                if self.step_nulls and not (lengths > 1).any():
                    return [_first(g) for g in got]
                i = int(np.flatnonzero(lengths > 1 if self.step_nulls else lengths != 1)[0])
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
                (np.concatenate(got) if got else np.empty(0, DTYPES[c.value]))
                if numeric
                else [v for g in got for v in g]
            )
            return flat if one_per_step else Ragged(flat, (lengths,))

        return steps

    @staticmethod
    def feature_values(column: Column, feature: tuple[int, Any]) -> Any:
        """The feature's values as the column's kind: an ndarray, or a list of bytes / str."""
        kind, values = feature
        if kind == UNSET or not len(values):  # no values: of any kind, as the jar reads them
            return [] if column.value not in DTYPES else np.empty(0, DTYPES[column.value])
        convert = conversion_of(column).by_kind[kind]
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
        if c.shape == "tensor":  # (an Example's: no context reader)
            return tensor_reader(c)
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
        values = self.feature_values
        slots, names = c.slots, c.features
        slot = slots[0]  # a scalar's or list's feature
        ints = Column(c.key, "int", "list", path=c.path, type_name=c.type_name)
        if c.shape == "scalar":
            dtype = DTYPES.get(c.value)

            def scalar(features: list[Any]) -> Any:
                feature = features[slot]
                if feature is None or feature[0] == UNSET:
                    return None
                vs = feature[1]
                if len(vs) != 1:
                    if len(vs) == 0:
                        return None
                    if not conversion_of(c).accepts(feature[0]):
                        values(c, feature)  # the kind's error: the jar checks it first
                    raise ColumnError.of(
                        c,
                        f"is a scalar but the feature holds {len(vs)} values; read it as "
                        f"array<{c.spark}> to get them all",
                    )
                got = values(c, feature)
                return got[0] if dtype is None else dtype(got[0])

            return scalar
        if c.shape in ("list", "uniform"):
            length = c.length

            def listed(features: list[Any]) -> Any:
                feature = features[slot]
                if feature is None:
                    return None
                got = values(c, feature)
                if length and not len(got) % length:  # else the array's check (_check_arrays)
                    got = (
                        np.asarray(got).reshape(-1, length)
                        if c.value in DTYPES
                        else [got[i : i + length] for i in range(0, len(got), length)]
                    )
                return got

            return listed
        if c.shape == "ragged":
            # the jar's order of the features, in its messages: the row lengths, then the values
            in_order = [*names[1:], names[0]]
            listed_names = ", ".join(f"'{n}'" for n in in_order)

            def ragged(features: list[Any]) -> Any:
                if all(features[s] is None for s in slots):
                    return None
                got = [
                    values(c if k == 0 else ints, features[s] or (UNSET, None))
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
        dense_slot, index_slot, value_slot, size_slot = slots

        def vector(features: list[Any]) -> Any:
            dense = features[dense_slot]
            if features[index_slot] is None and features[value_slot] is None:
                if dense is None:
                    return None
                got = values(c, dense)
                if not c.sparse:
                    return got
                (nonzero,) = np.nonzero(got.view(np.uint32))  # by bits: -0.0 and NaN are entries
                return Sparse(nonzero.astype(np.int64), got[nonzero], len(got))
            indices = values(ints, features[index_slot] or (UNSET, None))
            entries = values(c, features[value_slot] or (UNSET, None))
            size = values(ints, features[size_slot] or (UNSET, None))
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
        """:meth:`collate` of Examples ``buf[starts[r]:stops[r]]``, or None to decode one by one."""
        try:
            batch = Batch(self.decoder_keys, buf, starts, stops, self.listed, self.numbers)
            found = {c.key: batch_column(batch, c) for c in self.columns}
            check_arrays(batch, self.arrays, found)
            return found
        except (Fallback, MalformedRecord):  # the record path raises the record's error
            return None

    def collate(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """A batch in NumPy by key: fixed-count columns stacked, ``(B,)`` or ``(B, k)``; others as
        ``(values, offsets, ...)``, int64 offsets per level; sparse vectors: tf.SparseTensor parts.
        """
        return {c.key: self.collate_column(c, [r[c.key] for r in records]) for c in self.columns}

    #: Column ``c``'s batch of ``items`` (one a record), as :meth:`collate` gives each column.
    collate_column = staticmethod(collate_column)


def _no_check(feature: tuple[int, Any]) -> None:
    """What is checked of one feature of an encoded tensor alone: nothing."""


def _first(values: Any) -> Any:
    """A step's one value (a Python value), or None where it holds none."""
    if not len(values):
        return None
    return values.tolist()[0] if isinstance(values, np.ndarray) else values[0]


def _element_values(c: Column, features: list[Any]) -> int:
    """The value count of array-of-structs leaf ``c`` (``length`` per element if uniform), or -1."""
    ragged = c.shape == "ragged" and not c.sequence  # present if any of its features is
    if all(features[s] is None for s in (c.slots if ragged else c.slots[:1])):
        return -1
    lengths = features[c.slots[1 if ragged else 0]]
    return 0 if lengths is None or lengths[1] is None else len(lengths[1])


def layout(
    schema_json: Mapping[str, Any],
    counts: Mapping[str, tuple[int, int]],
    selected: Sequence[str] | None,
    where: str,
    separator: str = "/",
    record_type: Literal["Example", "SequenceExample"] = "Example",
) -> Layout:
    """The layout of the schema's columns, or of ``selected`` ones (a struct brings its leaves)."""
    found = list(columns(schema_json, counts, separator=separator, record_type=record_type))
    if selected is not None:
        by_key = {c.key: c for c in found}
        found = [by_key[k] for k in select(list(by_key), selected, where, separator)]
    return Layout(found, record_type == "SequenceExample")
