"""The `tfrecord` package from PyPI (what PyTorch users read TFRecords with), run in a child
process as a trainer's worker would be: its generated `tensorflow.Example` protobuf classes
cannot share a process with TensorFlow's own (a duplicate symbol in protobuf's default pool).

    python -m support.tfrecord_package < request.json    ->  JSON on stdout

A request is {"shards": [[data, index], ...], "n": N, "description": {...}, "compression":
null|"gzip"}: every record of every shard (i, N) of every file, each a dict of lists (bytes as
latin-1 text); or {"create_index": [data, index]}: the package's own indexer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from support import child_env, module_command


def _plain(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("latin-1")
    if hasattr(value, "tolist"):
        return [_plain(v) for v in value.tolist()]
    return value


def main() -> None:
    request = json.load(sys.stdin)
    if "create_index" in request:
        from tfrecord.tools.tfrecord2idx import create_index

        create_index(*request["create_index"])
        json.dump(None, sys.stdout)
        return
    from tfrecord.reader import tfrecord_loader

    records = []
    for data, index in request["shards"]:
        for i in range(request["n"]):
            for record in tfrecord_loader(
                data,
                index,
                request["description"],
                shard=(i, request["n"]),
                compression_type=request.get("compression"),
            ):
                records.append({k: _plain(v) for k, v in record.items()})
    json.dump(records, sys.stdout)


def run(request: dict[str, Any]) -> Any:
    """Runs a request in a child Python; returns its answer."""
    done = subprocess.run(
        module_command("tfrecord_package"),
        input=json.dumps(request),
        env=child_env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


if __name__ == "__main__":
    main()
