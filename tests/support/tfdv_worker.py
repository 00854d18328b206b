"""The test process's side of support/tfdv_check.py: one ``tfdv_check.py --serve`` process in
TFDV's environment (SPARK_TFRECORD_TFDV_PYTHON) for the whole suite, which checks one job after
another; TensorFlow, TFDV and Beam take a process seconds of CPU to import, which each job in a
process of its own paid again (tests/conftest.py's ``tfdv`` fixture starts it, and stops it
when the suite ends)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

TFDV_PYTHON = "SPARK_TFRECORD_TFDV_PYTHON"
#: The longest one job may take: TFDV's DirectRunner on a few thousand records takes seconds.
JOB_SECONDS = 900


def tfdv_python() -> str:
    """The python of TFDV's environment, or a failure saying how to make it."""
    python = os.environ.get(TFDV_PYTHON)
    if not python:
        raise AssertionError(
            f"{TFDV_PYTHON} is not set: these tests compare with TensorFlow Data Validation in an "
            "environment of its own. ci/test makes it (.cache/venv/tfdv) and sets it; by hand: "
            "python3.11 -m venv .cache/venv/tfdv && .cache/venv/tfdv/bin/pip install "
            "tensorflow-data-validation==1.16.1 tfx-bsl==1.16.1 tensorflow-metadata==1.16.1 "
            'tensorflow==2.16.2 pyarrow==10.0.1 "pandas<2" "numpy<2" "apache-beam[gcp]==2.61.0", '
            f"then {TFDV_PYTHON}=.cache/venv/tfdv/bin/python"
        )
    return python


class TFDVWorker:
    """``tfdv_check.py --serve`` in TFDV's environment, started on the first job; its standard
    error (TensorFlow's and Beam's logs) goes to ``log``, whose end a failure shows."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.log = folder / "tfdv-worker.log"
        self.jobs = 0
        self.process: subprocess.Popen[str] | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()

    def _start(self) -> subprocess.Popen[str]:
        script = Path(__file__).parent / "tfdv_check.py"
        with open(self.log, "w") as log:
            process = subprocess.Popen(
                [tfdv_python(), str(script), "--serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
            )
        assert process.stdout is not None

        def pump(out: IO[str]) -> None:  # its lines, then None when it ends
            for line in out:
                self.lines.put(line)
            self.lines.put(None)

        threading.Thread(target=pump, args=(process.stdout,), daemon=True).start()
        return process

    def _failure(self, why: str) -> AssertionError:
        tail = self.log.read_text(errors="replace")[-5000:] if self.log.exists() else ""
        return AssertionError(f"the TFDV worker {why}; the end of {self.log}:\n{tail}")

    def check(self, job: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """tfdv_check.check's report on ``job`` and its status (0: agreed, 1: problems
        found); a job that raised, or a worker that ended or took over JOB_SECONDS, fails."""
        if self.process is None:
            self.process = self._start()
        self.jobs += 1
        path = self.folder / f"job-{self.jobs}.json"
        path.write_text(json.dumps(job))
        assert self.process.stdin is not None
        started = time.monotonic()
        self.process.stdin.write(f"{path}\n")
        self.process.stdin.flush()
        while True:
            try:
                line = self.lines.get(timeout=JOB_SECONDS)
            except queue.Empty:
                raise self._failure(f"gave no report in {JOB_SECONDS} s") from None
            if line is None:
                raise self._failure(f"ended (exit {self.process.wait()})")
            if line.startswith("REPORT "):
                break
        report = json.loads(line[len("REPORT ") :])
        if report["status"] == 2:
            raise self._failure(f"failed on {path}:\n{report['error']}")
        print(json.dumps(report, indent=1))
        print(f"TFDV's check of {path.name}: {time.monotonic() - started:.1f} s")
        return report, int(report["status"])

    def close(self) -> None:
        if self.process is None:
            return
        assert self.process.stdin is not None
        self.process.stdin.close()  # serve() ends at the end of its input
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None
