"""The correctness checks: row counts and an order-independent hash of every value. A failed
check stops the run before any table is printed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .data import NARROW_DDL, WIDE1000_DDL
from .sessions import LINKEDIN, OURS, short

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from .timing import Bench


class CheckFailed(RuntimeError):
    pass


def check(ok: bool, what: str, detail: str = "") -> None:
    if not ok:
        raise CheckFailed(f"correctness check failed: {what} {detail}".strip())
    print(f"  ok: {what}", flush=True)


def fingerprint(df: DataFrame) -> tuple[int, int]:
    """Row count and the XOR of a 64-bit hash of every row: equal iff (almost surely) same rows."""
    cols = ", ".join(f"`{c}`" for c in df.columns)
    row = df.selectExpr("count(*) AS n", f"bit_xor(xxhash64({cols})) AS h").collect()[0]
    return int(row["n"]), int(row["h"] or 0)


def check_narrow(bench: Bench, expected: tuple[int, int], linkedin: bool) -> None:
    """Every format reads back the rows and values it wrote; the TFRecord files interoperate."""
    cases = [(OURS, "ours"), ("parquet", "parquet")]
    if linkedin:
        cases += [(LINKEDIN, "ours"), (LINKEDIN, "linkedin"), (OURS, "linkedin")]
    for fmt, writer_name in cases:
        got = fingerprint(bench.read(fmt, NARROW_DDL, bench.out / f"narrow-{writer_name}"))
        what = f"{short(fmt)} reading the files {writer_name} wrote: {got[0]} rows, same values"
        check(got == expected, what)


def fields(simple: str) -> list[str]:
    """Top-level ``name:type`` items of a ``struct<...>`` simple string."""
    items, depth, start = [], 0, len("struct<")
    for i, ch in enumerate(simple[start:-1], start):
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            items.append(simple[start:i])
            start = i + 1
    return [*items, simple[start:-1]]


def check_inference(schemas: dict[str, str], notes: list[str]) -> None:
    want = "struct<" + ",".join(f.replace(" ", ":", 1) for f in NARROW_DDL.split(", ")) + ">"
    check(schemas["ours"] == want, "our inferred schema", f"{schemas['ours']} is not {want}")
    theirs = schemas.get("linkedin", want)
    if theirs != want:
        same = sorted(fields(theirs)) == sorted(fields(want))
        how = "the same fields and types in another order" if same else "other types"
        notes.append(f"linkedin's inferred schema has {how}: `{theirs}`")


def check_wide1000_inference(simple: str, notes: list[str]) -> None:
    """Our schema inferred from the wide-1000 files: 1,000 fields, each of its generated type."""
    want = dict(item.split(" ", 1) for item in WIDE1000_DDL.split(", "))
    got = dict(item.split(":", 1) for item in fields(simple))
    wrong = [f"{name}:{kind}" for name, kind in got.items() if want.get(name) != kind]
    what = f"our schema inferred from the wide-1000 files: {len(got)} fields of the right types"
    check(len(got) == len(want) and not wrong, what, f"(wrong types: {wrong[:5]})")
    if list(got) != list(want):
        notes.append("our inferred wide-1000 schema has the columns in another order")
