"""Which features a schema is written as, and which schemas a record type can hold (the jar's)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from spark_tfrecord import errors
from spark_tfrecord._format.columns.schema import (
    TENSOR_ENCODING_KEY,
    array_of,
    depth,
    innermost,
    is_array,
    is_struct,
    is_vector,
    tensor_reason,
)
from spark_tfrecord._format.columns.schema import type_name as name
from spark_tfrecord._format.columns.type_table import describe_supported, entry, simple_string
from spark_tfrecord._format.frames.encode_errors import EncodeError, argument_error

EXAMPLE = "Example"
SEQUENCE_EXAMPLE = "SequenceExample"
BYTE_ARRAY = "ByteArray"
RECORD_TYPES = (EXAMPLE, SEQUENCE_EXAMPLE, BYTE_ARRAY)

#: The field metadata key of a list's fixed length.
LIST_LENGTH_KEY = "tfrecord.listLength"


@dataclass(frozen=True)
class Leaf:
    """One feature of a schema, as the jar's ``FeaturePaths.Leaf``. ``structs``: struct ordinals
    from the row to ``ordinal``'s struct; ``in_element``: from the element to ``element_ordinal``'s.
    """

    name: str
    column: str
    leaf_type: Any
    data_type: Any
    structs: tuple[int, ...]
    ordinal: int
    in_array_of_structs: bool = False
    in_element: tuple[int, ...] = ()
    element_ordinal: int = -1
    list_length: int = 0
    concatenated: bool = False
    vector_part: int = 0
    ragged_level: int = -1
    tensor_part: int = 0
    tensor: Mapping[str, Any] = field(default_factory=dict)


def list_length(f: Mapping[str, Any]) -> int:
    return int((f.get("metadata") or {}).get(LIST_LENGTH_KEY, 0))


def leaves(
    schema: Mapping[str, Any],
    record_type: str,
    separator: str,
    sparse_vectors: bool = False,
) -> list[Leaf]:
    """The features of ``schema``, its fields depth first (the jar's ``FeaturePaths.leaves``)."""
    sequence = record_type == SEQUENCE_EXAMPLE
    out: list[Leaf] = []

    def no_fields(t: Any, column: str) -> None:
        if is_struct(t) and not t["fields"]:
            why = "is a struct with no fields, which has no feature to be written as"
            raise argument_error(errors.INVALID_SCHEMA, f"Column '{column}' {why}.", column=column)

    def add(leaf: Leaf) -> None:
        d = depth(leaf.data_type)
        if record_type == EXAMPLE and d >= 2:
            names = [f"{leaf.name}{separator}ragged_row_lengths_{k}" for k in range(d - 1)]
            names.append(leaf.name + separator + "ragged_flat_values")
            out.extend(replace(leaf, name=n, ragged_level=k) for k, n in enumerate(names))
        else:
            out.append(leaf)

    def in_element(
        struct: Mapping[str, Any],
        prefix: str,
        column: str,
        structs: tuple[int, ...],
        array_ordinal: int,
        path: tuple[int, ...],
    ) -> None:
        for i, f in enumerate(struct["fields"]):
            leaf_name, leaf_column = prefix + separator + f["name"], f"{column}.{f['name']}"
            length, t = list_length(f), f["type"]
            no_fields(t, leaf_column)
            if is_struct(t):
                in_element(t, leaf_name, leaf_column, structs, array_ordinal, (*path, i))
                continue
            why = None
            if is_array(t) and is_struct(t["elementType"]):
                why = "an array of structs inside an array of structs has no feature layout"
            elif sequence and is_array(t) and is_array(t["elementType"]):
                why = (
                    "an array of arrays inside an array of structs has no feature layout in a "
                    "SequenceExample (recordType Example writes it ragged)"
                )
            elif name(t) == "udt":
                why = (
                    "a vector inside an array of structs is not supported; use array<float> or "
                    "array<double>"
                )
            if why is not None:
                raise argument_error(
                    errors.UNSUPPORTED_TYPE,
                    f"Column '{leaf_column}' has type {simple_string(t)}: {why}.",
                    column=leaf_column,
                )
            concatenated = not sequence and length > 0 and depth(t) == 1
            element = t["elementType"] if concatenated or (sequence and is_array(t)) else t
            flat = array_of(array_of(element)) if sequence else array_of(element)
            leaf = Leaf(leaf_name, leaf_column, t, flat, structs, array_ordinal, True, path, i)
            add(replace(leaf, list_length=length, concatenated=concatenated))

    def walk(
        struct: Mapping[str, Any], prefix: str, column_prefix: str, structs: tuple[int, ...]
    ) -> None:
        for i, f in enumerate(struct["fields"]):
            leaf_name, column, t = prefix + f["name"], column_prefix + f["name"], f["type"]
            metadata = f.get("metadata") or {}
            no_fields(t, column)
            if is_array(t):
                no_fields(t["elementType"], column)
            leaf = Leaf(leaf_name, column, t, t, structs, i)
            if is_struct(t):
                walk(t, leaf_name + separator, column + ".", (*structs, i))
            elif is_array(t) and is_struct(t["elementType"]):
                in_element(t["elementType"], leaf_name, column, structs, i, ())
            elif TENSOR_ENCODING_KEY in metadata:
                _check_tensor(column, t, metadata, nested=bool(structs) or sequence)
                leaf = replace(leaf, tensor=metadata)
                out.append(replace(leaf, name=leaf_name + separator + "value", tensor_part=1))
                out.append(replace(leaf, name=leaf_name + separator + "shape", tensor_part=2))
            elif sparse_vectors and is_vector(t):
                out.extend(
                    replace(leaf, name=leaf_name + separator + suffix, vector_part=part)
                    for part, suffix in enumerate(("indices", "values", "size"), 1)
                )
            else:
                add(replace(leaf, list_length=list_length(f)))

    walk(schema, "", "", ())
    seen: dict[str, list[Leaf]] = {}
    for leaf in out:
        seen.setdefault(leaf.name, []).append(leaf)
    for same in seen.values():
        if len(same) > 1:
            columns = " and ".join(f"'{leaf.column}'" for leaf in same)
            raise argument_error(
                errors.INVALID_SCHEMA,
                f"Columns {columns} would both be the feature '{same[0].name}'. Rename one, or "
                "choose another pathSeparator.",
            )
    return out


def _check_tensor(column: str, t: Any, metadata: Mapping[str, Any], *, nested: bool) -> None:
    """Refuses a nested or SequenceExample encoded tensor column, or one tensor_reason refuses."""
    if nested:
        raise argument_error(
            errors.UNSUPPORTED_TYPE,
            f"Column '{column}' holds an encoded tensor ({TENSOR_ENCODING_KEY}), which is "
            "supported only as a top-level column of an Example.",
            column=column,
        )
    reason = tensor_reason(column, t, metadata)
    if reason:
        raise argument_error(errors.INVALID_SCHEMA, reason, column=column)


def supports(t: Any) -> bool:
    """The jar's ``TFRecordSchema.supportsDataType``: a table type, a vector, arrays of them, and
    structs and arrays of structs of these."""
    if is_struct(t):
        return all(supports(f["type"]) for f in t["fields"])
    if is_array(t) and is_struct(t["elementType"]):
        return supports(t["elementType"])
    if is_array(t):
        return entry(innermost(t)) is not None
    return is_vector(t) or entry(t) is not None


def unsupported(column: str, t: Any, record_type: str) -> EncodeError:
    """The jar's error for a column of a type the record type cannot hold."""
    hint = ""
    if record_type == SEQUENCE_EXAMPLE and depth(t) >= 3:
        hint = " Deeper lists of lists are written ragged with recordType Example."
    lists = (
        ", arrays of such arrays (feature lists)"
        if record_type == SEQUENCE_EXAMPLE
        else ", arrays of arrays of these at any depth (ragged)"
    )
    return argument_error(
        errors.UNSUPPORTED_TYPE,
        f"Column '{column}' has type {simple_string(t)}, which recordType {record_type} cannot "
        f"hold. Supported: {describe_supported()}; arrays of these{lists}, and structs and "
        f"arrays of structs of these (path-named features).{hint}",
        column=column,
        type=simple_string(t),
        recordType=record_type,
    )


def _alternative(t: Any, use: str) -> str | None:
    """The jar's advice instead of a map, variant or ANSI interval (column ``use``), or None."""
    n = name(t)
    if n == "map":
        return (
            "a map has no TensorFlow kind. Store its keys and values as two array columns "
            f"(map_keys({use}), map_values({use})), or the map as a JSON string (to_json({use}))"
        )
    if n == "variant":
        return (
            "a variant is Spark's own binary encoding, which TensorFlow cannot read. Store it as "
            f"its JSON text (to_json({use})), and read that back as a variant with parse_json"
        )
    if n == "interval" and isinstance(t, str) and t != "interval":  # not CalendarIntervalType
        return (
            f"an interval has no TensorFlow kind. Store it as its text (cast({use} AS string)), "
            f"and read that back with cast(text AS {t})"
        )
    return None


def _unheld_in(t: Any, column: str) -> tuple[str, Any] | None:
    if is_array(t):
        return _unheld_in(t["elementType"], column)
    if is_struct(t):
        for f in t["fields"]:
            found = _unheld_in(f["type"], f["name"] if not column else f"{column}.{f['name']}")
            if found is not None:
                return found
        return None
    return (column, t) if _alternative(t, "") is not None else None


def reject_maps(schema: Mapping[str, Any], record_type: str) -> None:
    """The jar's refusal of a map, variant or interval at any depth, naming its path and the fix."""
    found = _unheld_in(schema, "")
    if found is None:
        return
    path, m = found
    column = path.split(".")[0]
    column_type = next(f["type"] for f in schema["fields"] if f["name"] == column)
    if path != column:
        where = f"Field '{path}' of column '{column}' has type"
    elif column_type == m:
        where = f"Column '{path}' has type"
    else:
        what = "an" if name(m) == "interval" else "a"
        where = f"Column '{path}' ({simple_string(column_type)}) holds {what}"
    use = path if path == column else f"`{path}`"
    raise argument_error(
        errors.UNSUPPORTED_TYPE,
        f"{where} {simple_string(m)}, which TFRecord cannot hold: a tf.train.Example feature is "
        f"a flat list of one kind (int64, float or bytes), and {_alternative(m, use)}.",
        column=path,
        type=simple_string(m),
        recordType=record_type,
    )


def validate(
    schema: Mapping[str, Any], record_type: str, separator: str, sparse_vectors: bool
) -> list[Leaf]:
    """Checks a schema for a write, as the jar does; the writer's features (none for ByteArray)."""
    reject_maps(schema, record_type)
    if record_type == BYTE_ARRAY:
        fields = schema["fields"]
        if len(fields) != 1 or fields[0]["type"] != "binary":
            text = simple_string(schema)
            raise argument_error(
                errors.INVALID_SCHEMA,
                "recordType ByteArray writes exactly one binary column (named 'byteArray' on "
                f"read), but the schema is {text}.",
                schema=text,
            )
        return []
    found = leaves(schema, record_type, separator, sparse_vectors)
    for leaf in found:
        deep = record_type == SEQUENCE_EXAMPLE and depth(leaf.data_type) > 2
        if not supports(leaf.data_type) or deep:
            raise unsupported(leaf.column, leaf.data_type, record_type)
    return found
