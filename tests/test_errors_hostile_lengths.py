"""A record header that lies about its length never takes the JVM down.

A file of 100-odd bytes whose header claims up to 2 GiB, with the length's correct CRC, is read
by a Spark driver with a 512 MiB heap through every path that reads records: each ends in the
documented error naming the file and the offset (or, with ignoreCorruptFiles, in the records
before it), and the same session answers the next query.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from support import child_env, module_command
from support.tfrecord_bytes import entry, example, feature, frame, int64_list_packed, lying_header

DRIVER_MEMORY = "512m"
# Lengths a record header can claim: just under 2 GiB, the default maxRecordBytes (the JVM's
# largest array), and more than the heap.
CLAIMS = [2**31 - 200, 2**31 - 65, 600 * 2**20]
COMPRESSIONS = {
    "none": ("", lambda b: b),
    "gzip": (".gz", gzip.compress),
    "deflate": (".deflate", zlib.compress),
}


def good(i: int) -> bytes:
    return frame(example(entry(b"id", feature("int64", int64_list_packed([i])))))


def hostile_files(root: Path) -> Path:
    prefix = good(0) + good(1)
    for name, (extension, compress) in COMPRESSIONS.items():
        (root / name).mkdir(parents=True)
        for claim in CLAIMS:
            content = prefix + lying_header(claim) + b"\x00" * 88
            (root / name / f"hostile-{claim}.tfrecord{extension}").write_bytes(compress(content))
    (root / "good").mkdir()
    (root / "good" / "a.tfrecord").write_bytes(b"".join(good(i) for i in range(5)))
    return root


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, object]]:
    data = hostile_files(tmp_path_factory.mktemp("hostile"))
    done = subprocess.run(
        module_command("small_heap_child", str(data), DRIVER_MEMORY),
        capture_output=True,
        text=True,
        timeout=1500,
        env=child_env(PYSPARK_PYTHON=sys.executable),
    )
    results = [json.loads(x[7:]) for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    assert done.returncode == 0, done.stderr[-5000:]
    return results


def test_the_driver_heap_is_small(outcomes: list[dict[str, object]]) -> None:
    (heap,) = [o["max_heap"] for o in outcomes if "max_heap" in o]
    assert isinstance(heap, int) and heap <= 512 * 2**20, heap


def test_every_read_path_gives_the_documented_error(outcomes: list[dict[str, object]]) -> None:
    offset = len(good(0) + good(1))
    cases = [o for o in outcomes if "case" in o]
    # 3 compressions x 4 claims x 11 paths, and 3 split paths for each uncompressed file.
    assert len(cases) == len(COMPRESSIONS) * len(CLAIMS) * 11 + len(CLAIMS) * 3
    for o in cases:
        assert o["after"] == 5, o  # the session survived and answers the next query
        if "ignoreCorruptFiles" in str(o["case"]):
            continue
        assert o.get("error") == "io.github.sparktfrecord.TFRecordCorruptException", o
        message = str(o["message"])
        assert message.startswith("[TFRECORD_CORRUPT_RECORD.TRUNCATED] Truncated TFRecord"), o
        assert f"at byte offset {offset} of " in message, o
        assert str(o["file"]).split("/")[1] in message, o


def test_ignore_corrupt_files_keeps_the_records_before(outcomes: list[dict[str, object]]) -> None:
    kept = [o for o in outcomes if "ignoreCorruptFiles" in str(o.get("case"))]
    assert len(kept) == len(COMPRESSIONS) * len(CLAIMS) * 2 + len(CLAIMS)
    for o in kept:
        expected = ["id"] if "inference" in str(o["case"]) else [0, 1]
        assert o.get("value") == expected, o


@pytest.mark.parametrize("compression", sorted(COMPRESSIONS))
def test_inspect_without_spark_reports_the_lie(tmp_path: Path, compression: str) -> None:
    # `spark-tfrecord inspect` on a local path reads in a JVM of its own (JPype, 1 GiB heap).
    root = hostile_files(tmp_path / "data")
    (path,) = (root / compression).glob(f"hostile-{CLAIMS[0]}.*")
    done = subprocess.run(
        [sys.executable, "-m", "spark_tfrecord", "inspect", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 4, done.stderr[-3000:]
    assert "Truncated TFRecord" in done.stderr, done.stderr[-3000:]
    assert f"at byte offset {len(good(0) + good(1))} of" in done.stderr, done.stderr[-3000:]
