"""What counting a folder without a manifest costs: ``dataset_info``'s framing walk (every
record's length and both CRC32C checksums) with each CRC32C implementation importable here.

    python benchmarks/count_records.py              # a 50 MB file of 1 KB records, and gzipped
    python benchmarks/count_records.py --mb 200 --record-bytes 100

The file is written once into ``--dir`` (random record bytes, so that gzip cannot shrink it to
nothing). Prints, per implementation (pure Python always; the ``crc32c`` and ``google-crc32c``
packages when installed) and per file, the median of ``--repeat`` runs in MB/s of records.
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import struct
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from spark_tfrecord._format.frames import crc, manifest


def _frame(data: bytes) -> bytes:
    header = struct.pack("<Q", len(data))
    checksum = crc.crc32c()
    return (
        header
        + struct.pack("<I", crc.masked(checksum(header)))
        + data
        + struct.pack("<I", crc.masked(checksum(data)))
    )


def _write(folder: Path, mb: int, record_bytes: int) -> tuple[Path, Path]:
    plain = folder / f"{mb}mb-{record_bytes}b.tfrecord"
    packed = plain.with_name(plain.name + ".gz")
    if not plain.exists():
        folder.mkdir(parents=True, exist_ok=True)
        pool = [os.urandom(record_bytes) for _ in range(256)]
        frames = [_frame(r) for r in pool]
        n = mb * 1_000_000 // len(frames[0])
        plain.write_bytes(b"".join(frames[i % 256] for i in range(n)))
        packed.write_bytes(gzip.compress(plain.read_bytes(), compresslevel=6))
    return plain, packed


def _implementations() -> list[tuple[str, Callable[[Any], int]]]:
    found: list[tuple[str, Callable[[Any], int]]] = [("pure Python", crc._crc32c_python)]
    try:
        import crc32c

        found.append(("crc32c", crc32c.crc32c))
    except ImportError:
        pass
    try:
        import google_crc32c

        found.append(("google-crc32c", lambda d: google_crc32c.value(bytes(d))))
    except ImportError:
        pass
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=50, help="size of the file (default 50)")
    parser.add_argument("--record-bytes", type=int, default=1000, help="default 1000")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measure (default 3)")
    parser.add_argument("--dir", default="/tmp/spark-tfrecord-count-bench")
    args = parser.parse_args()
    plain, packed = _write(Path(args.dir), args.mb, args.record_bytes)
    mb = plain.stat().st_size / 1e6
    print(f"{mb:.0f} MB of {args.record_bytes}-byte records; load average {os.getloadavg()[0]:.1f}")
    print("| CRC32C | file | records | MB/s of records (median) |\n|---|---|---:|---:|")
    for name, implementation in _implementations():
        crc._crc32c_impl = (implementation, name)
        for path in (plain, packed):
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                n = manifest.count_records(str(path))
                times.append(time.perf_counter() - start)
            print(f"| {name} | {path.name} | {n:,} | {mb / statistics.median(times):,.1f} |")


if __name__ == "__main__":
    main()
