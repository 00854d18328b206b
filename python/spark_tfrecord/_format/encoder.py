"""The Example encoder: rows as ``tf.train.Example`` (or ``SequenceExample``) records, framed,
byte for byte as the jar writes them.

>>> import pyarrow as pa
>>> encoder = ExampleEncoder("id bigint, x array<float>")
>>> batch = pa.RecordBatch.from_pydict({"id": [7], "x": [[1.0, 2.0]]}, schema=pa.schema(
...     [("id", pa.int64()), ("x", pa.list_(pa.float32()))]))
>>> encoder.encode(batch).records()[0].hex()
'0a200a0b0a02696412051a030a01070a110a0178120c120a0a080000803f00000040'

The rules are the jar's (``codec/ExampleSerializer`` and the classes it uses): the same type
table (:mod:`.type_table`), the same features for nested columns, ragged lists, vectors and
encoded tensors (:mod:`.feature_paths`), the same treatment of nulls (a null value leaves its
feature out; an empty list is a feature with no values; a null inside a list fails), and the
same errors with the same conditions and parameters. Everything that depends on the schema is
decided once, when the encoder is built (an unsupported type fails then, naming its column);
a batch is then encoded column by column with NumPy (:mod:`.packing`), never value by value,
but for the few types that need it (decimals that are not small, encoded tensors).

The rows come as an Arrow record batch (anything with pyarrow's ``RecordBatch`` interface:
``num_rows`` and ``column(i)``; read by :mod:`.arrow` without importing pyarrow), its columns
in the order of the schema's fields, as Spark gives them to a ``DataSourceArrowWriter`` and
``DataFrame.toArrow()`` returns them.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, Union

import numpy as np
import numpy.typing as npt

from spark_tfrecord import errors
from spark_tfrecord._format import arrow
from spark_tfrecord._format.encode_errors import EncodeError, argument_error, data_error
from spark_tfrecord._format.feature_paths import (
    BYTE_ARRAY,
    EXAMPLE,
    RECORD_TYPES,
    SEQUENCE_EXAMPLE,
    TENSOR_DTYPE_KEY,
    TENSOR_ELEMENTS,
    TENSOR_ENCODING_KEY,
    VECTOR_INDICES,
    VECTOR_SIZE,
    VECTOR_VALUES,
    Leaf,
    validate,
)
from spark_tfrecord._format.packing import (
    Bytes,
    Ints,
    Mask,
    Parts,
    Ragged,
    concat,
    const,
    field,
    group,
    materialize,
    offsets,
    single,
    varint,
    varints,
)
from spark_tfrecord._format.type_table import (
    KIND_BYTES,
    KIND_FLOAT,
    KIND_INT64,
    Values,
    depth,
    entry,
    innermost,
    is_array,
    is_vector,
)

#: The most data bytes one record holds (the jar's ``RecordSerializer.MaxDataBytes``).
MAX_DATA_BYTES = (2**31 - 1 - 64) - 16
HEADER_BYTES = 12
FOOTER_BYTES = 4

Schema = Union[str, Mapping[str, Any]]
#: The tags of ``Feature.kind``'s three fields (length-delimited).
_KIND_TAGS = {KIND_BYTES: b"\x0a", KIND_FLOAT: b"\x12", KIND_INT64: b"\x1a"}


class Encoded:
    """A batch's records, framed and laid end to end in one buffer: record i's frame is
    ``framed[offsets[i] : offsets[i + 1]]``, its data 12 bytes in, without the last 4."""

    def __init__(self, framed: Bytes, offsets: Ints) -> None:
        self.framed = framed
        self.offsets = offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def framed_bytes(self) -> memoryview:
        """The framed records, as written to a ``.tfrecord`` file."""
        return self.framed.data

    def record(self, i: int) -> bytes:
        """Record i's data: the serialized message."""
        start, end = int(self.offsets[i]), int(self.offsets[i + 1])
        return self.framed[start + HEADER_BYTES : end - FOOTER_BYTES].tobytes()

    def records(self) -> list[bytes]:
        """Every record's data, in order."""
        return [self.record(i) for i in range(len(self))]


class _Issues:
    """The errors found in a batch; the one raised is the jar's, the first in row order (then
    in feature order, then in the order the jar checks a feature's value)."""

    def __init__(self) -> None:
        self.first: tuple[tuple[int, int, tuple[int, ...]], Callable[[], EncodeError]] | None = None

    def add(
        self, row: int, leaf: int, order: tuple[int, ...], make: Callable[[], EncodeError]
    ) -> None:
        key = (row, leaf, order)
        if self.first is None or key < self.first[0]:
            self.first = (key, make)

    def raise_first(self) -> None:
        if self.first is not None:
            raise self.first[1]()


class _Feature(NamedTuple):
    """One feature's value for every row of a batch: which rows have it, and the message."""

    present: Mask
    value: Parts


#: A plan encodes its features (a few consecutive leaves) for a batch: (batch, n, issues).
_Plan = Callable[[Any, int, _Issues], list[Union[_Feature, None]]]


class ExampleEncoder:
    """Encodes batches of rows of one schema as the jar writes them.

    ``schema``: Spark's JSON form of a ``StructType`` (``StructType.jsonValue()``, a manifest's
    ``schema_json``), the same as a JSON string, a ``StructType`` (anything with
    ``jsonValue()``), or a DDL string (``"id bigint, x array<float>"``). The options are the
    jar's write options of the same names: ``record_type`` (``recordType``: ``Example``,
    ``SequenceExample`` or ``ByteArray``), ``path_separator`` (``pathSeparator``),
    ``vector_layout`` (``vectorLayout``: ``dense`` or ``sparse``); ``require_values`` fails on
    a null as a TensorFlow Datasets write does. A schema or option the jar refuses raises its
    :class:`~spark_tfrecord._format.encode_errors.EncodeError` here.
    """

    def __init__(
        self,
        schema: Schema | Any,
        *,
        record_type: str = EXAMPLE,
        path_separator: str = "/",
        vector_layout: str = "dense",
        require_values: bool = False,
    ) -> None:
        self.schema = schema_json(schema)
        self.record_type = _one_of("recordType", record_type, RECORD_TYPES)
        self.sparse_vectors = (
            _one_of("vectorLayout", vector_layout, ("dense", "sparse")) == "sparse"
        )
        if not path_separator:
            raise argument_error(
                errors.INVALID_OPTION,
                f"Invalid value '{path_separator}' for TFRecord option 'pathSeparator'. "
                "Valid values: a non-empty string (default /).",
                option="pathSeparator",
                value=path_separator,
                valid="a non-empty string (default /)",
            )
        self.require_values = require_values
        self._sequence = self.record_type == SEQUENCE_EXAMPLE
        self.leaves = validate(self.schema, self.record_type, path_separator, self.sparse_vectors)
        if self.record_type == BYTE_ARRAY:
            self._byte_column = str(self.schema["fields"][0]["name"])
        self._keys = [_key_header(leaf.name) for leaf in self.leaves]
        self._in_lists = [self._sequence and depth(leaf.data_type) == 2 for leaf in self.leaves]
        self._plans: list[tuple[int, _Plan]] = []
        i = 0
        while i < len(self.leaves):
            width, plan = self._plan(i)
            self._plans.append((i, plan))
            i += width

    # --- encoding ----------------------------------------------------------------------------

    def encode(self, batch: Any) -> Encoded:
        """The records of a batch's rows (see the module's docstring for what a batch is).

        A value the jar cannot write raises its error (``TFRECORD_DATA_MISMATCH``, naming the
        column; ``row`` is the row's index in the batch), for the first such row.
        """
        n = int(batch.num_rows)
        if self.record_type == BYTE_ARRAY:
            return _frame(self._byte_array(batch.column(0), n), n)
        issues = _Issues()
        features: list[_Feature | None] = [None] * len(self.leaves)
        for first, plan in self._plans:
            for k, feature in enumerate(plan(batch, n, issues)):
                features[first + k] = feature
        if self.require_values:
            for i, feature in enumerate(features):
                if feature is not None and not feature.present.all():
                    row = int(np.argmin(feature.present))
                    issues.add(row, i, (-1,), self._absent(i, row))
        issues.raise_first()
        contexts: list[Ragged] = []
        lists: list[Ragged] = []
        context_size = np.zeros(n, np.int64)
        lists_size = np.zeros(n, np.int64)
        for i, feature in enumerate(features):
            assert feature is not None
            entry_parts = self._entry(i, feature)
            if self._in_lists[i]:
                lists.extend(entry_parts.parts)
                lists_size += entry_parts.size
            else:
                contexts.extend(entry_parts.parts)
                context_size += entry_parts.size
        everyone = np.ones(n, np.bool_)
        if self._sequence:
            record = [
                *field(b"\x0a", Parts(contexts, context_size), context_size > 0).parts,
                *field(b"\x12", Parts(lists, lists_size), lists_size > 0).parts,
            ]
        else:
            record = field(b"\x0a", Parts(contexts, context_size), everyone).parts
        return _frame(record, n)

    def encode_batches(self, batches: Iterable[Any]) -> Iterator[Encoded]:
        """:meth:`encode` of each batch (a pyarrow ``Table`` gives its ``to_batches()``)."""
        for batch in batches:
            yield self.encode(batch)

    def _entry(self, i: int, feature: _Feature) -> Parts:
        """The map entry ``{key: name, value: feature}`` of feature i, for its present rows."""
        present, value = feature
        key = self._keys[i]
        lengths = varints(value.size, present)
        inner = Parts(
            [const(key, present), lengths, *value.parts],
            np.where(present, len(key) + lengths.size + value.size, 0),
        )
        return field(b"\x0a", inner, present)

    def _absent(self, i: int, row: int) -> Callable[[], EncodeError]:
        column = self.leaves[i].column
        return lambda: data_error(
            errors.DATA_MISMATCH,
            column,
            f"Column '{column}' is null in a row, and a TensorFlow Datasets feature has no null "
            "(its parser fails on a record without it). Drop or fill the nulls first.",
            row,
        )

    def _byte_array(self, column: Any, n: int) -> list[Ragged]:
        column_name = self._byte_column
        ok = arrow.valid(column)
        if ok is not None and not ok.all():
            row = int(np.argmin(ok))
            raise data_error(
                errors.DATA_MISMATCH,
                column_name,
                f"Column '{column_name}' is null in a row: recordType ByteArray writes each value "
                "as one record and has nothing to write for a null. Filter the nulls out first.",
                row,
            )
        buf, off = arrow.binary(column)
        return [Ragged(buf, off[:-1], np.diff(off))]

    # --- plans: what each feature is, decided once ------------------------------------------

    def _plan(self, i: int) -> tuple[int, _Plan]:
        """The plan of the leaves from i on: how many it covers, and the plan."""
        leaf = self.leaves[i]
        if leaf.tensor_part:
            return 2, _tensor_plan(leaf, i)
        if leaf.vector_part:
            return 3, _sparse_vector_plan(leaf, i)
        if leaf.ragged_level >= 0:
            d = depth(leaf.data_type)
            return d, _ragged_plan(leaf, i, d)
        if leaf.in_array_of_structs:
            return 1, _element_plan(leaf, i, self._sequence)
        t = leaf.data_type
        if is_vector(t):
            return 1, _dense_vector_plan(leaf)
        if self._sequence and depth(t) == 2:
            return 1, _feature_list_plan(leaf, i)
        if is_array(t):
            return 1, _list_plan(leaf, i, fixed_length=0 if self._sequence else leaf.list_length)
        return 1, _scalar_plan(leaf)


# --- the schema -------------------------------------------------------------------------------


def schema_json(schema: Schema | Any) -> dict[str, Any]:
    """Spark's JSON form of a schema given as JSON (a mapping or its text), a ``StructType``
    (anything with ``jsonValue()``), or DDL."""
    import json

    if hasattr(schema, "jsonValue"):
        return dict(schema.jsonValue())
    if isinstance(schema, Mapping):
        return dict(schema)
    text = str(schema).strip()
    if text.startswith("{"):
        return dict(json.loads(text))
    from spark_tfrecord._ddl import parse_ddl

    return parse_ddl(text)


def _one_of(option: str, value: str, valid: Sequence[str]) -> str:
    for v in valid:
        if v.lower() == str(value).strip().lower():
            return v
    raise argument_error(
        errors.INVALID_OPTION,
        f"Invalid value '{value}' for TFRecord option '{option}'. "
        f"Valid values: {', '.join(valid)}.",
        option=option,
        value=str(value),
        valid=", ".join(valid),
    )


def _key_header(name: str) -> bytes:
    """``key = 1`` of a map entry, then the tag of its ``value = 2``."""
    key = name.encode("utf-8")
    return b"\x0a" + varint(len(key)) + key + b"\x12"


# --- getting at a leaf's values ---------------------------------------------------------------


def _column(batch: Any, leaf: Leaf, n: int) -> tuple[Any, Mask]:
    """The leaf's array (or its array of structs'), and which rows reach a non-null one."""
    present = np.ones(n, np.bool_)
    parent: Any = None
    for ordinal in leaf.structs:
        parent = batch.column(ordinal) if parent is None else arrow.child(parent, ordinal)
        present &= arrow.present(parent, n)
    a = batch.column(leaf.ordinal) if parent is None else arrow.child(parent, leaf.ordinal)
    present &= arrow.present(a, n)
    return a, present


def _read(t: Any, a: Any) -> Values:
    e = entry(t)
    assert e is not None
    return e.read(a)


def _kind(t: Any) -> int:
    e = entry(t)
    assert e is not None
    return e.kind


def _ranges(starts: Ints, counts: Ints) -> Ints:
    """The indices ``starts[i] .. starts[i] + counts[i]``, for every i, laid end to end."""
    total = int(counts.sum())
    before = offsets(counts)[:-1]
    return np.repeat(starts - before, counts) + np.arange(total, dtype=np.int64)


def _unit_rows(unit_offsets: Ints, units: Ints) -> Ints:
    """The row (or parent unit) each of ``units`` is in."""
    return np.searchsorted(unit_offsets, units, side="right") - 1


def _bad_units(a: Any, used: Ints) -> Ints:
    """Which of the units ``used`` of array ``a`` are null."""
    ok = arrow.valid(a)
    if ok is None or len(used) == 0:
        return np.zeros(0, np.int64)
    return used[~ok[used]]


# --- features ---------------------------------------------------------------------------------


def feature(kind: int, values: Values, unit_offsets: Ints, present: Mask) -> Parts:
    """``Feature`` messages: unit u (a row, or a step of a feature list) holds the values
    ``unit_offsets[u]`` to ``unit_offsets[u+1]``; nothing for a unit not ``present``."""
    lo, hi = unit_offsets[:-1], unit_offsets[1:]
    count = np.where(present, hi - lo, 0)
    if kind == KIND_BYTES:
        buf, off = values
        lengths = np.diff(off)
        everyone = np.ones(len(lengths), np.bool_)
        each = field(b"\x0a", single(Ragged(buf, off[:-1], lengths)), everyone)
        if len(lo) == len(lengths) and np.array_equal(lo, np.arange(len(lo))):
            # One value per unit (a scalar column): its parts are the unit's, uncopied.
            masked = Parts(
                [Ragged(p.buf, p.start, np.where(present, p.size, 0)) for p in each.parts],
                np.where(present, each.size, 0),
            )
            return field(b"\x0a", masked, present)
        content = group(materialize(each, len(lengths)), unit_offsets, present)
        return field(b"\x0a", single(content), present)
    if kind == KIND_FLOAT:
        floats = np.ascontiguousarray(values, "<f4").view(np.uint8)
        payload = Ragged(floats, 4 * lo, 4 * count)
        packed = field(b"\x0a", single(payload), present & (count > 0))
        return field(b"\x12", packed, present)
    numbers = varints(values, None)  # type: ignore[arg-type]
    payload = group(numbers, unit_offsets, present)
    packed = field(b"\x0a", single(payload), present & (payload.size > 0))
    return field(b"\x1a", packed, present)


def feature_list(steps: Parts, step_offsets: Ints, present: Mask) -> Parts:
    """``FeatureList`` messages: row r's steps are ``step_offsets[r]`` to ``[r+1]``, each a
    ``Feature`` of ``steps`` (one per step)."""
    everyone = np.ones(len(steps.size), np.bool_)
    each = materialize(field(b"\x0a", steps, everyone), len(steps.size))
    return single(group(each, step_offsets, present))


def _null_element(column: str, index: int, row: int) -> Callable[[], EncodeError]:
    return lambda: data_error(
        errors.DATA_MISMATCH,
        column,
        f"Column '{column}' holds an array with a null element at index {index}: TFRecord "
        "feature lists cannot hold nulls. Drop or fill them first (for example with "
        "filter(x -> x IS NOT NULL) or coalesce).",
        row,
    )


def _scalar_plan(leaf: Leaf) -> _Plan:
    t, kind = leaf.data_type, _kind(leaf.data_type)

    def plan(batch: Any, n: int, issues: _Issues) -> list[_Feature | None]:
        a, present = _column(batch, leaf, n)
        units = np.arange(n + 1, dtype=np.int64)
        return [_Feature(present, feature(kind, _read(t, a), units, present))]

    return plan


def _check_values(
    leaf: Leaf, i: int, values: Any, unit_offsets: Ints, present: Mask, issues: _Issues, order: int
) -> bool:
    """Adds the first null value of each present unit's list; whether there was none."""
    used = _ranges(unit_offsets[:-1][present], np.diff(unit_offsets)[present])
    bad = _bad_units(values, used)
    if len(bad) == 0:
        return True
    rows = _unit_rows(unit_offsets, bad)
    for unit, row in zip(bad.tolist(), rows.tolist()):
        index = unit - int(unit_offsets[row])
        issues.add(row, i, (order, index), _null_element(leaf.column, index, row))
    return False


def _list_plan(leaf: Leaf, i: int, fixed_length: int) -> _Plan:
    t = leaf.data_type["elementType"]
    kind = _kind(t)

    def plan(batch: Any, n: int, issues: _Issues) -> list[_Feature | None]:
        a, present = _column(batch, leaf, n)
        off = arrow.list_offsets(a)
        ok = True
        if fixed_length:
            counts = np.diff(off)
            wrong = np.flatnonzero(present & (counts != fixed_length))
            for row in wrong[:1].tolist():
                issues.add(row, i, (0,), _wrong_length(leaf, int(counts[row]), fixed_length, row))
                ok = False
        values = arrow.list_values(a)
        ok = _check_values(leaf, i, values, off, present, issues, 1) and ok
        if not ok:
            return [None]
        return [_Feature(present, feature(kind, _read(t, values), off, present))]

    return plan


def _wrong_length(leaf: Leaf, count: int, k: int, row: int) -> Callable[[], EncodeError]:
    return lambda: data_error(
        errors.DATA_MISMATCH,
        leaf.column,
        f"Column '{leaf.column}' holds an array of {count} values in a row, but its values have "
        f"a fixed shape of {k} (tfrecord.listLength).",
        row,
    )


def _feature_list_plan(leaf: Leaf, i: int) -> _Plan:
    """``array<array<T>>`` in a SequenceExample: a feature list, one step per inner array."""
    t = innermost(leaf.data_type)
    kind = _kind(t)

    def plan(batch: Any, n: int, issues: _Issues) -> list[_Feature | None]:
        a, present = _column(batch, leaf, n)
        step_offsets = arrow.list_offsets(a)
        steps = arrow.list_values(a)
        used = _ranges(step_offsets[:-1][present], np.diff(step_offsets)[present])
        ok = True
        for step in _bad_units(steps, used).tolist():
            row = int(_unit_rows(step_offsets, np.array([step]))[0])
            index = step - int(step_offsets[row])
            issues.add(row, i, (index,), _null_element(leaf.column, index, row))
            ok = False
        value_offsets = arrow.list_offsets(steps)
        values = arrow.list_values(steps)
        used_steps = _ranges(step_offsets[:-1][present], np.diff(step_offsets)[present])
        step_present = np.zeros(len(value_offsets) - 1, np.bool_)
        step_present[used_steps] = True
        step_ok = arrow.valid(steps)
        if step_ok is not None:
            step_present &= step_ok
        for value in _bad_units(
            values, _ranges(value_offsets[:-1][step_present], np.diff(value_offsets)[step_present])
        ).tolist():
            step = int(_unit_rows(value_offsets, np.array([value]))[0])
            row = int(_unit_rows(step_offsets, np.array([step]))[0])
            index = value - int(value_offsets[step])
            issues.add(
                row,
                i,
                (step - int(step_offsets[row]), index),
                _null_element(leaf.column, index, row),
            )
            ok = False
        if not ok:
            return [None]
        step_features = feature(kind, _read(t, values), value_offsets, step_present)
        return [_Feature(present, feature_list(step_features, step_offsets, present))]

    return plan


# --- arrays of structs ------------------------------------------------------------------------


def _elements(
    batch: Any, leaf: Leaf, n: int, i: int, issues: _Issues
) -> tuple[Any, Ints, Mask, Ints, bool]:
    """An array of structs' leaf: the leaf's array over every element, the rows' element
    offsets, the rows that have the array, the elements used, and whether none is null (the
    jar's ``ElementFieldArray.point``)."""
    a, present = _column(batch, leaf, n)
    element_offsets = arrow.list_offsets(a)
    used = _ranges(element_offsets[:-1][present], np.diff(element_offsets)[present])
    elements = arrow.list_values(a)
    null_element = arrow.valid(elements)
    reached = np.ones(len(elements), np.bool_) if null_element is None else null_element.copy()
    s = elements
    for ordinal in leaf.in_element:
        s = arrow.child(s, ordinal)
        reached &= arrow.present(s, len(elements))
    values = arrow.child(s, leaf.element_ordinal)
    reached &= arrow.present(values, len(elements))
    bad = used[~reached[used]] if len(used) else used
    if len(bad):
        # The first bad element of each row (the jar stops at the first).
        rows = _unit_rows(element_offsets, bad)
        first = np.unique(rows, return_index=True)[1]
        for element, row in zip(bad[first].tolist(), rows[first].tolist()):
            index = element - int(element_offsets[row])
            is_null = null_element is not None and not null_element[element]
            what = "is null" if is_null else "holds a null for this field"
            issues.add(row, i, (index, 0), _element_null(leaf.column, index, what, row))
    return values, element_offsets, present, used, len(bad) == 0


def _element_null(column: str, index: int, what: str, row: int) -> Callable[[], EncodeError]:
    return lambda: data_error(
        errors.DATA_MISMATCH,
        column,
        f"Column '{column}': element {index} of its array of structs {what}. An array of "
        "structs is written as one feature per field holding every element's value, which has "
        "no place for a null. Drop or fill the nulls first.",
        row,
    )


def _element_plan(leaf: Leaf, i: int, sequence: bool) -> _Plan:
    """A leaf of an array of structs that is not ragged: one value per element (a list of
    them, or a feature list of one-value steps), the concatenated lists of a fixed length, or
    in a SequenceExample a feature list of the elements' lists."""
    t = leaf.leaf_type
    list_leaf = is_array(t)
    kind = _kind(innermost(t))
    k = leaf.list_length if leaf.concatenated else 0

    def plan(batch: Any, n: int, issues: _Issues) -> list[_Feature | None]:
        values, element_offsets, present, used, ok = _elements(batch, leaf, n, i, issues)
        if not list_leaf:
            if not ok:
                return [None]
            flat = _read(t, values)
            if sequence:
                units = np.arange(len(values) + 1, dtype=np.int64)
                step_present = np.zeros(len(values), np.bool_)
                step_present[used] = True
                steps = feature(kind, flat, units, step_present)
                return [_Feature(present, feature_list(steps, element_offsets, present))]
            return [_Feature(present, feature(kind, flat, element_offsets, present))]
        value_offsets = arrow.list_offsets(values)
        inner = arrow.list_values(values)
        element_ok = np.zeros(len(values), np.bool_)
        element_ok[used] = True
        element_ok &= arrow.present(values, len(values))
        counts = np.diff(value_offsets)
        if k:
            for element in used[counts[used] != k].tolist() if len(used) else []:
                if not element_ok[element]:
                    continue
                row = int(_unit_rows(element_offsets, np.array([element]))[0])
                index = element - int(element_offsets[row])
                issues.add(
                    row,
                    i,
                    (index, 1),
                    _wrong_element_length(leaf, index, int(counts[element]), k, row),
                )
                ok = False
        checked = element_ok & (counts == k) if k else element_ok
        values_used = _ranges(value_offsets[:-1][checked], counts[checked])
        for value in _bad_units(inner, values_used).tolist():
            element = int(_unit_rows(value_offsets, np.array([value]))[0])
            row = int(_unit_rows(element_offsets, np.array([element]))[0])
            index = element - int(element_offsets[row])
            j = value - int(value_offsets[element])
            if k:
                issues.add(row, i, (index, 2, j), _element_list_null(leaf, index, j, row))
            else:
                issues.add(row, i, (index, 2, j), _null_element(leaf.column, j, row))
            ok = False
        if not ok:
            return [None]
        flat = _read(innermost(t), inner)
        if sequence:
            steps = feature(kind, flat, value_offsets, element_ok)
            return [_Feature(present, feature_list(steps, element_offsets, present))]
        # Concatenated: each row's values are its elements' lists, one after the other.
        return [_Feature(present, feature(kind, flat, value_offsets[element_offsets], present))]

    return plan


def _wrong_element_length(
    leaf: Leaf, index: int, count: int, k: int, row: int
) -> Callable[[], EncodeError]:
    return lambda: data_error(
        errors.DATA_MISMATCH,
        leaf.column,
        f"Column '{leaf.column}': element {index} of its array of structs holds {count} values, "
        f"but this field holds exactly {k} per element (tfrecord.listLength): the lists of "
        "every element are stored as one.",
        row,
    )


def _element_list_null(leaf: Leaf, index: int, j: int, row: int) -> Callable[[], EncodeError]:
    return lambda: data_error(
        errors.DATA_MISMATCH,
        leaf.column,
        f"Column '{leaf.column}': element {index} of its array of structs holds a null at index "
        f"{j}, and a list has no place for a null.",
        row,
    )


# --- ragged lists -----------------------------------------------------------------------------


def _ragged_plan(leaf: Leaf, i: int, d: int) -> _Plan:
    """A list of lists of depth d in an Example: its d features ``ragged_row_lengths_0`` to
    ``_{d-2}`` and ``ragged_flat_values`` (the jar's ``RaggedNest``)."""
    kind = _kind(innermost(leaf.data_type))
    t = innermost(leaf.data_type)

    def plan(batch: Any, n: int, issues: _Issues) -> list[_Feature | None]:
        if leaf.in_array_of_structs:
            level1, rows_offsets, present, _used, ok = _elements(batch, leaf, n, i, issues)
            if not ok:
                return [None] * d
            check_first = False
        else:
            outer, present = _column(batch, leaf, n)
            rows_offsets = arrow.list_offsets(outer)
            level1 = arrow.list_values(outer)
            check_first = True
        # levels[k]: the arrays at depth k+1; offsets[k] maps the units of depth k to them.
        arrays = [level1]
        maps = [rows_offsets]
        for _ in range(d - 1):
            maps.append(arrow.list_offsets(arrays[-1]))
            arrays.append(arrow.list_values(arrays[-1]))
        # Rows' units at each depth, composed.
        composed = [rows_offsets]
        for m in maps[1:]:
            composed.append(m[composed[-1]])
        if not _check_nest(leaf, i, arrays, maps, composed, present, check_first, issues):
            return [None] * d
        out: list[_Feature | None] = []
        for level in range(d - 1):
            lengths = np.diff(maps[level + 1])
            out.append(_Feature(present, feature(KIND_INT64, lengths, composed[level], present)))
        flat = _read(t, arrays[-1])
        out.append(_Feature(present, feature(kind, flat, composed[-1], present)))
        return out

    return plan


def _check_nest(
    leaf: Leaf,
    i: int,
    arrays: list[Any],
    maps: list[Ints],
    composed: list[Ints],
    present: Mask,
    check_first: bool,
    issues: _Issues,
) -> bool:
    """Adds the first null list or value of each row in depth-first order; whether none."""
    ok = True
    d = len(arrays) - 1  # arrays[d] holds the values
    for level, a in enumerate(arrays):
        if level == 0 and not check_first:
            continue
        c = composed[level]
        used = _ranges(c[:-1][present], np.diff(c)[present])
        for unit in _bad_units(a, used).tolist():
            path = [unit]
            for m in reversed(maps[: level + 1]):
                path.append(int(_unit_rows(m, np.array([path[-1]]))[0]))
            row = path[-1]
            indices = []
            for k in range(level + 1):
                parent, child = path[level + 1 - k], path[level - k]
                indices.append(child - int(maps[k][parent]))
            what = "value" if level == d else "list"
            issues.add(row, i, tuple(indices), _ragged_null(leaf.column, what, indices, row))
            ok = False
    return ok


def _ragged_null(column: str, what: str, indices: list[int], row: int) -> Callable[[], EncodeError]:
    where = "".join(f"[{k}]" for k in indices)
    return lambda: data_error(
        errors.DATA_MISMATCH,
        column,
        f"Column '{column}' holds a null {what} at {where} of its lists of lists in a row: the "
        "ragged layout (ragged_flat_values and ragged_row_lengths) has no place for a null. "
        "Drop or fill the nulls first.",
        row,
    )


# --- vectors ----------------------------------------------------------------------------------


class _Vectors(NamedTuple):
    dense: Mask
    size: Ints
    index_offsets: Ints
    indices: Ints
    value_offsets: Ints
    values: np.ndarray[Any, np.dtype[np.float64]]


def _vectors(a: Any) -> _Vectors:
    """VectorUDT's storage: struct<type: tinyint (0 sparse, 1 dense), size: int,
    indices: array<int>, values: array<double>>."""
    kinds = arrow.fixed(arrow.child(a, 0), "<i1")
    size = arrow.fixed(arrow.child(a, 1), "<i4").astype(np.int64)
    indices_list, values_list = arrow.child(a, 2), arrow.child(a, 3)
    return _Vectors(
        kinds == 1,
        size,
        arrow.list_offsets(indices_list),
        arrow.fixed(arrow.list_values(indices_list), "<i4").astype(np.int64),
        arrow.list_offsets(values_list),
        arrow.fixed(arrow.list_values(values_list), "<f8"),
    )


def _dense_vector_plan(leaf: Leaf) -> _Plan:
    """A vector as one dense ``float_list`` of its size (a sparse one's zeros written)."""

    def plan(batch: Any, n: int, issues: _Issues) -> list[_Feature | None]:
        a, present = _column(batch, leaf, n)
        v = _vectors(a)
        stored = np.diff(v.value_offsets)
        count = np.where(present, np.where(v.dense, stored, v.size), 0)
        count = np.maximum(count, 0)
        out_offsets = offsets(count)
        out = np.zeros(int(out_offsets[-1]), np.float64)
        dense = present & v.dense
        src = _ranges(v.value_offsets[:-1][dense], stored[dense])
        out[_ranges(out_offsets[:-1][dense], stored[dense])] = v.values[src]
        sparse = present & ~v.dense
        nnz = np.diff(v.index_offsets)
        rows = np.repeat(np.flatnonzero(sparse), nnz[sparse])
        at = _ranges(v.index_offsets[:-1][sparse], nnz[sparse])
        taken = _ranges(v.value_offsets[:-1][sparse], nnz[sparse])
        index = v.indices[at]
        inside = (index >= 0) & (index < v.size[rows])
        out[out_offsets[rows[inside]] + index[inside]] = v.values[taken[inside]]
        with np.errstate(over="ignore", invalid="ignore"):
            floats = out.astype(np.float32)
        return [_Feature(present, feature(KIND_FLOAT, floats, out_offsets, present))]

    return plan


def _sparse_vector_plan(leaf: Leaf, i: int) -> _Plan:
    """A vector as ``tf.io.SparseFeature`` reads it: ``/indices``, ``/values``, ``/size``: a
    sparse vector's stored entries, a dense one's non-zero ones (by bits: -0.0, NaN kept)."""

    def plan(batch: Any, n: int, issues: _Issues) -> list[_Feature | None]:
        a, present = _column(batch, leaf, n)
        v = _vectors(a)
        stored = np.diff(v.value_offsets)
        entries = np.where(present, stored, 0)
        rows = np.repeat(np.arange(n), entries)
        at = _ranges(v.value_offsets[:-1], entries)
        position = at - np.repeat(v.value_offsets[:-1], entries)
        values = v.values[at]
        dense = v.dense[rows]
        keep = ~dense | (values.view(np.int64) != 0)
        index_at = np.repeat(v.index_offsets[:-1], entries) + position
        index = np.where(
            dense, position, v.indices[np.where(dense, 0, index_at)] if len(v.indices) else 0
        )
        counts = np.bincount(rows[keep], minlength=n).astype(np.int64)
        unit_offsets = offsets(counts)
        with np.errstate(over="ignore", invalid="ignore"):
            floats = values[keep].astype(np.float32)
        size = np.where(v.dense, stored, v.size)
        units = np.arange(n + 1, dtype=np.int64)
        return [
            _Feature(
                present, feature(KIND_INT64, index[keep].astype(np.int64), unit_offsets, present)
            ),
            _Feature(present, feature(KIND_FLOAT, floats, unit_offsets, present)),
            _Feature(present, feature(KIND_INT64, size, units, present)),
        ]

    assert VECTOR_INDICES == 1 and VECTOR_VALUES == 2 and VECTOR_SIZE == 3
    return plan


# --- encoded tensors --------------------------------------------------------------------------


def _tensor_plan(leaf: Leaf, i: int) -> _Plan:
    """An encoded tensor column: ``x/value`` (its values' little-endian bytes in C order,
    zlib-deflated for ``zlib``) and ``x/shape``, as ``tfds.features.Tensor`` stores one."""
    rank = depth(leaf.data_type)
    dtype_name = str(leaf.tensor.get(TENSOR_DTYPE_KEY))
    if dtype_name not in TENSOR_ELEMENTS:
        valid = ", ".join(sorted(TENSOR_ELEMENTS))
        raise argument_error(
            errors.INVALID_SCHEMA,
            f"Column '{leaf.column}' holds an encoded tensor of dtype '{dtype_name}' "
            f"({TENSOR_DTYPE_KEY}), which is not one of {valid}.",
            column=leaf.column,
        )
    dtype = TENSOR_ELEMENTS[dtype_name]
    deflate = leaf.tensor.get(TENSOR_ENCODING_KEY) == "zlib"
    t = innermost(leaf.data_type)

    def fail(what: str, row: int) -> Callable[[], EncodeError]:
        return lambda: data_error(
            errors.DATA_MISMATCH,
            leaf.column,
            f"Column '{leaf.column}' holds an encoded tensor of rank {rank} that {what} in a row: "
            "each row's value must be a rectangular array without nulls.",
            row,
        )

    def plan(batch: Any, n: int, issues: _Issues) -> list[_Feature | None]:
        a, present = _column(batch, leaf, n)
        arrays = [a]
        maps = []
        for _ in range(rank):
            maps.append(arrow.list_offsets(arrays[-1]))
            arrays.append(arrow.list_values(arrays[-1]))
        flat = _tensor_values(t, arrays[-1], dtype)
        valids = [arrow.valid(x) for x in arrays[1:]]
        blobs: list[bytes] = []
        shapes: list[int] = []
        ok = True
        for row in np.flatnonzero(present).tolist():
            lo, hi = row, row + 1
            dims = []
            problem = None
            for level in range(rank):
                lengths = np.diff(maps[level][lo : hi + 1])
                if len(lengths) and not np.all(lengths == lengths[0]):
                    first = int(lengths[0])
                    other = int(lengths[np.argmax(lengths != lengths[0])])
                    problem = (
                        f"is not rectangular: its arrays at depth {level + 1} hold {first} and "
                        f"{other} values"
                    )
                    break
                dims.append(int(lengths[0]) if len(lengths) else 0)
                lo, hi = int(maps[level][lo]), int(maps[level][hi])
                ok_level = valids[level]
                if ok_level is not None and not ok_level[lo:hi].all():
                    problem = f"holds a null at depth {level + 1}"
                    break
            if problem is None and dtype_name == "uint8" and hi > lo:
                raw_values = flat[1][lo:hi]
                outside = (raw_values < 0) | (raw_values > 255)
                if outside.any():
                    v = int(raw_values[np.argmax(outside)])
                    problem = f"holds {v}, which an uint8 tensor cannot hold"
            if problem is not None:
                issues.add(row, i, (), fail(problem, row))
                ok = False
                break
            raw = flat[0][lo:hi].tobytes()
            blobs.append(zlib.compress(raw) if deflate else raw)
            shapes.extend(dims)
        if not ok:
            return [None, None]
        lengths = np.zeros(n, np.int64)
        lengths[present] = [len(b) for b in blobs]
        data = np.frombuffer(b"".join(blobs), np.uint8)
        value_offsets = np.zeros(n + 1, np.int64)
        value_offsets[1:] = np.cumsum(lengths)
        units = np.arange(n + 1, dtype=np.int64)
        values = feature(KIND_BYTES, (data, value_offsets), units, present)
        shape_counts = np.where(present, rank, 0)
        shape = feature(KIND_INT64, np.array(shapes, np.int64), offsets(shape_counts), present)
        return [_Feature(present, values), _Feature(present, shape)]

    return plan


def _tensor_values(t: Any, a: Any, dtype: str) -> tuple[Bytes, np.ndarray[Any, Any]]:
    """An encoded tensor's values as stored (little-endian ``dtype``), and as read."""
    if t == "boolean":
        read: np.ndarray[Any, Any] = arrow.booleans(a)
    elif t in ("float", "double"):
        read = arrow.fixed(a, "<f4" if t == "float" else "<f8")
    else:
        read = _read(t, a)  # type: ignore[assignment]
    with np.errstate(over="ignore", invalid="ignore"):
        stored = read.astype(dtype)
    return stored.view(np.uint8).reshape(len(read), -1) if len(read) else np.zeros(
        (0, 1), np.uint8
    ), read


# --- framing ----------------------------------------------------------------------------------


def _frame(record: list[Ragged], n: int) -> Encoded:
    """The records framed as TensorFlow's ``RecordWriter`` frames them: length (uint64 LE), its
    masked CRC32C, the data, the data's masked CRC32C."""
    from spark_tfrecord._manifest import _crc32c

    crc = _crc32c()[0]
    sizes = np.zeros(n, np.int64)
    for p in record:
        sizes += p.size
    if n and int(sizes.max()) > MAX_DATA_BYTES:
        row = int(np.argmax(sizes > MAX_DATA_BYTES))
        raise data_error(
            errors.RECORD_TOO_LARGE,
            None,
            f"Row too large for one TFRecord: {int(sizes[row])} bytes, at most {MAX_DATA_BYTES} "
            "fit in one record",
            row,
        )
    everyone = np.ones(n, np.bool_)
    header = const(bytes(HEADER_BYTES), everyone)
    footer = const(bytes(FOOTER_BYTES), everyone)
    framed, off = concat([header, *record, footer], n)
    start = off[:-1]
    columns = np.arange(8, dtype=np.int64)
    framed[(start[:, None] + columns).ravel()] = sizes.astype("<u8").view(np.uint8)
    lengths, which = np.unique(sizes, return_inverse=True)
    raw_crcs = [crc(struct.pack("<Q", int(x))) for x in lengths.tolist()]
    length_crcs = _masked_all(np.array(raw_crcs, np.uint64))
    four = np.arange(4, dtype=np.int64)
    framed[(start[:, None] + 8 + four).ravel()] = length_crcs[which].view(np.uint8)
    view = framed.data
    begin = (start + HEADER_BYTES).tolist()
    end = (off[1:] - FOOTER_BYTES).tolist()
    data_crcs = _masked_all(np.array([crc(view[b:e]) for b, e in zip(begin, end)], np.uint64))
    framed[((off[1:] - FOOTER_BYTES)[:, None] + four).ravel()] = data_crcs.view(np.uint8)
    return Encoded(framed, off)


def _masked_all(crcs: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint32]:
    """TFRecord's mask of each CRC32C: rotated right by 15 bits, plus a constant (mod 2^32)."""
    rotated = ((crcs >> np.uint64(15)) | (crcs << np.uint64(17))) & np.uint64(0xFFFFFFFF)
    masked: npt.NDArray[np.uint32] = (
        (rotated + np.uint64(0xA282EAD8)) & np.uint64(0xFFFFFFFF)
    ).astype("<u4")
    return masked
