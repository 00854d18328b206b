"""Writes make their local files and folders without Hadoop's ``chmod`` process per file.

Hadoop's local file system sets the permissions of each file and folder it creates by starting
``chmod`` when its native library is not loaded (pip's pyspark has none), and writes a ``.crc``
side file, with a ``chmod`` of its own, beside each file: two processes a file, milliseconds
each, which made the fixed cost of a write (the manifest's count files, its lock and the
manifest itself doubled it). The child driver here runs with a ``chmod`` first on its PATH that
logs each call: none may name a path under the folders written, for every kind of write.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from support import child_env, module_command


def test_writes_start_no_chmod_process_and_leave_no_crc(tmp_path: Path) -> None:
    real = shutil.which("chmod")
    assert real is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "chmod.log"
    logger = bin_dir / "chmod"
    logger.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {real} "$@"\n')
    logger.chmod(0o755)
    out = tmp_path / "out"
    env = child_env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        module_command("local_files_child", str(out)),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts == {"plain": 80, "partitioned": 40, "gzip": 40, "sharded": 40, "tfds": 40}
    # The logger works: Spark's own startup calls chmod on its temporary folders.
    calls = log.read_text().splitlines() if log.exists() else []
    assert calls, "the logging chmod was never called: the test cannot see Hadoop's"
    ours = [c for c in calls if str(out) in c]
    assert ours == [], f"{len(ours)} chmod processes for the files written, e.g. {ours[:3]}"
    crc = sorted(str(p.relative_to(out)) for p in out.rglob("*.crc"))
    assert crc == []
