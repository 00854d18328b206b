"""The arrow engine's aggregates, computed in Spark's Python workers (``mapInArrow``)."""

from __future__ import annotations

import math
import pickle
from collections.abc import Iterator
from typing import Any

#: The values a partition's summary keeps of each column: merged quantiles within 1/SUMMARY.
SUMMARY = 4000
#: The ``kind`` of a column whose presence and numbers of values alone are taken (strings).
PRESENCE = "presence"


def _sizes(array: Any) -> Any:
    """How many rows hold 0, 1, 2, ... values of the column (null: none; a scalar: one)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_list(array.type):
        lengths = pc.list_value_length(array).drop_null().to_numpy()
        return np.bincount(lengths) if len(lengths) else np.zeros(0, np.int64)
    present = len(array) - array.null_count
    return np.array([0, present], np.int64) if present else np.zeros(0, np.int64)


def _added(a: Any, b: Any) -> Any:
    """The sum of two counts by number of values (of different lengths)."""
    if len(a) < len(b):
        a, b = b, a
    a = a.copy()
    a[: len(b)] += b
    return a


def _presence(counts: Any, grid: list[float]) -> dict[str, Any]:
    """Presence and numbers of values, named as the SQL path, from :func:`_sizes` counts."""
    import numpy as np

    present = int(counts.sum())
    out: dict[str, Any] = {"present": present}
    if present:
        held = np.flatnonzero(counts)
        ranks = np.maximum(1, np.ceil(np.array(grid) * present))
        out["n_min"], out["n_max"] = int(held[0]), int(held[-1])
        out["n_tot"] = int((np.arange(len(counts)) * counts).sum())
        out["n_q"] = np.searchsorted(np.cumsum(counts), ranks, side="left").tolist()
    return out


def _numbers(array: Any, kind: str) -> Any:
    """A column's values as float64, as the record holds them (``float``: rounded to float32)."""
    import numpy as np
    import pyarrow as pa

    values = (array.flatten() if pa.types.is_list(array.type) else array).drop_null()
    if pa.types.is_timestamp(values.type) or pa.types.is_date(values.type):
        values = values.cast(pa.int64() if pa.types.is_timestamp(values.type) else pa.int32())
    out = values.to_numpy(zero_copy_only=False)
    if kind == "float":  # the jar writes a float_list: a double rounded to float32
        return out.astype(np.float32).astype(np.float64)
    return out.astype(np.float64)


def _partial(values: Any) -> dict[str, Any]:
    """A partition's figures of a column's float64 ``values``."""
    import numpy as np

    nan = int(np.count_nonzero(np.isnan(values)))
    numbers = np.sort(values[~np.isnan(values)] if nan else values)
    n = len(numbers)
    low = int(np.searchsorted(numbers, -np.inf, "right"))  # the first finite number
    high = int(np.searchsorted(numbers, np.inf, "left"))  # the first +inf
    zeros = int(np.searchsorted(numbers, 0.0, "right") - np.searchsorted(numbers, 0.0, "left"))
    ranks = np.ceil(np.arange(1, SUMMARY + 1) * (n / SUMMARY)).astype(np.int64) if n else []
    ranks = np.unique(np.clip(ranks, 1, max(n, 1))) if n else np.array([], np.int64)
    weights = np.diff(np.concatenate([[0], ranks]))
    with np.errstate(invalid="ignore"):
        mean = float(numbers.mean()) if n else 0.0
        deviations = numbers - mean
        m2 = float(np.dot(deviations, deviations)) if n else 0.0
    return {
        "values": len(values),
        "nan": nan,
        "pos_inf": n - high,
        "zeros": zeros,
        "n": n,
        "mean": mean,
        "m2": m2,
        "d_min": float(numbers[0]) if n else None,
        "d_max": float(numbers[-1]) if n else None,
        "finite_min": float(numbers[low]) if low < high else None,
        "finite_max": float(numbers[high - 1]) if low < high else None,
        "summary": (numbers[ranks - 1] if n else numbers, weights),
    }


def partials(places: list[int], kinds: list[str]) -> Any:
    """``mapInArrow`` function: a row (f, partial) per column at ``places``, and (-1, rows)."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import numpy as np
        import pyarrow as pa

        found: list[list[Any]] = [[] for _ in places]
        counts = [np.zeros(0, np.int64) for _ in places]
        rows = 0
        for batch in batches:
            rows += batch.num_rows
            for j, kind in enumerate(kinds):
                counts[j] = _added(counts[j], _sizes(batch.column(j)))
                if kind != PRESENCE:
                    found[j].append(_numbers(batch.column(j), kind))
        out = [pickle.dumps({"rows": rows})]
        for j, kind in enumerate(kinds):
            values = np.concatenate(found[j]) if found[j] else np.array([], np.float64)
            numbers = _partial(values) if kind != PRESENCE else {}
            out.append(pickle.dumps({"sizes": counts[j], **numbers}))
        yield pa.RecordBatch.from_arrays(
            [pa.array([-1, *places], pa.int32()), pa.array(out, pa.binary())], ["f", "partial"]
        )

    return run


def merged(
    payloads: list[bytes], grid: list[float], sizes_grid: list[float] | None = None
) -> dict[str, Any]:
    """A column's aggregates from its pickled partials (:func:`merged_parts`)."""
    return merged_parts([pickle.loads(p) for p in payloads], grid, sizes_grid)


def merged_parts(
    parts: list[dict[str, Any]], grid: list[float], sizes_grid: list[float] | None = None
) -> dict[str, Any]:
    """A column's aggregates from its partials, named as the SQL path; place -1: ``present``.

    A partial is :func:`partials`' (the arrow engine's) or the jar's figures' (its tests read them).
    """
    import numpy as np

    if "rows" in parts[0]:
        return {"present": sum(int(p["rows"]) for p in parts)}
    out: dict[str, Any] = {}
    if "sizes" in parts[0]:
        counts = parts[0]["sizes"]
        for p in parts[1:]:
            counts = _added(counts, p["sizes"])
        out.update(_presence(counts, sizes_grid or [0.0, 1.0]))
    if "values" not in parts[0]:
        return out
    out.update({k: sum(p[k] for p in parts) for k in ("values", "nan", "pos_inf", "zeros")})
    full = [p for p in parts if p["n"]]
    if not full:
        return out
    for key, pick in (("d_min", min), ("d_max", max), ("finite_min", min), ("finite_max", max)):
        present = [p[key] for p in full if p[key] is not None]
        out[key] = pick(present) if present else None
    n, mean, m2 = 0, 0.0, 0.0
    for p in full:  # Chan's parallel combination of means and squared deviations
        if not n:  # the first as it is (the jar's, whole: its mean to the last bit)
            n, mean, m2 = p["n"], p["mean"], p["m2"]
            continue
        total = n + p["n"]
        delta = p["mean"] - mean
        mean = mean + delta * p["n"] / total if math.isfinite(delta) else mean + delta
        m2 = m2 + p["m2"] + delta * delta * n * p["n"] / total
        n = total
    out["mean"], out["variance"] = mean, m2 / n
    values = np.concatenate([p["summary"][0] for p in full])
    weights = np.concatenate([p["summary"][1] for p in full])
    order = np.argsort(values, kind="stable")
    values, cumulative = values[order], np.cumsum(weights[order])
    at = np.searchsorted(cumulative, np.array(grid) * n, side="left")
    out["d_q"] = [float(v) for v in values[np.clip(at, 0, len(values) - 1)]]
    out["d_q"][0], out["d_q"][-1] = out["d_min"], out["d_max"]
    return out


def top_strings(top: int) -> Any:
    """``mapInArrow`` function: (f, s, c, bad) rows in, (f, pickled figures and top) out."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        found = list(batches)
        if not found or not sum(b.num_rows for b in found):
            return
        table = pa.Table.from_batches(found)
        places = table.column("f").to_numpy()
        table = table.take(np.argsort(places, kind="stable"))
        places = np.sort(places)
        starts = np.flatnonzero(np.r_[True, places[1:] != places[:-1]])
        rows = []
        for lo, hi in zip(starts, [*starts[1:], len(places)]):
            mine = table.slice(lo, hi - lo)
            counts = mine.column("c").to_numpy()
            lengths = pc.fill_null(pc.binary_length(mine.column("s")), 0).to_numpy()
            picked = pc.select_k_unstable(
                mine, k=min(top, hi - lo), sort_keys=[("c", "descending"), ("s", "descending")]
            )
            figures = {
                "unique": hi - lo,
                "length": int((lengths.astype(np.int64) * counts).sum()),
                "invalid": int(counts[pc.fill_null(mine.column("bad"), False).to_numpy()].sum()),
                "top": (mine.column("s").take(picked).to_pylist(), counts[picked].tolist()),
            }
            rows.append(pickle.dumps(figures))
        yield pa.RecordBatch.from_arrays(
            [pa.array(places[starts], pa.int32()), pa.array(rows, pa.binary())], ["f", "strings"]
        )

    return run


def merged_strings(payloads: list[bytes], top: int) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """A string column's figures from :func:`top_strings`, and its top rows (s, c, rank)."""
    parts = [pickle.loads(p) for p in payloads]
    figures = {k: sum(int(p[k]) for p in parts) for k in ("unique", "length", "invalid")}
    pairs = sorted(((c, s) for p in parts for s, c in zip(*p["top"])), reverse=True)[:top]
    return figures, [{"s": s, "c": c, "rank": k + 1} for k, (c, s) in enumerate(pairs)]
