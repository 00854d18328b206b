"""Epochs of `torch_dataset` over an s3:// or gs:// folder, run in a trainer's fresh Python
(`support.trainer_side`), so that each scenario starts with an empty block cache and no file
system instance another test made.

Each phase (opening the dataset, each epoch) starts with a marker request, ``GET
/_mark/<token>-<phase>`` to the server, and the run ends with ``<token>-end``: the test splits
the server's log of requests at the markers (`tests/test_s3_loaders.py`, `tests/test_gcs.py`),
and so counts what each phase cost.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from support.loader_records import digest

R = TypeVar("R")


@dataclass(frozen=True)
class Folder:
    """A folder Spark wrote locally, uploaded to a bucket: its local copy, its URL
    (``s3://bucket/prefix``), its key prefix in the bucket, each data file's bytes (by path
    relative to the folder) and the block size the tests read it in."""

    local: Path
    url: str
    prefix: str
    sizes: dict[str, int]
    block_size: int

    def blocks(self, name: str) -> int:
        return math.ceil(self.sizes[name] / self.block_size)

    @property
    def total_blocks(self) -> int:
        return sum(self.blocks(n) for n in self.sizes)


def mark(endpoint: str, name: str) -> None:
    """One request the server logs: ``GET /_mark/<name>`` (a bucket or path that does not
    exist)."""
    with contextlib.suppress(urllib.error.HTTPError):  # 404: NoSuchBucket, logged all the same
        urllib.request.urlopen(f"{endpoint}/_mark/{name}", timeout=10).close()


def phases(
    logged: Callable[[], list[R]],
    marker: Callable[[R], str | None],
    token: str,
    log: Path,
    deadline_seconds: float = 30,
) -> dict[str, list[R]]:
    """The requests a server logged (`logged` reads its log) after each marker of `token`
    (`mark`: ``<token>-<phase>``) until the next marker, by phase, once ``<token>-end`` is
    logged: the server logs a request after answering it. `marker` gives a request's marker
    name, or None for a request that is not one."""
    deadline = time.monotonic() + deadline_seconds
    while True:
        requests = logged()
        if f"{token}-end" in (marker(r) for r in requests):
            break
        assert time.monotonic() < deadline, f"no marker {token}-end in {log}"
        time.sleep(0.2)
    found: dict[str, list[R]] = {}
    current: list[R] | None = None
    for r in requests:
        name = marker(r)
        if name is not None:
            phase = name[len(token) + 1 :] if name.startswith(f"{token}-") else "end"
            current = None if phase == "end" else found.setdefault(phase, [])
        elif current is not None:
            current.append(r)
    return found


def epochs(
    url: str,
    token: str,
    runs: list[dict[str, Any]],
    *,
    endpoint: str | None = None,
    storage_options: dict[str, Any] | None = None,
    cache_bytes: int = 256 << 20,
    block_size: int = 4 << 20,
    batch_size: int = 256,
) -> dict[str, Any]:
    """Opens ``torch_dataset(url, ...)``, then runs one DataLoader epoch per entry of `runs`
    (``{"shuffle": bool, "num_workers": int, "context": "fork"|"spawn"|None}``, or
    ``{"block_sampler": seed}``: ``sampler=ds.block_sampler(seed=seed)``, its epoch set to the
    run's number); returns ``len(ds)`` and the ids each epoch gave, in the order it gave them.
    `endpoint` defaults to the environment's ``AWS_ENDPOINT_URL`` (where the markers go)."""
    from torch.utils.data import DataLoader

    import spark_tfrecord

    endpoint = endpoint or os.environ["AWS_ENDPOINT_URL"]
    mark(endpoint, f"{token}-open")
    ds = spark_tfrecord.torch_dataset(
        url, storage_options=storage_options, cache_bytes=cache_bytes, block_size=block_size
    )
    length = len(ds)
    ids = []
    for k, run in enumerate(runs):
        mark(endpoint, f"{token}-epoch{k}")
        workers = run.get("num_workers", 0)
        sampler = None
        if "block_sampler" in run:
            sampler = ds.block_sampler(seed=run["block_sampler"])
            sampler.set_epoch(k)
        loader = DataLoader(
            ds,
            batch_size=batch_size,
            shuffle=run.get("shuffle", False),
            sampler=sampler,
            collate_fn=ds.collate,
            num_workers=workers,
            multiprocessing_context=run.get("context") if workers else None,
        )
        ids.append([int(i) for batch in loader for i in batch["id"].tolist()])
    mark(endpoint, f"{token}-end")
    return {"len": length, "ids": ids}


def read_all(url: str, storage_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every record of ``torch_dataset(url)`` in order (`digest`), ``len()``, and
    ``dataset_info(url)``'s counts, read with the credentials given or the environment's."""
    import spark_tfrecord

    ds = spark_tfrecord.torch_dataset(url, storage_options=storage_options)
    info = spark_tfrecord.dataset_info(url, storage_options=storage_options)
    return {
        "len": len(ds),
        "digest": digest(ds[i] for i in range(len(ds))),
        "num_records": info.num_records,
        "files": [[f.path.rsplit("/", 1)[-1], f.num_records, f.num_bytes] for f in info.files],
    }
