"""The schema walk: a Spark schema's JSON as the features its records hold, one Column per key."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from spark_tfrecord import errors

if TYPE_CHECKING:  # numpy's: not imported with the package
    from spark_tfrecord._format.columns.conversions import Conversion

_INT64 = (
    "boolean",
    "byte",
    "short",
    "integer",
    "long",
    "date",
    "timestamp",
    "timestamp_ntz",
    "time",
)
_FLOAT = ("float", "double", "decimal")
VECTOR_CLASSES = (
    "org.apache.spark.ml.linalg.VectorUDT",
    "org.apache.spark.mllib.linalg.VectorUDT",
)
#: The field metadata keys of an encoded tensor column's encoding and dtype.
TENSOR_ENCODING_KEY = "tfrecord.tensorEncoding"
TENSOR_DTYPE_KEY = "tfrecord.tensorDtype"
TENSOR_ENCODINGS = ("bytes", "zlib")
#: Per tensor dtype: NumPy's stored dtype, and the values' Spark type (uint8 as short: 0 to 255).
TENSOR_ELEMENTS = {
    "float32": ("<f4", "float"),
    "float64": ("<f8", "double"),
    "int8": ("<i1", "byte"),
    "int16": ("<i2", "short"),
    "int32": ("<i4", "integer"),
    "int64": ("<i8", "long"),
    "uint8": ("<u1", "short"),
    "bool": ("<u1", "boolean"),
}
SIMPLE_NAMES = {"byte": "tinyint", "short": "smallint", "integer": "int", "long": "bigint"}


def type_name(data_type: Any) -> str:
    """The type's name: ``long``, ``decimal``, ``array``, ``struct``, ``udt``..."""
    if isinstance(data_type, str):
        m = re.match(r"[a-z_]+", data_type)
        return m.group() if m else data_type
    return str(data_type.get("type"))


def is_array(data_type: Any) -> bool:
    return type_name(data_type) == "array"


def is_struct(data_type: Any) -> bool:
    return type_name(data_type) == "struct"


def is_vector(data_type: Any) -> bool:
    """A Spark ML (or MLlib) vector UDT, recognised by its class name as the jar does."""
    return type_name(data_type) == "udt" and str(data_type.get("class", "")) in VECTOR_CLASSES


def type_string(data_type: Any, *, simple: bool = True) -> str:
    """The type's ``simpleString``, or with ``simple=False`` with JSON atomic names (``long``)."""
    name = type_name(data_type)
    if isinstance(data_type, str):
        return SIMPLE_NAMES.get(data_type, data_type) if simple else data_type
    if name == "array":
        return f"array<{type_string(data_type['elementType'], simple=simple)}>"
    if name == "map":
        key = type_string(data_type["keyType"], simple=simple)
        return f"map<{key},{type_string(data_type['valueType'], simple=simple)}>"
    if name == "struct":
        fields = ",".join(
            f"{f['name']}:{type_string(f['type'], simple=simple)}" for f in data_type["fields"]
        )
        return f"struct<{fields}>"
    if is_vector(data_type):
        return "vector"
    return str(data_type.get("class", name))


def tensor_reason(column: str, data_type: Any, metadata: Mapping[str, Any]) -> str | None:
    """Why the jar's ``EncodedTensor.check`` refuses a column with tensor ``metadata``, or None."""
    if not is_array(data_type):
        return (
            f"Column '{column}' holds an encoded tensor ({TENSOR_ENCODING_KEY}) but has type "
            f"{type_string(data_type)}: an encoded tensor column must be an array of rank 1 or "
            "more (one array per dimension)."
        )
    encoding, dtype = (metadata.get(k) for k in (TENSOR_ENCODING_KEY, TENSOR_DTYPE_KEY))
    encoding, dtype = (v if isinstance(v, str) else "" for v in (encoding, dtype))
    held = f"Column '{column}' holds an encoded tensor of"
    if encoding not in TENSOR_ENCODINGS:
        return (
            f"{held} encoding '{encoding}' ({TENSOR_ENCODING_KEY}), which is not one of "
            f"{', '.join(TENSOR_ENCODINGS)}."
        )
    if dtype not in TENSOR_ELEMENTS:
        return (
            f"{held} dtype '{dtype}' ({TENSOR_DTYPE_KEY}), which is not one of "
            f"{', '.join(sorted(TENSOR_ELEMENTS))}."
        )
    values = TENSOR_ELEMENTS[dtype][1]
    if innermost(data_type) != values:
        return (
            f"{held} dtype '{dtype}' ({TENSOR_DTYPE_KEY}), whose values are "
            f"{type_string(values)}, but has type {type_string(data_type)}."
        )
    return None


def depth(data_type: Any) -> int:
    """How many arrays ``data_type`` is nested in (2 for ``array<array<T>>``)."""
    n = 0
    while is_array(data_type):
        data_type, n = data_type["elementType"], n + 1
    return n


def innermost(data_type: Any) -> Any:
    """The type inside every array of ``data_type`` (itself for a non-array)."""
    while is_array(data_type):
        data_type = data_type["elementType"]
    return data_type


def array_of(element: Any) -> dict[str, Any]:
    return {"type": "array", "elementType": element, "containsNull": True}


def value_kind(data_type: Any, column: str) -> str:
    """The feature kind ("int", "float", "str", "bytes") of ``data_type``; ValueError if none."""
    name = type_name(data_type)
    if name in _INT64:
        return "int"
    if name in _FLOAT or is_vector(data_type):
        return "float"
    if name == "string":
        return "str"
    if name == "binary":
        return "bytes"
    raise ValueError(
        f"Column {column!r} has type {type_string(data_type)}, which has no TFRecord feature kind."
    )


@dataclass
class Column:
    """One key of the records, and the features it is read from."""

    key: str
    #: "int", "float", "str" or "bytes".
    value: str
    #: "scalar", "list", "ragged" (``depth`` levels), "uniform" (``length`` per element), "vector"
    #: (``sparse``: vectorLayout=sparse) or "tensor" (rank ``depth``: ``c/value``, ``c/shape``).
    shape: str
    #: Values in every record when the manifest says so (1 for a scalar always there).
    fixed: int | None = None
    depth: int = 1
    length: int = 0
    sparse: bool = False
    #: A vector's size when its Spark ML metadata gives it (``ml_attr.num_attrs``), else 0.
    size: int = 0
    features: list[str] = field(default_factory=list)
    #: The decoder's slot of each feature, set by the reader's Layout.
    slots: list[int] = field(default_factory=list)
    #: The column's path in the schema, for messages (``image.height``).
    path: str = ""
    #: A leaf of an array of structs (one value, or list, per element).
    in_array: bool = False
    #: That array of structs' path; its leaves' lists (a SequenceExample's: steps) match in length.
    array: str = ""
    #: A SequenceExample's feature list (one step per element or inner list).
    sequence: bool = False
    has_size: bool = False
    #: Spark's type of the values (``tinyint``, ``decimal(10,2)``): how features convert.
    spark: str = "bigint"
    #: Spark's type of the column (``array<tinyint>``), as the jar's messages name it.
    type_name: str = "bigint"
    conversion: Conversion | None = None
    #: An encoded tensor's field metadata (``tfrecord.tensorDtype``, ``tfrecord.tensorEncoding``).
    tensor: Mapping[str, Any] = field(default_factory=dict)


def columns(
    struct: Mapping[str, Any],
    counts: Mapping[str, tuple[int, int]],
    *,
    separator: str = "/",
    record_type: Literal["Example", "SequenceExample"] = "Example",
    vector_layout: Literal["dense", "sparse"] | None = None,
    encoded_tensors: bool = False,
) -> Iterator[Column]:
    """The schema's columns as the records hold them, in the schema's order (docs/types.md).
    ``counts``: the manifest's per-feature (fewest, most) values. A type no feature holds raises a
    ValueError naming the column.
    """
    sequence_type = record_type == "SequenceExample"

    def fixed(name: str) -> int | None:
        """k when the manifest says feature ``name`` has k >= 1 values in every record."""
        low, high = counts.get(name, (-1, -2))
        return low if low == high and low >= 1 else None

    def ragged(name: str, data_type: Any, path: str, array: str = "") -> Column:
        """The list of lists ``data_type`` (depth >= 2) written ragged as feature ``name``."""
        levels = depth(data_type)
        keys = [name + separator + "ragged_flat_values"]
        keys += [name + separator + f"ragged_row_lengths_{k}" for k in range(levels - 1)]
        more = {"depth": levels, "features": keys, "in_array": bool(array), "array": array}
        return _column(name, "ragged", innermost(data_type), data_type, path, **more)

    def element_leaves(
        struct: Mapping[str, Any], name: str, column: str, array: str
    ) -> Iterator[Column]:
        inside: dict[str, Any] = {"in_array": True, "array": array}
        for f in struct["fields"]:
            leaf, path, data_type = name + separator + f["name"], f"{column}.{f['name']}", f["type"]
            if is_struct(data_type):
                yield from element_leaves(data_type, leaf, path, array)
            elif is_array(data_type) and is_struct(data_type["elementType"]):
                raise ValueError(
                    f"Column {path!r}: an array of structs cannot hold arrays of structs."
                )
            elif sequence_type and depth(data_type) > 1:
                raise ValueError(
                    f"Column {path!r}: an array of structs in a SequenceExample cannot hold "
                    "arrays of arrays; record_type='Example' writes them ragged."
                )
            elif is_vector(data_type):
                raise ValueError(
                    f"Column {path!r}: a vector inside an array of structs is not supported."
                )
            elif sequence_type:
                listed = is_array(data_type)
                element = data_type["elementType"] if listed else data_type
                shape = "list" if listed else "scalar"
                yield _column(leaf, shape, element, data_type, path, sequence=True, **inside)
            elif is_array(data_type):
                length = int((f.get("metadata") or {}).get("tfrecord.listLength", 0))
                if length > 0 and depth(data_type) == 1:
                    element = data_type["elementType"]
                    yield _column(
                        leaf, "uniform", element, data_type, path, length=length, **inside
                    )
                else:  # one list per element: a list of lists, written ragged
                    yield ragged(leaf, array_of(data_type), path, array)
            else:  # the jar's type: a list
                jar_type = array_of(data_type)
                yield _column(leaf, "list", data_type, jar_type, path, fixed=fixed(leaf), **inside)

    def leaves(
        struct: Mapping[str, Any], prefix: str, column_prefix: str, nullable: bool
    ) -> Iterator[Column]:
        for f in struct["fields"]:
            name, column, data_type = prefix + f["name"], column_prefix + f["name"], f["type"]
            field_nullable = nullable or bool(f.get("nullable", True))
            metadata = f.get("metadata") or {}
            if is_struct(data_type):
                yield from leaves(data_type, name + separator, column + ".", field_nullable)
            elif is_array(data_type) and is_struct(data_type["elementType"]):
                yield from element_leaves(data_type["elementType"], name, column, column)
            elif encoded_tensors and not prefix and TENSOR_ENCODING_KEY in metadata:
                yield _tensor_column(f, separator)
            elif is_array(data_type) and is_array(data_type["elementType"]):
                if not sequence_type:
                    yield ragged(name, data_type, column)
                elif depth(data_type) > 2:
                    raise ValueError(
                        f"Column {column!r} is an array of arrays of arrays: a SequenceExample's "
                        "feature list holds lists only; record_type='Example' writes it ragged."
                    )
                else:
                    element = data_type["elementType"]["elementType"]
                    yield _column(name, "list", element, data_type, column, sequence=True)
            elif is_vector(data_type):
                parts = [name, *(name + separator + p for p in ("indices", "values", "size"))]
                if vector_layout is not None:
                    sparse = vector_layout == "sparse"
                else:  # from a manifest: the keys the files hold say how it was written
                    sparse = name not in counts and parts[1] in counts
                attrs = metadata.get("ml_attr", {})
                has_size = isinstance(attrs, dict) and "num_attrs" in attrs
                size = int(attrs["num_attrs"]) if has_size else 0
                more = {"sparse": sparse, "size": size, "has_size": has_size, "fixed": fixed(name)}
                yield _column(name, "vector", data_type, data_type, column, features=parts, **more)
            elif is_array(data_type):
                element = data_type["elementType"]
                yield _column(name, "list", element, data_type, column, fixed=fixed(name))
            else:
                always = fixed(name) == 1 or not field_nullable
                yield _column(
                    name, "scalar", data_type, data_type, column, fixed=1 if always else None
                )

    return leaves(struct, "", "", False)


def _column(key: str, shape: str, values: Any, data_type: Any, path: str, /, **more: Any) -> Column:
    """Column ``key`` of ``data_type`` (at ``path``) whose values have type ``values``."""
    more.setdefault("features", [key])
    return Column(
        key,
        value_kind(values, path),
        shape,
        path=path,
        spark=type_string(values),
        type_name=type_string(data_type),
        **more,
    )


def _tensor_column(f: Mapping[str, Any], separator: str) -> Column:
    """The top-level encoded tensor column ``f``; ArgumentError if :func:`tensor_reason` refuses."""
    name, data_type, metadata = f["name"], f["type"], f.get("metadata") or {}
    reason = tensor_reason(name, data_type, metadata)
    if reason:
        raise errors.ArgumentError(errors.INVALID_SCHEMA, reason, column=name)
    features = [name + separator + "value", name + separator + "shape"]
    more = {"depth": depth(data_type), "features": features, "tensor": metadata}
    return _column(name, "tensor", innermost(data_type), data_type, name, **more)


def select(
    keys: Sequence[str], wanted: Sequence[str], where: str, separator: str = "/"
) -> list[str]:
    """The keys of the ``wanted`` columns (own key or ``c/...`` leaves); ValueError if absent."""
    chosen: dict[str, None] = {}
    for name in wanted:
        found = [k for k in keys if k == name or k.startswith(name + separator)]
        if not found:
            raise ValueError(
                f"Column {name!r} is not in the records of {where}; they hold {sorted(keys)}."
            )
        chosen.update(dict.fromkeys(found))
    return list(chosen)
