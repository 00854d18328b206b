"""A Spark standalone cluster on 127.0.0.1, and a driver process that runs scenarios on it.

`standalone_cluster` starts a master and workers with the installed pyspark's own
`bin/spark-class`; executors of an application are JVMs that the workers launch. `Driver` is a
child Python process (one JVM per process) that owns the application's SparkSession and runs
named scenarios on request, so one application serves several tests; `serve` is its side of
the conversation. Everything listens on 127.0.0.1, logs and work directories live under the
given root, and nothing outlives the context managers (checked, not assumed).
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

import pyspark

from support import QUICK_JVM, child_env

SPARK_HOME = Path(pyspark.__file__).resolve().parent
START_DEADLINE = 240.0  # seconds: the machine is small and shared, JVMs start slowly
STOP_DEADLINE = 60.0
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"


def free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 (all held open until all are picked, so they differ)."""
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


def wait_for(
    condition: Callable[[], Any], what: str, deadline: float, why: Callable[[], str]
) -> Any:
    """Poll `condition` until it returns something truthy; fail with `why()` at the deadline."""
    end = time.monotonic() + deadline
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {deadline:.0f} s\n{why()}")
        time.sleep(0.2)


def tail(path: Path, chars: int = 4000) -> str:
    text = path.read_text(errors="replace") if path.exists() else "(no log)"
    return f"--- {path.name} ---\n{text[-chars:]}"


def _proc(pid: int, name: str) -> str:
    try:
        if name == "cwd":
            return os.readlink(f"/proc/{pid}/cwd")
        return (
            Path(f"/proc/{pid}/{name}").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:  # gone, or not ours to look at
        return ""


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def processes_under(root: Path, groups: set[int]) -> dict[int, str]:
    """Live processes working under `root` or in one of the process `groups`, with their
    command lines (executors and their Python workers run in the workers' work directories;
    pyspark's daemon makes a process group of its own)."""
    found = {}
    for pid in _pids():
        try:
            group = os.getpgid(pid)
        except OSError:
            continue
        cwd = _proc(pid, "cwd")
        if group in groups or cwd == str(root) or cwd.startswith(f"{root}/"):
            stat = _proc(pid, "stat")
            if stat and stat.rsplit(")", 1)[-1].split()[0] != "Z":
                found[pid] = _proc(pid, "cmdline")
    return found


def _stop(procs: list[subprocess.Popen[bytes]], root: Path) -> None:
    """Stop the process groups (TERM, then KILL) and check that nothing is left of them or
    under `root`."""
    groups = {p.pid for p in procs}  # each was started as the leader of a new session
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for group in groups:
            with suppress(ProcessLookupError):
                os.killpg(group, sig)
        end = time.monotonic() + STOP_DEADLINE / 2
        while processes_under(root, groups) and time.monotonic() < end:
            for p in procs:
                p.poll()
            time.sleep(0.2)
        if not processes_under(root, groups):
            break
    for p in procs:
        p.wait(timeout=10)
    left = processes_under(root, groups)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"


class Cluster:
    """A running master and its workers."""

    def __init__(self, root: Path, workers: int) -> None:
        self.root = root
        self.master_port, self.master_ui, *worker_uis = free_ports(2 + workers)
        self.url = f"spark://127.0.0.1:{self.master_port}"
        self.work_dirs = [root / f"worker-{i}" for i in range(workers)]
        self.logs = [root / "master.log"] + [root / f"worker-{i}.log" for i in range(workers)]
        self.procs: list[subprocess.Popen[bytes]] = []
        self._worker_uis = worker_uis

    def _spawn(self, log: Path, *args: str) -> None:
        conf = self.root / "conf"  # empty: no spark-defaults or log4j2 of the machine's
        conf.mkdir(exist_ok=True)
        env = {
            **os.environ,
            "SPARK_HOME": str(SPARK_HOME),
            "SPARK_CONF_DIR": str(conf),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_MASTER_HOST": "127.0.0.1",
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_DAEMON_JAVA_OPTS": QUICK_JVM,  # 107 s -> 47 s of CPU for test_cluster
        }
        with log.open("wb") as out:
            self.procs.append(
                subprocess.Popen(
                    [str(SPARK_HOME / "bin" / "spark-class"), *args],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=env,
                    cwd=self.root,
                    start_new_session=True,
                )
            )

    def start(self) -> None:
        self._spawn(
            self.logs[0],
            "org.apache.spark.deploy.master.Master",
            *("--host", "127.0.0.1", "--port", str(self.master_port)),
            *("--webui-port", str(self.master_ui)),
        )
        for work, log, ui in zip(self.work_dirs, self.logs[1:], self._worker_uis):
            work.mkdir()
            self._spawn(
                log,
                "org.apache.spark.deploy.worker.Worker",
                *("--host", "127.0.0.1", "--cores", "1", "--memory", "1g"),
                *("--work-dir", str(work), "--webui-port", str(ui), self.url),
            )
        wait_for(self._all_alive, "the workers registered ALIVE", START_DEADLINE, self.log_tails)

    def master_state(self) -> dict[str, Any]:
        """The master web UI's JSON: workers, applications."""
        url = f"http://127.0.0.1:{self.master_ui}/json/"
        with urllib.request.urlopen(url, timeout=10) as response:
            state: dict[str, Any] = json.load(response)
            return state

    def _all_alive(self) -> bool:
        dead = [p.args for p in self.procs if p.poll() is not None]
        assert not dead, f"exited early: {dead}\n{self.log_tails()}"
        try:
            workers = self.master_state()["workers"]
        # The master's UI is not up yet, or answers before it has a state to give: a refused
        # or dropped connection, a short read, a body that is not JSON yet.
        except (OSError, ValueError, http.client.HTTPException):
            return False
        alive = [w for w in workers if w["state"] == "ALIVE" and w["host"] == "127.0.0.1"]
        return len(alive) == len(self.work_dirs)

    def executors(self, app_id: str) -> dict[str, int]:
        """This cluster's executor JVMs of an application: executor id -> pid.

        A worker runs each executor in `<work dir>/<app id>/<executor id>`."""
        found = {}
        for pid in _pids():
            cmd = _proc(pid, "cmdline").split()
            if EXECUTOR_CLASS in cmd and app_id in cmd:
                cwd = Path(_proc(pid, "cwd"))
                if cwd.parent.name == app_id and cwd.parent.parent in self.work_dirs:
                    found[cwd.name] = pid
        return found

    def log_tails(self) -> str:
        return "\n".join(tail(log) for log in self.logs)

    def stop(self) -> None:
        _stop(self.procs, self.root)


@contextmanager
def standalone_cluster(root: Path, *, workers: int = 2) -> Iterator[Cluster]:
    """A master and `workers` one-core workers on 127.0.0.1, logs and work dirs under `root`."""
    cluster = Cluster(root, workers)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


# --- the driver process ---------------------------------------------------------------------


class ScenarioFailed(AssertionError):
    pass


class Driver:
    """A child Python process running `module` (``python -m``), which calls `serve`; talks
    JSON lines."""

    def __init__(self, module: str, args: list[str], root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.log = root / "driver.log"
        self.cwd = root / "driver"
        self.cwd.mkdir()
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", module, *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=child_env(**env),
                cwd=self.cwd,
                start_new_session=True,
            )
        self._lines: queue.Queue[str] = queue.Queue()
        self._ended = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace")
            if line.startswith("RESULT "):
                self._lines.put(line[7:])
        self._ended.set()  # the driver exited

    def send(self, scenario: str, **args: Any) -> None:
        assert self.proc.stdin is not None
        with suppress(BrokenPipeError):  # the driver is gone: `result` says so, with its log
            request = json.dumps({"scenario": scenario, "args": args}) + "\n"
            self.proc.stdin.write(request.encode())
            self.proc.stdin.flush()

    def result(
        self, scenario: str, *, deadline: float = 600.0, why: Callable[[], str] = str
    ) -> Any:
        """The value the scenario returned; a failure names the scenario and shows the logs."""
        end = time.monotonic() + deadline
        while True:
            with suppress(queue.Empty):
                answer = json.loads(self._lines.get(timeout=0.5))
                break
            if (self._ended.is_set() and self._lines.empty()) or time.monotonic() > end:
                raise ScenarioFailed(
                    f"scenario {scenario!r}: no result (driver exit code {self.proc.poll()}, "
                    f"waited at most {deadline:.0f} s)\n{tail(self.log, 8000)}\n{why()}"
                )
        assert answer["scenario"] == scenario, answer
        if "error" in answer:
            raise ScenarioFailed(f"scenario {scenario!r} failed in the driver:\n{answer['error']}")
        return answer["value"]

    def run(self, scenario: str, **args: Any) -> Any:
        self.send(scenario, **args)
        return self.result(scenario)

    def stop(self) -> None:
        try:
            with suppress(subprocess.TimeoutExpired, BrokenPipeError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()  # `serve` returns on end of input and stops the session
                self.proc.wait(timeout=STOP_DEADLINE)
        finally:
            _stop([self.proc], self.cwd)


def serve(scenarios: dict[str, Callable[..., Any]]) -> None:
    """The driver's side: run the scenarios named on stdin, print each result as JSON."""
    for line in sys.stdin:
        request = json.loads(line)
        answer: dict[str, Any] = {"scenario": request["scenario"]}
        try:
            answer["value"] = scenarios[request["scenario"]](**request["args"])
        except Exception:
            answer["error"] = traceback.format_exc()
        print("RESULT " + json.dumps(answer), flush=True)
