"""The numbers of list columns aggregated a batch at a time, in NumPy (``mapInArrow``), for
:mod:`statistics`: each partition gives, per column, its counts, min, max, mean and sum of
squared deviations, and a summary of its sorted values (every ``len/SUMMARY``-th, with the
number of values it stands for); the driver merges them. A quantile of the merged summaries is
within ``1/SUMMARY`` of the values of its rank: each partition's summary places a value at most
``1/SUMMARY`` of that partition's values off.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Iterator
from typing import Any

#: The values a partition's summary keeps of each column.
SUMMARY = 4000


def _numbers(array: Any, kind: str) -> Any:
    """A list column's values as float64, as the record holds them."""
    import numpy as np
    import pyarrow as pa

    values = array.flatten().drop_null()
    if pa.types.is_timestamp(values.type) or pa.types.is_date(values.type):
        values = values.cast(pa.int64() if pa.types.is_timestamp(values.type) else pa.int32())
    out = values.to_numpy(zero_copy_only=False)
    if kind == "float":  # the jar writes a float_list: a double rounded to float32
        return out.astype(np.float32).astype(np.float64)
    return out.astype(np.float64)


def _partial(values: Any) -> dict[str, Any]:
    import numpy as np

    nan = np.isnan(values)
    numbers = np.sort(values[~nan])
    finite = numbers[np.isfinite(numbers)]
    n = len(numbers)
    ranks = np.ceil(np.arange(1, SUMMARY + 1) * (n / SUMMARY)).astype(np.int64) if n else []
    ranks = np.unique(np.clip(ranks, 1, max(n, 1))) if n else np.array([], np.int64)
    weights = np.diff(np.concatenate([[0], ranks]))
    with np.errstate(invalid="ignore"):
        mean = float(numbers.mean()) if n else 0.0
        m2 = float(((numbers - mean) ** 2).sum()) if n else 0.0
    return {
        "values": len(values),
        "nan": int(nan.sum()),
        "pos_inf": int((numbers == np.inf).sum()),
        "zeros": int((numbers == 0).sum()),
        "n": n,
        "mean": mean,
        "m2": m2,
        "d_min": float(numbers[0]) if n else None,
        "d_max": float(numbers[-1]) if n else None,
        "finite_min": float(finite[0]) if len(finite) else None,
        "finite_max": float(finite[-1]) if len(finite) else None,
        "summary": (numbers[ranks - 1] if n else numbers, weights),
    }


def partials(places: list[int], kinds: list[str]) -> Any:
    """The ``mapInArrow`` function of list columns at ``places`` (their order in the batches),
    each ``float`` or ``int``: one row (f, partial) per column and partition."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import numpy as np
        import pyarrow as pa

        found: list[list[Any]] = [[] for _ in places]
        for batch in batches:
            for j, kind in enumerate(kinds):
                found[j].append(_numbers(batch.column(j), kind))
        rows = [
            pickle.dumps(_partial(np.concatenate(v) if v else np.array([], np.float64)))
            for v in found
        ]
        yield pa.RecordBatch.from_arrays(
            [pa.array(places, pa.int32()), pa.array(rows, pa.binary())], ["f", "partial"]
        )

    return run


def merged(payloads: list[bytes], grid: list[float]) -> dict[str, Any]:
    """The aggregates of a column from its partitions' partials, as the SQL path names them."""
    import numpy as np

    parts = [pickle.loads(p) for p in payloads]
    out: dict[str, Any] = {
        k: sum(p[k] for p in parts) for k in ("values", "nan", "pos_inf", "zeros")
    }
    full = [p for p in parts if p["n"]]
    if not full:
        return out
    for key, pick in (("d_min", min), ("d_max", max), ("finite_min", min), ("finite_max", max)):
        present = [p[key] for p in full if p[key] is not None]
        out[key] = pick(present) if present else None
    n, mean, m2 = 0, 0.0, 0.0
    for p in full:  # Chan's parallel combination of means and squared deviations
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
