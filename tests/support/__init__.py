"""What the tests share, apart from the tests (as `pyspark.testing` is apart from pyspark's).

- `tfrecord_bytes`: TFRecord framing and protobuf bytes built by hand; `tfrecord_oracle`: what
  a read must return, in pure Python; `fuzz_corpus`: the mutated files of the reliability
  tests; `tf_corpus`: files TensorFlow writes; `manifests`: manifests written by hand;
  `decoded`: what `torch_dataset` and `grain_source` must give for a row, and their comparison
  by type and bits; `loader_records`: a loader's records as JSON, to compare across processes;
  `jar_decoder`: the jar's decoder (through JPype) and the Python codec on one file, in one
  exact form.
- `maven`: jars from Maven Central; `spark_home`: pyspark's Spark home with some jars replaced;
  `s3_server`: an S3-compatible server and the S3A jars; `gcs_server`: a Cloud Storage server
  (fake-gcs-server) and Google's gcs-connector, and `gcs_front` the HTTPS front Hadoop's own
  connector reaches it through; `google_hosts`: a certificate and a proxy that put Google's
  storage hosts on 127.0.0.1, for TensorFlow's own GCS file system; `standalone`: a Spark
  standalone cluster and a driver process that runs scenarios on it; `connect_server`: a Spark
  Connect server; `python_envs`: a client environment of ``pyspark-client`` only, and a Python
  for a server's workers with or without this package; `streaming_pipeline`: test_streaming's
  query, and its child driver.
- Programs that tests run in a process of their own, each a module run with
  ``python -m support.<name>`` (`module_command`, `child_env`; `child_results` runs one that
  reports with `emit`, and `jar_of` says where its JVM loaded a class from): `cluster_driver`,
  `connect_client`, `jarless_connect_client`, `converter_client`, `shards_client`,
  `local_connect_server`, `running_session`, `s3_driver`, `gcs_driver`, `scala213_driver`,
  `tf_gcs_reader`, `small_heap_child`, `streaming_pipeline`, `jarless_source_child`,
  `jar_writes`, `read_in_new_session`, `tfrecord_package`, `imported_modules`,
  `old_hadoop_child`, `old_jackson_child`, `local_files_child`, `docs_session` (a docs page's
  Python blocks), `trainer_side` (a snippet in a trainer's fresh Python) and `loader_epochs`
  (run through it); `gcs_server` builds its server; `spark_submit_job.py` is the file a
  `spark-submit` test submits, `spark_shell_input.scala` what a `spark-shell` test types, and
  `java/` the Java sources a test compiles.

conftest.py holds the fixtures (and `spark_tfrecord.testing` the session ones); nothing here
starts a JVM or imports pyspark when the package is imported.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: The tests folder, which holds this package.
TESTS = Path(__file__).resolve().parent.parent
#: The checkout.
ROOT = TESTS.parent

#: JVM options for the drivers of child processes and test servers, which run small queries:
#: the client compiler alone and the serial collector start them in about half the time, and
#: Spark's classes unverified take a fifth less CPU again (tests/spark-conf/spark-defaults.conf).
QUICK_JVM = (
    "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC "
    "-XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote"
)


def once_but(cases: Iterable[str], *every: str) -> list[Any]:
    """``cases`` as pytest parameters, each marked ``once`` (one suite of ci/test's matrix runs
    it: tests/conftest.py) but those named in ``every``, which every suite runs: the cases that
    check what changes with Spark (one that reads, one that fails) in each, the rest, which
    check the package's code, in one."""
    import pytest

    missing = set(every) - set(cases)
    assert not missing, f"no cases {sorted(missing)}"
    return [pytest.param(c, marks=() if c in every else pytest.mark.once) for c in cases]


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now, for a server a test starts."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def answers(url: str) -> bool:
    """Whether ``url`` answers a GET with 200: a server a test started is up."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def tfrecord_files(path: Path) -> list[Path]:
    """The data files under `path` that a reader sees (not `_SUCCESS`, `.crc` or `_` indexes)."""
    return sorted(p for p in path.rglob("*.tfrecord*") if not p.name.startswith((".", "_")))


def write_with_tensorflow(tf: Any, path: Path, examples: list[Any]) -> None:
    """Writes `examples` (``tf.train.Example``) with TensorFlow's writer as ``path/od.tfrecord``."""
    path.mkdir(parents=True)
    with tf.io.TFRecordWriter(str(path / "od.tfrecord")) as writer:
        for example in examples:
            writer.write(example.SerializeToString())


def write_with_tfds(
    tfds: Any, root: Path, name: str, features: Any, splits: Mapping[str, list[Any]]
) -> Path:
    """Writes a dataset with TFDS's own writer (``store_as_tfds_dataset``), each split's
    examples keyed by their position; returns its folder, ``root/name/1.0.0``."""
    tfds.dataset_builders.store_as_tfds_dataset(
        name=name, version="1.0.0", features=features, data_dir=str(root),
        split_datasets={s: [(str(i), e) for i, e in enumerate(es)] for s, es in splits.items()},
    )  # fmt: skip
    return root / name / "1.0.0"


def module_command(name: str, *args: str) -> list[str]:
    """The command that runs ``support.<name>`` in a Python of its own (with `child_env`)."""
    return [sys.executable, "-m", f"support.{name}", *args]


def child_env(env: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """`env` (this process's environment by default) plus `extra`, with the tests folder first
    on PYTHONPATH, so that a child process started in any directory imports this package."""
    merged = {**(os.environ if env is None else env), **extra}
    path = [str(TESTS), *filter(None, merged.get("PYTHONPATH", "").split(os.pathsep))]
    merged["PYTHONPATH"] = os.pathsep.join(path)
    return merged


@contextmanager
def local_server(
    name: str, command: Callable[[int], list[str]], probe: str, log: Path, deadline_seconds: float
) -> Iterator[str]:
    """The endpoint (``http://127.0.0.1:PORT``) of a server that ``command(port)`` starts on a
    free port, its output appended to ``log``, once a GET of ``probe`` answers 200; stopped when
    the block ends. Raises RuntimeError with the log's tail if it does not answer in time."""
    for _ in range(3):  # another process may take the free port before the server binds it
        port = free_port()
        endpoint = f"http://127.0.0.1:{port}"
        with log.open("ab") as out:
            process = subprocess.Popen(
                command(port), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        try:
            deadline = time.monotonic() + deadline_seconds
            while process.poll() is None and time.monotonic() < deadline:
                if answers(endpoint + probe):
                    yield endpoint
                    return
                time.sleep(0.2)
            exited = process.poll()
        finally:
            stop(process)
        if "address already in use" not in log.read_text(errors="replace").lower():
            break
    tail = log.read_text(errors="replace")[-5000:]
    why = f"did not answer in {deadline_seconds} s" if exited is None else f"exited with {exited}"
    raise RuntimeError(f"{name} at {endpoint} {why}; its log ends:\n{tail}")


def driver_result(name: str, config: Any, log: Path, timeout: float) -> tuple[Any, str]:
    """Runs the driver ``support.<name>`` on ``config`` (as JSON) in a Python of its own, keeps
    its standard error in ``log``, checks that it exited 0 and printed a ``RESULT``, and returns
    the first result and the standard error."""
    done = subprocess.run(
        module_command(name, json.dumps(config)),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(),
    )
    log.write_text(done.stderr)
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-8000:]
    return json.loads(lines[0][7:]), done.stderr


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stops a server a test started: terminated, killed after 30 s if still running."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)


def emit(**record: Any) -> None:
    """Prints ``RESULT {json}``: what a child program found, for `child_results` to read."""
    print("RESULT " + json.dumps(record), flush=True)


def child_results(
    name: str, *args: str, timeout: float = 900, **env: str
) -> dict[str, dict[str, Any]]:
    """Runs ``support.<name>`` with ``args`` in a Python of its own (this one, which its Spark
    workers use too; ``env`` added to its environment), checks that it exited 0, and returns the
    records it printed with `emit`, by their ``case`` (``"jvm"`` for the one without)."""
    done = subprocess.run(
        module_command(name, *args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env({**os.environ, "PYSPARK_PYTHON": sys.executable, **env}),
    )
    assert done.returncode == 0, done.stderr[-5000:]
    found = [json.loads(x[7:]) for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    return {str(r.get("case", "jvm")): r for r in found}


def jar_of(jvm: Any, class_name: str) -> str | None:
    """The jar (a ``file:`` URL) that the Py4J JVM ``jvm`` loaded ``class_name`` from; None
    when no jar has the class."""
    try:
        loaded = jvm.java.lang.Class.forName(class_name)
    except Exception:  # py4j's Py4JJavaError wrapping ClassNotFoundException
        return None
    return str(loaded.getProtectionDomain().getCodeSource().getLocation())
