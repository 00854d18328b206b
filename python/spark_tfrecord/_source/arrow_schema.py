"""A Spark schema's Arrow schema from its JSON, without pyspark, as Spark 4.2+'s
``to_arrow_schema(schema, timezone="UTC")`` gives it (Spark checks batches against it exactly).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from spark_tfrecord._format.columns.conversions import DECIMAL, TIME

#: The key pyspark keeps a field's Spark metadata under, in an Arrow field's metadata.
METADATA_KEY = b"SPARK::metadata::json"
_ATOMIC = {
    "long": pa.int64(),
    "integer": pa.int32(),
    "short": pa.int16(),
    "byte": pa.int8(),
    "float": pa.float32(),
    "double": pa.float64(),
    "boolean": pa.bool_(),
    "binary": pa.binary(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"),
    "void": pa.null(),
    "interval day to second": pa.duration("us"),
    "string": pa.string(),
    "decimal": pa.decimal128(10, 0),  # Spark's JSON of the default decimal
    "variant": pa.struct(
        [
            pa.field("value", pa.binary(), False),
            pa.field("metadata", pa.binary(), False, {b"variant": b"true"}),
        ]
    ),
}


def arrow_schema(schema: Mapping[str, Any]) -> pa.Schema:
    """The Arrow schema of ``schema`` (a struct's JSON); raises ValueError on a type Arrow lacks."""
    return pa.schema([_field(f, f["name"]) for f in schema["fields"]])


def arrow_type(data_type: Any, column: str = "") -> pa.DataType:
    """The Arrow type of one Spark type (its JSON); ``column`` names it in an error."""
    if isinstance(data_type, str):
        if data_type in _ATOMIC:
            return _ATOMIC[data_type]
        if data_type.startswith("string collate "):
            return pa.string()
        if m := DECIMAL.fullmatch(data_type):
            return pa.decimal128(int(m.group(1)), int(m.group(2)))
        if TIME.fullmatch(data_type):
            return pa.time64("ns")
        raise ValueError(f"Column {column!r}: Arrow holds no Spark type {data_type!r}")
    name = data_type.get("type")
    if name == "array":
        element = arrow_type(data_type["elementType"], column)
        return pa.list_(pa.field("element", element, data_type.get("containsNull", True)))
    if name == "map":
        key = pa.field("key", arrow_type(data_type["keyType"], column), False)
        nullable = data_type.get("valueContainsNull", True)
        return pa.map_(key, pa.field("value", arrow_type(data_type["valueType"], column), nullable))
    if name == "struct":
        return pa.struct([_field(f, f"{column}.{f['name']}") for f in data_type["fields"]])
    if name == "udt" and "sqlType" in data_type:
        return arrow_type(data_type["sqlType"], column)
    raise ValueError(f"Column {column!r}: Arrow holds no Spark type {json.dumps(data_type)}")


def _field(f: Mapping[str, Any], column: str) -> pa.Field:
    metadata = f.get("metadata") or None
    return pa.field(
        f["name"],
        arrow_type(f["type"], column),
        f.get("nullable", True),
        {METADATA_KEY: json.dumps(metadata).encode("utf-8")} if metadata else None,
    )
