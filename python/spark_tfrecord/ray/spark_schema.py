"""The Spark schema (JSON) of an Arrow schema, for Ray writes: the inverse of ``arrow_schema``.

>>> import pyarrow as pa
>>> spark_schema(pa.schema([("id", pa.int64()), ("x", pa.list_(pa.float32()))]))["fields"][1]
{'name': 'x', 'type': {'type': 'array', 'elementType': 'float', 'containsNull': True}, \
'nullable': True, 'metadata': {}}
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pyarrow.types as pat

from spark_tfrecord._source.arrow_schema import METADATA_KEY

_ATOMIC = [
    (pat.is_int64, "long"),
    (pat.is_int32, "integer"),
    (pat.is_int16, "short"),
    (pat.is_int8, "byte"),
    (pat.is_uint32, "long"),
    (pat.is_uint16, "integer"),
    (pat.is_uint8, "short"),
    (pat.is_float32, "float"),
    (pat.is_float16, "float"),
    (pat.is_float64, "double"),
    (pat.is_boolean, "boolean"),
    (pat.is_string, "string"),
    (pat.is_large_string, "string"),
    (pat.is_binary, "binary"),
    (pat.is_large_binary, "binary"),
    (pat.is_fixed_size_binary, "binary"),
    (pat.is_date32, "date"),
    (pat.is_null, "void"),
]


def spark_schema(schema: pa.Schema) -> dict[str, Any]:
    """``schema`` as ``StructType.jsonValue()``; ValueError naming a column no Spark type holds."""
    return {"type": "struct", "fields": [_field(f, f.name) for f in schema]}


def _field(f: pa.Field, column: str) -> dict[str, Any]:
    metadata = (f.metadata or {}).get(METADATA_KEY)
    return {
        "name": f.name,
        "type": spark_type(f.type, column),
        "nullable": f.nullable,
        "metadata": json.loads(metadata) if metadata else {},
    }


def spark_type(t: pa.DataType, column: str) -> Any:
    """The Spark type (its JSON) of one Arrow type; ``column`` names it in an error."""
    for test, name in _ATOMIC:
        if test(t):
            return name
    if pat.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pat.is_timestamp(t):
        return "timestamp" if t.tz is not None else "timestamp_ntz"
    if pat.is_list(t) or pat.is_large_list(t) or pat.is_fixed_size_list(t):
        element = spark_type(t.value_type, column)
        return {"type": "array", "elementType": element, "containsNull": t.value_field.nullable}
    if pat.is_struct(t):
        fields = [_field(t.field(i), f"{column}.{t.field(i).name}") for i in range(t.num_fields)]
        return {"type": "struct", "fields": fields}
    raise ValueError(
        f"Column {column!r}: no TFRecord feature holds the Arrow type {t} (give schema= with "
        "the Spark types to write, or convert the column first)"
    )


def known(data_type: Any, placeholder: Any = "binary") -> Any:
    """``data_type``, each ``void`` as ``placeholder``: nulls encode the same whatever the type."""
    if data_type == "void":
        return placeholder
    if isinstance(data_type, dict) and data_type.get("type") == "array":
        return {**data_type, "elementType": known(data_type["elementType"], placeholder)}
    if isinstance(data_type, dict) and data_type.get("type") == "struct":
        fields = [{**f, "type": known(f["type"], placeholder)} for f in data_type["fields"]]
        return {**data_type, "fields": fields}
    return data_type


def merged(a: Any, b: Any) -> Any:
    """The type ``a`` and ``b`` agree on (``void`` agrees with any; nullable if either), or None."""
    if a == "void":
        return b
    if b == "void":
        return a
    if isinstance(a, dict) and isinstance(b, dict) and a.get("type") == b.get("type"):
        if a["type"] == "array":
            element = merged(a["elementType"], b["elementType"])
            contains = a["containsNull"] or b["containsNull"]
            return (
                None if element is None else {**a, "elementType": element, "containsNull": contains}
            )
        if a["type"] == "struct":
            if [f["name"] for f in a["fields"]] != [f["name"] for f in b["fields"]]:
                return None
            fields = []
            for x, y in zip(a["fields"], b["fields"]):
                t = merged(x["type"], y["type"])
                if t is None:
                    return None
                fields.append({**x, "type": t, "nullable": x["nullable"] or y["nullable"]})
            return {**a, "fields": fields}
    return a if a == b else None
