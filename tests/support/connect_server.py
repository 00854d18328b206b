"""A Spark Connect server started the way a user starts one (``sbin/start-connect-server.sh``,
or the ``spark-daemon.sh submit`` that script runs where the pyspark wheel lacks it), on a free
port of 127.0.0.1, for the tests of Connect clients (test_connect: with the jar;
test_connect_python_source: with no jar, the Python data source in its Python workers)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from ipaddress import ip_address
from pathlib import Path

from support import QUICK_JVM, free_port, maven

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
START_TIMEOUT = 300.0


@dataclass(frozen=True)
class Server:
    url: str
    port: int
    pid: int


def log_tail(log: Path) -> str:
    return log.read_text(errors="replace")[-6000:] if log.is_file() else f"(no log at {log})"


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def listening(pid: int) -> set[tuple[str, int]]:
    """The (address, port) of every TCP socket that process `pid` listens on."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:  # 0A: LISTEN
                hex_address, hex_port = local.split(":")
                raw = bytes.fromhex(hex_address)
                # /proc prints the address as 32-bit words in host (little-endian) order.
                words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
                address = ip_address(words)
                mapped = getattr(address, "ipv4_mapped", None)
                found.add((str(mapped or address), int(hex_port, 16)))
    return found


def server_commands(spark_home: Path) -> tuple[list[str], list[str]]:
    """How to start and stop the Connect server; pyspark 3.5's and 4.0's wheels lack the two
    scripts, so run what they run."""
    sbin = spark_home / "sbin"
    start, stop = sbin / "start-connect-server.sh", sbin / "stop-connect-server.sh"
    if start.is_file() and stop.is_file():
        return [str(start)], [str(stop)]
    daemon = str(sbin / "spark-daemon.sh")
    return (
        [daemon, "submit", SERVER_CLASS, "1", "--name", "Spark Connect server"],
        [daemon, "stop", SERVER_CLASS, "1"],
    )


@contextmanager
def connect_server(
    spark_home: Path,
    root: Path,
    *,
    jars: list[str],
    conf: Mapping[str, str],
    env: Mapping[str, str],
    binding_address: bool = True,
) -> Iterator[Server]:
    """A Connect server of ``spark_home`` (``local[2]``) with ``jars`` (none: no ``--jars``) and
    ``conf`` besides the loopback ones, its pid, log, conf and local folders under ``root``, in
    this process's environment without its SPARK_* and PYSPARK_* variables, plus ``env``;
    stopped when the block ends. A server that exits or does not listen in START_TIMEOUT fails
    the test with its log. ``binding_address``: Spark 3.5 has no
    ``spark.connect.grpc.binding.address`` (4.0 added it), so its gRPC port listens on every
    interface."""
    for name in ("pid", "log", "conf", "local"):
        (root / name).mkdir(parents=True)
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    environment.update(
        SPARK_HOME=str(spark_home),
        SPARK_PID_DIR=str(root / "pid"),
        SPARK_LOG_DIR=str(root / "log"),
        SPARK_CONF_DIR=str(root / "conf"),
        SPARK_IDENT_STRING="tfrecord-test",
        SPARK_LOCAL_IP="127.0.0.1",
    )
    environment.update(env)
    settings = {
        "spark.connect.grpc.binding.port": str(port),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.driver.extraJavaOptions": QUICK_JVM,
        "spark.local.dir": str(root / "local"),
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.session.timeZone": "UTC",
        **conf,
    }
    if binding_address:
        settings["spark.connect.grpc.binding.address"] = "127.0.0.1"
    start, stop = server_commands(spark_home)
    args = ["--master", "local[2]"]
    if jars:
        args += ["--jars", ",".join(jars)]
    for key, value in settings.items():
        args += ["--conf", f"{key}={value}"]
    started = subprocess.run(
        start + args,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    pid_files = list((root / "pid").glob("*.pid"))
    logs = list((root / "log").glob("*.out"))
    log = logs[0] if logs else root / "log" / "missing.out"
    pid = int(pid_files[0].read_text()) if pid_files else None
    try:
        assert started.returncode == 0 and pid is not None, (
            f"{started.stdout}\n{started.stderr}\n{log_tail(log)}"
        )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert alive(pid), f"the Connect server exited while starting:\n{log_tail(log)}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, (
                    f"port {port} not answering after {START_TIMEOUT:.0f}s:\n{log_tail(log)}"
                )
                time.sleep(0.5)
        yield Server(f"sc://127.0.0.1:{port}", port, pid)
    finally:
        subprocess.run(
            stop, env=environment, capture_output=True, timeout=60, stdin=subprocess.DEVNULL
        )
        if pid is not None:
            deadline = time.monotonic() + 60
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def connect_jar_for_spark_3() -> Path:
    """`spark-connect_2.12` of pyspark's version, else the newest earlier 3.5 release.

    The Maven Central this project reaches lacks some 3.5 releases of this artifact (3.5.8 and
    3.5.9 among them); the Connect plugin of an earlier 3.5 patch release runs on a later one.
    """
    import pyspark

    group, artifact = "org.apache.spark", "spark-connect_2.12"
    try:
        return maven.fetch(group, artifact, pyspark.__version__)
    except urllib.error.HTTPError as e:
        if e.code != 404:
            raise
    url = f"{maven.CENTRAL}/{group.replace('.', '/')}/{artifact}/maven-metadata.xml"
    with urllib.request.urlopen(url, timeout=60) as response:
        text = response.read().decode()

    def key(version: str) -> tuple[int, ...]:
        return tuple(int(p) for p in version.split("."))

    versions = [v.split("<")[0] for v in text.split("<version>")[1:]]
    earlier = [v for v in versions if v.startswith("3.5.") and key(v) < key(pyspark.__version__)]
    assert earlier, f"no 3.5 release of {artifact} on Maven Central: {versions}"
    return maven.fetch(group, artifact, max(earlier, key=key))


@contextmanager
def jar_server(root: Path) -> Iterator[Server]:
    """The Connect server of the installed pyspark with the jar (and, on Spark 3.5, the Connect
    plugin's jar) and the session extension, as test_connect starts it; folders under ``root``.
    """
    import pyspark

    import spark_tfrecord

    spark_3 = pyspark.__version__.startswith("3.")
    jars = [spark_tfrecord.jar_path()]
    if spark_3:
        jars.insert(0, str(connect_jar_for_spark_3()))
    conf = {"spark.sql.extensions": spark_tfrecord.EXTENSIONS}  # nested column pruning
    spark_home = Path(pyspark.__file__).resolve().parent
    # Its Python workers (mapInArrow's: statistics' arrow engine) run this environment's
    # Python, which has pyarrow and the package, as a server's are configured to.
    env = {"PYSPARK_PYTHON": sys.executable}
    with connect_server(
        spark_home, root, jars=jars, conf=conf, env=env, binding_address=not spark_3
    ) as server:
        yield server
