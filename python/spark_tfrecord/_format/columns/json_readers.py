"""The readers of ``inspect``'s JSON rows, one per column, decided once per schema: each reads its
column's value from a record's features
(:data:`~spark_tfrecord._format.columns.json_values.Features`) as the data source reads it
(docs/types.md). A feature absent is null, a struct is null when none of its features is there, a
list of lists in an ``Example`` comes from its ragged features, in a ``SequenceExample`` from its
feature list, an ML vector from a dense list or the ``x/indices``, ``x/values``, ``x/size``
features.

An array of structs comes from one list per leaf of its element (parallel lists; in a
``SequenceExample`` one feature list per leaf, a step per element), as the jar's
``NestedRowAssembler`` builds it, with the jar's errors word for word; an encoded tensor column
is read by :mod:`spark_tfrecord._format.columns.json_tensors`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from spark_tfrecord import errors
from spark_tfrecord._format.columns.feature_paths import LIST_LENGTH_KEY, TENSOR_ENCODING_KEY
from spark_tfrecord._format.columns.json_errors import Mismatch, Unsupported
from spark_tfrecord._format.columns.json_tensors import tensor_reader
from spark_tfrecord._format.columns.json_values import (
    Features,
    Lists,
    Reader,
    flat_values,
    float_values,
    json_atom,
)
from spark_tfrecord._format.columns.schema import depth, is_array, is_struct
from spark_tfrecord._format.columns.type_table import FIXED_SIZE, array_of, simple_string
from spark_tfrecord._format.entries.wire import FLOAT, INT64, UNSET


def _type_name(t: Any) -> str:
    return t if isinstance(t, str) else str(t.get("type"))


def reader(
    t: Any, column: str, name: str, separator: str, sequence: bool, meta: Mapping[str, Any]
) -> tuple[Reader, list[str]]:
    """The reader of a column of type ``t`` from the feature ``name``, and the features it
    reads (for a struct's "none of its features" rule)."""
    if TENSOR_ENCODING_KEY in meta and not sequence:
        return tensor_reader(t, column, name, separator, meta)
    if isinstance(t, dict) and t.get("type") == "udt":
        return _vector(column, name, separator), [
            name,
            *(name + separator + p for p in ("indices", "values", "size")),
        ]
    if isinstance(t, dict) and t.get("type") == "struct":
        fields = []
        leaves: list[str] = []
        for f in t["fields"]:
            r, names = reader(
                f["type"],
                f"{column}.{f['name']}",
                name + separator + f["name"],
                separator,
                sequence,
                f.get("metadata", {}),
            )
            fields.append((f["name"], r))
            leaves.extend(names)

        def struct(feats: Features, lists: Lists) -> Any:
            if not any(n in feats or n in lists for n in leaves):
                return None
            return {n: r(feats, lists) for n, r in fields}

        return struct, leaves
    if is_array(t) and is_struct(t["elementType"]):
        return _struct_array(t["elementType"], column, name, separator, sequence)
    if isinstance(t, dict) and t.get("type") == "array":
        element = t["elementType"]
        if isinstance(element, dict) and element.get("type") == "array":
            return _nested(t, column, name, separator, sequence)
        if isinstance(element, dict):
            raise Unsupported(f"column {column!r} of type array<{_type_name(element)}>")
        atom = json_atom(element, column)

        def array(feats: Features, lists: Lists) -> Any:
            found = feats.get(name)
            if found is None:
                return None
            kind, values = found
            return [atom(kind, v) for v in float_values(kind, values)]

        return array, [name]
    if isinstance(t, dict):
        raise Unsupported(f"column {column!r} of type {_type_name(t)}")
    atom = json_atom(t, column)

    def scalar(feats: Features, lists: Lists) -> Any:
        found = feats.get(name)
        if found is None:
            return None
        kind, values = found
        flat = float_values(kind, values)
        if not flat:
            return None
        if len(flat) > 1:
            raise Mismatch(column, f"{len(flat)} values for a column of type {t}")
        return atom(kind, flat[0])

    return scalar, [name]


def _nested(
    t: Any, column: str, name: str, separator: str, sequence: bool
) -> tuple[Reader, list[str]]:
    """An ``array<array<…>>`` column: a feature list in a SequenceExample, ragged in an Example."""
    depth, element = 0, t
    while isinstance(element, dict) and element.get("type") == "array":
        depth, element = depth + 1, element["elementType"]
    if isinstance(element, dict):
        raise Unsupported(f"column {column!r} of type {_type_name(t)}")
    atom = json_atom(element, column)
    if sequence:
        if depth != 2:
            raise Unsupported(f"column {column!r}: {depth} nested arrays in a SequenceExample")

        def feature_list(feats: Features, lists: Lists) -> Any:
            steps = lists.get(name)
            if steps is None:
                return None
            return [[atom(k, v) for v in float_values(k, values)] for k, values in steps]

        return feature_list, [name]
    flat_name = name + separator + "ragged_flat_values"
    length_names = [f"{name}{separator}ragged_row_lengths_{k}" for k in range(depth - 1)]

    def ragged(feats: Features, lists: Lists) -> Any:
        flat = feats.get(flat_name)
        found = [feats.get(n) for n in length_names]
        if flat is None and all(f is None for f in found):
            return None
        if flat is None or any(f is None for f in found):
            raise Mismatch(column, "a list of lists with some of its ragged features missing")
        kind, values = flat
        level: list[Any] = [atom(kind, v) for v in float_values(kind, values)]
        for f in reversed(found):
            assert f is not None
            lengths = flat_values(f[1])
            if any(n < 0 for n in lengths) or sum(lengths) != len(level):
                raise Mismatch(column, "ragged row lengths that do not add up")
            out, at = [], 0
            for n in lengths:
                out.append(level[at : at + n])
                at += n
            level = out
        return level

    return ragged, [flat_name, *length_names]


class _Leaves:
    """The leaves of an array of structs' element, depth first: per leaf its feature, the
    values of one element (1, or the fixed length of a concatenated list), and the reader of
    its whole list; and every feature read, for an enclosing struct's null rule."""

    def __init__(self, separator: str, sequence: bool) -> None:
        self.separator = separator
        self.sequence = sequence
        self.names: list[str] = []
        self.per_element: list[int] = []
        self.lists: list[Reader] = []
        self.features: list[str] = []

    def add(self, t: Any, leaf_column: str, leaf_name: str, length: int) -> int:
        """Adds the leaf of type ``t`` read from ``leaf_name``; its number."""
        separator = self.separator
        per = 1
        if self.sequence:
            flat = array_of(t) if is_array(t) else array_of(array_of(t))
            read, found = _nested(flat, leaf_column, leaf_name, separator, True)
        elif length > 0 and depth(t) == 1:  # concatenated: `length` values per element
            if not isinstance(t["elementType"], str) or t["elementType"] not in FIXED_SIZE:
                raise errors.ArgumentError(
                    errors.UNSUPPORTED_TYPE,
                    f"Column '{leaf_column}' has elements of type "
                    f"{simple_string(t['elementType'])}, which a list split per element cannot "
                    "hold: only numbers and booleans can.",
                    column=leaf_column,
                )
            read, found = reader(t, leaf_column, leaf_name, separator, False, {})
            per = length
        else:
            read, found = reader(array_of(t), leaf_column, leaf_name, separator, False, {})
        self.names.append(leaf_name)
        self.per_element.append(per)
        self.lists.append(read)
        self.features.extend(found)
        return len(self.names) - 1


#: Writes one field of element i from the leaves' lists (None: absent) into a dict.
_Part = Callable[[list[Any], int], Any]


def _part(
    leaves: _Leaves, f: Mapping[str, Any], prefix: str, col: str, column: str
) -> tuple[_Part, list[int]]:
    """The part of an element that the field ``f`` reads, and the numbers of its leaves."""
    separator = leaves.separator
    t, leaf_name, leaf_column = f["type"], prefix + separator + f["name"], col + "." + f["name"]
    if is_struct(t):
        children = [
            (g["name"], _part(leaves, g, leaf_name, leaf_column, column)) for g in t["fields"]
        ]
        mine = [k for _, (_, ks) in children for k in ks]

        def struct(found: list[Any], i: int) -> Any:
            if all(found[k] is None for k in mine):
                return None
            return {n: p(found, i) for n, (p, _) in children}

        return struct, mine
    length = int((f.get("metadata") or {}).get(LIST_LENGTH_KEY, 0))
    k = leaves.add(t, leaf_column, leaf_name, length)
    return _leaf_part(leaves, k, f, column), [k]


def _leaf_part(leaves: _Leaves, k: int, f: Mapping[str, Any], column: str) -> _Part:
    """The part of an element that leaf ``k`` (the field ``f``) reads: its share of a
    concatenated list, its value, or the one value of its step."""
    t, names = f["type"], leaves.names
    per = leaves.per_element[k]
    if per > 1:

        def share(found: list[Any], i: int) -> Any:
            return None if found[k] is None else found[k][i * per : (i + 1) * per]

        return share
    if not leaves.sequence or is_array(t):

        def value(found: list[Any], i: int) -> Any:
            return None if found[k] is None else found[k][i]

        return value
    field, type_text = f["name"], simple_string(t)

    def step_value(found: list[Any], i: int) -> Any:
        if found[k] is None:
            return None
        step = found[k][i]
        if len(step) > 1:
            raise Mismatch(
                column,
                f"Column '{column}' field '{field}' ({type_text}) holds one value per step, "
                f"but step {i} of feature list '{names[k]}' holds {len(step)}",
                whole=True,
            )
        return step[0] if step else None

    return step_value


def _unequal(leaves: _Leaves, column: str, found: list[Any]) -> Mismatch:
    """The error of an element's lists of unequal length, naming them all."""
    names, per_element = leaves.names, leaves.per_element
    what = (
        "feature lists of unequal length (steps)" if leaves.sequence else "lists of unequal length"
    )
    lengths = []
    for k, n in enumerate(names):
        if found[k] is None:
            lengths.append(f"'{n}' absent")
        else:
            per = f" values, {per_element[k]} per element" if per_element[k] > 1 else ""
            lengths.append(f"'{n}' {len(found[k])}{per}")
    return Mismatch(
        column,
        f"Column '{column}' (array<struct>) is read from {what}: {', '.join(lengths)}",
        whole=True,
    )


def _struct_array(
    element: Mapping[str, Any], column: str, name: str, separator: str, sequence: bool
) -> tuple[Reader, list[str]]:
    """An array of structs, as the jar's ``NestedRowAssembler`` builds it: element i holds value
    i of each leaf's list (step i of its feature list in a SequenceExample); null when none of
    its features is there; lists of unequal length fail, naming them all."""
    leaves = _Leaves(separator, sequence)
    fields = [(f["name"], _part(leaves, f, name, column, column)[0]) for f in element["fields"]]
    lists, per_element = leaves.lists, leaves.per_element

    def struct_array(feats: Features, steps: Lists) -> Any:
        found = [r(feats, steps) for r in lists]
        n = -1
        for k, values in enumerate(found):
            if values is not None:
                if len(values) % per_element[k]:
                    raise _unequal(leaves, column, found)
                count = len(values) // per_element[k]
                if n < 0:
                    n = count
                elif count != n:
                    raise _unequal(leaves, column, found)
        if n < 0:
            return None
        return [{f: p(found, i) for f, p in fields} for i in range(n)]

    return struct_array, leaves.features


def _vector(column: str, name: str, separator: str) -> Reader:
    indices_name, values_name, size_name = (
        name + separator + p for p in ("indices", "values", "size")
    )

    def vector(feats: Features, lists: Lists) -> Any:
        dense = feats.get(name)
        if dense is not None:
            kind, values = dense
            if kind not in (FLOAT, INT64, UNSET):
                raise Mismatch(column, "a bytes_list cannot be read as a vector")
            return {
                "type": 1,
                "size": None,
                "indices": None,
                "values": [float(v) for v in float_values(kind, values)],
            }
        size = feats.get(size_name)
        if size is None:
            return None
        indices = flat_values(feats.get(indices_name, (UNSET, []))[1])
        values = [float(v) for v in float_values(FLOAT, feats.get(values_name, (UNSET, []))[1])]
        sizes = flat_values(size[1])
        if len(sizes) != 1 or len(indices) != len(values):
            raise Mismatch(column, "a sparse vector whose features do not agree")
        return {"type": 0, "size": int(sizes[0]), "indices": indices, "values": values}

    return vector
