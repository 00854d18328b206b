"""The features :mod:`statistics` takes, as the jar writes them from a DataFrame."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from spark_tfrecord._format.datasets.statistics_proto import FLOAT, INT, STRING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType


def quote(name: str) -> str:
    """A column's name quoted for Spark SQL."""
    return "`" + name.replace("`", "``") + "`"


class Column(NamedTuple):
    """Name, TFDV type, SQL over ``{x}`` of a value and of a list's values ("" if scalar)."""

    name: str
    kind: int
    value: str
    values: str


#: Per Spark type: the TFDV type, the SQL of a value and of a list's values (casts where possible).
_KINDS: dict[str, tuple[int, str, str]] = {
    "boolean": (
        INT,
        "CAST(CAST({x} AS INT) AS DOUBLE)",
        "CAST(CAST({x} AS array<int>) AS array<double>)",
    ),
    "integral": (INT, "CAST({x} AS DOUBLE)", "CAST({x} AS array<double>)"),
    # The jar writes a float_list: a double is rounded to float32 first.
    "fractional": (
        FLOAT,
        "CAST(CAST({x} AS FLOAT) AS DOUBLE)",
        "CAST(CAST({x} AS array<float>) AS array<double>)",
    ),
    "bytes": (STRING, "CAST({x} AS BINARY)", "CAST({x} AS array<binary>)"),
    "date": (
        INT,
        "CAST(unix_date({x}) AS DOUBLE)",
        "transform({x}, v -> CAST(unix_date(v) AS DOUBLE))",
    ),
    "timestamp": (
        INT,
        "CAST(unix_micros({x}) AS DOUBLE)",
        "transform({x}, v -> CAST(unix_micros(v) AS DOUBLE))",
    ),
}


def feature_column(name: str, data_type: DataType, column: str = "") -> Column:
    """A feature as the statistics take it; ValueError, naming ``column``, if no record holds it."""
    from pyspark.sql import types as t

    is_list = isinstance(data_type, t.ArrayType)
    element = data_type.elementType if isinstance(data_type, t.ArrayType) else data_type
    family = (
        "boolean" if isinstance(element, t.BooleanType)
        else "integral" if isinstance(element, (t.ByteType, t.ShortType, t.IntegerType, t.LongType))
        else "fractional" if isinstance(element, (t.FloatType, t.DoubleType, t.DecimalType))
        else "bytes" if isinstance(element, (t.StringType, t.BinaryType))
        else "date" if isinstance(element, t.DateType)
        # microseconds since 1970, as Spark holds them (not timestamp_ntz's, local ones)
        else "timestamp" if type(element) is t.TimestampType
        else ""
    )  # fmt: skip
    if not family:
        raise ValueError(
            f"statistics: column {column or name!r} has type {data_type.simpleString()}; the "
            "statistics take the features the jar writes in an Example (numbers, booleans, "
            "dates, timestamps, strings, binary, arrays and arrays of arrays of them, and "
            "structs and arrays of structs of these). Select the others out."
        )
    kind, value, values = _KINDS[family]
    return Column(name, kind, value, values if is_list else "")


def _names(schema: dict[str, Any], ordinals: tuple[int, ...]) -> tuple[list[str], Any]:
    """The field names down a struct by ``ordinals``, and the type reached."""
    names, t = [], schema
    for i in ordinals:
        f = t["fields"][i]
        names.append(f["name"])
        t = f["type"]
    return names, t


def _sql(names: list[str], at: str = "") -> str:
    return ".".join([at] * bool(at) + [quote(n) for n in names])


def leaf_sql(schema: dict[str, Any], leaf: Any) -> str:
    """SQL of the values the jar writes for ``leaf`` (a ``feature_paths.Leaf``)."""
    from spark_tfrecord._format.columns.schema import depth

    names, t = _names(schema, (*leaf.structs, leaf.ordinal))
    x = _sql(names)
    if leaf.in_array_of_structs:
        inner, _ = _names(t["elementType"], (*leaf.in_element, leaf.element_ordinal))
        x = f"transform({x}, e -> {_sql(inner, 'e')})"
        if leaf.concatenated:
            x = f"flatten({x})"
    if leaf.ragged_level < 0:
        return x
    d = depth(leaf.data_type)
    for _ in range(min(leaf.ragged_level, d - 1)):
        x = f"flatten({x})"
    # row lengths k: the sizes of the lists at depth k+1, in order; then the innermost values
    return x if leaf.ragged_level == d - 1 else f"transform({x}, v -> CAST(size(v) AS BIGINT))"


def flat_features(df: DataFrame, separator: str) -> tuple[DataFrame, dict[str, str]]:
    """``df`` as one column per Example feature, and per feature the column it is of (``a.b``)."""
    from spark_tfrecord._format.columns.feature_paths import EXAMPLE, leaves

    schema = df.schema.jsonValue()
    found = leaves(schema, EXAMPLE, separator)
    for leaf in found:
        if leaf.tensor_part:
            raise ValueError(
                f"statistics: column {leaf.column!r} holds an encoded tensor (its bytes and "
                "shape), which the statistics do not take. Select it out."
            )
    columns = {leaf.name: leaf.column for leaf in found}
    if all(leaf.name == leaf.column and leaf.ragged_level < 0 for leaf in found):
        return df, columns  # flat already: every column one feature of its name
    return df.selectExpr(
        *[f"{leaf_sql(schema, leaf)} AS {quote(leaf.name)}" for leaf in found]
    ), columns
