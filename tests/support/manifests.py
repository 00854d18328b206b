"""Manifests (``_tfrecord_manifest.json``) written by hand in the writer's exact format, for
folders whose records a test knows."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MANIFEST = "_tfrecord_manifest.json"


def compression_of(name: str) -> str:
    return "gzip" if name.endswith(".gz") else "deflate" if name.endswith(".deflate") else "none"


def write_manifest(
    folder: Path,
    records: Mapping[str, int],
    *,
    schema: str = "id BIGINT",
    schema_json: Mapping[str, Any] | None = None,
    record_type: str = "Example",
    partition_columns: tuple[str, ...] = (),
    features: Mapping[str, tuple[int, int]] | None = None,
    feature_lists: Mapping[str, tuple[int, int]] | None = None,
) -> dict[str, Any]:
    """Writes ``folder/_tfrecord_manifest.json`` for the files ``records`` names (relative path
    → record count), their sizes taken from the disk; returns what it wrote."""
    files = [
        {
            "path": rel,
            "num_records": n,
            "num_bytes": (folder / rel).stat().st_size,
            "compression": compression_of(rel),
        }
        for rel, n in sorted(records.items())
    ]
    manifest: dict[str, Any] = {
        "format": "spark-tfrecord-manifest",
        "version": 1,
        "record_type": record_type,
        "schema": schema,
        "schema_json": schema_json
        or {
            "type": "struct",
            "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}],
        },
        "partition_columns": list(partition_columns),
        "num_records": sum(records.values()),
        "num_bytes": sum(f["num_bytes"] for f in files),
        "files": files,
        "features": {k: {"min": lo, "max": hi} for k, (lo, hi) in (features or {}).items()},
    }
    if feature_lists is not None:
        manifest["feature_lists"] = {
            k: {"min": lo, "max": hi} for k, (lo, hi) in feature_lists.items()
        }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest
