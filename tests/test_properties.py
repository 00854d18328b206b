"""Property: random schemas over every supported type, random values, survive write → read.

Exact for integers, booleans, float32, strings, binary, dates and timestamps; a double comes
back as the nearest float32; a decimal as the float32 nearest to it, to within one unit of its
scale (float32 keeps about 7 significant digits).
"""

from __future__ import annotations

import datetime as dt
import math
import struct
from decimal import Decimal
from itertools import count
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spark_tfrecord


def f32(x: float) -> float:
    try:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


INT = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
SCALARS: dict[str, st.SearchStrategy[Any]] = {
    **{t: st.integers(-(2 ** (b - 1)), 2 ** (b - 1) - 1) for t, b in INT.items()},
    "boolean": st.booleans(),
    "float": st.floats(width=32),
    "double": st.floats(),
    "decimal(12,2)": st.decimals(min_value=-(10**9), max_value=10**9, places=2),
    "string": st.text(max_size=12),
    "binary": st.binary(max_size=12),
    "date": st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31)),
    "timestamp_ntz": st.datetimes(min_value=dt.datetime(1900, 1, 1)),
}


@st.composite
def tables(draw: st.DrawFn) -> tuple[str, list[tuple[Any, ...]]]:
    columns = []
    for i in range(draw(st.integers(1, 5))):
        type_name = draw(st.sampled_from(sorted(SCALARS)))
        is_array = draw(st.booleans())
        values = SCALARS[type_name]
        column = st.lists(values, max_size=4) if is_array else values
        columns.append((f"c{i}", f"array<{type_name}>" if is_array else type_name, column))
    ddl = ", ".join(f"{name} {t}" for name, t, _ in columns)
    rows = draw(
        st.lists(st.tuples(*(st.none() | c for _, _, c in columns)), min_size=1, max_size=6)
    )
    return ddl, rows


def same(type_name: str, got: Any, want: Any) -> bool:
    if want is None or got is None:
        return got is None and want is None
    if type_name.startswith("array<"):
        inner = type_name[6:-1]
        return len(got) == len(want) and all(same(inner, g, w) for g, w in zip(got, want))
    if type_name in ("float", "double"):
        expected = f32(want)
        if math.isnan(expected):
            return math.isnan(got)
        return got == expected and math.copysign(1, got) == math.copysign(1, expected)
    if type_name.startswith("decimal"):
        return abs(Decimal(got) - want) <= abs(want) * Decimal("1.2e-7") + Decimal("0.01")
    if type_name == "binary":
        return bytes(got) == want
    return bool(got == want)


_dirs = count()


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(table=tables())
def test_write_then_read_gives_the_same_rows(spark, tmp_path_factory, table) -> None:
    ddl, rows = table
    path = str(tmp_path_factory.mktemp("prop") / f"t{next(_dirs)}")
    spark_tfrecord.write(spark.createDataFrame(rows, ddl).coalesce(1), path)
    back = [tuple(r) for r in spark_tfrecord.read(spark, path, schema=ddl).collect()]
    types = [part.strip().split(" ", 1)[1] for part in ddl.split(", ")]
    assert len(back) == len(rows)
    for got, want in zip(back, rows):  # coalesce(1) keeps the order
        for t, g, w in zip(types, got, want):
            assert same(t, g, w), (ddl, t, g, w)
