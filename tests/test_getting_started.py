"""docs/getting-started.md's Python examples run as written, one after the other, as a new user
runs them: in a Python process of their own, under a temporary directory instead of /tmp."""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from pathlib import Path

import spark_tfrecord

DOC = Path(__file__).resolve().parent.parent / "docs" / "getting-started.md"
MARK = "<!-- run by tests/test_getting_started.py -->"
ROWS = [(1, [0.1, 0.2], ["a", "b"], "en"), (2, [0.3], [], "fr")]


def test_the_python_examples_run_in_order(spark, tmp_path: Path) -> None:
    """The PySpark example writes a folder partitioned by `lang`; the RDD example reads it back
    with TFRecordInputFormat (the files in its `lang=` subdirectories) and copies the records
    into gzip files with TFRecordOutputFormat."""
    blocks = re.findall(re.escape(MARK) + r"\n```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 2 and "newAPIHadoopFile" in blocks[1], blocks
    script = "".join(blocks)
    assert script.count("/tmp/") == 4, script  # every path the examples write or read
    where = tmp_path / "tmp"
    where.mkdir()
    (tmp_path / "examples.py").write_text(script.replace("/tmp/", f"{where}/"))
    done = subprocess.run(
        [sys.executable, "examples.py"], cwd=tmp_path, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-5000:]

    # train.show() printed both rows, with lang from the directory names.
    table = [
        [cell.strip() for cell in line.split("|")[1:-1]]
        for line in done.stdout.splitlines()
        if line.startswith("|")
    ]
    assert table[0] == ["id", "embedding", "tokens", "lang"], done.stdout
    assert sorted(table[1:]) == [["1", "[0.1, 0.2]", "[a, b]", "en"], ["2", "[0.3]", "[]", "fr"]]
    # The copy holds every record of the partitioned folder, in gzip TFRecord files.
    copies = sorted(p for p in (where / "train-gzip").iterdir() if p.name.startswith("part-r-"))
    assert copies and all(p.name.endswith(".tfrecord.gz") for p in copies), copies
    assert all(gzip.decompress(p.read_bytes()) for p in copies)
    assert (where / "train-gzip" / "_SUCCESS").exists()
    schema = "id long, embedding array<float>, tokens array<string>"
    copied = spark_tfrecord.read(spark, str(where / "train-gzip"), schema=schema)
    got = sorted((r.id, [round(x, 6) for x in r.embedding], r.tokens) for r in copied.collect())
    assert got == [(i, e, t) for i, e, t, _ in ROWS]
