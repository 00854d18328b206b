"""Every command and code block of README.md and docs/*.md runs as written, twice in a row.

A page runs as one reader's session would, in a fresh working directory (holding a copy of
`examples/`, as a clone does): its Python blocks in one Python process, in order, in one
namespace (tests/support/docs_session.py); its bash and sh blocks with bash (`-e`: every command
must succeed), with this environment's bin folder first on PATH, so that `python`,
`spark-tfrecord` and `spark-shell` are this environment's; its Scala blocks in pyspark's
spark-shell: the one the bash block right before starts, else one started with the jar and the
session extension. Then the whole page runs again in the same folder: a page must be runnable
twice (overwrite modes, or paths it cleans itself). For CI's time, ci/test runs each page in one
suite of its matrix (tests/conftest.py, ONCE), once (`SPARK_TFRECORD_DOCS_RUNS`).

The blocks run as the page writes them: a page that needs data makes it in an earlier block.
Blocks that are not commands (output, properties, schemas) are tagged ```text and not run. A
block that cannot run on this machine carries, right above it,
`<!-- docs-test: not run: <reason> -->`: those are listed in the test output and must be exactly
MARKED below, so that a new one is a decision made here too.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import IO, Callable

import pytest

import spark_tfrecord
from support import TESTS

ROOT = TESTS.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUNNABLE = {"python", "bash", "sh", "scala"}
NOT_COMMANDS = {"text"}
MARKER = re.compile(r"<!-- docs-test: not run: (.+?) -->")
FENCE = re.compile(r"^```(\S*)\s*$")

#: The blocks not run, by page and the first line of their code: each has a marker in the page
#: saying why. Keep this list as short as the docs allow.
MARKED = {
    ("README.md", "ci/quickstart   # build jars + wheel"),
    ("arrow.md", "import duckdb"),
    ("README.md", "python -m build           # sdist, then the wheel from it"),
    ("benchmarks.md", "benchmarks/run.py --peers-python"),
    ("benchmarks.md", "ci/bench --peers --linkedin-source PATH"),
    ("benchmarks.md", "git worktree add /tmp/before 4955d65"),
    ("benchmarks.md", "python benchmarks/loaders.py --data .cache/bench-loaders"),
    ("getting-started.md", "pip install spark-tfrecord"),
    ("pytorch.md", "spark-tfrecord index s3a://bucket/train --master yarn"),
    ("pytorch.md", "from nvidia.dali import fn, pipeline_def"),
    ("pytorch.md", "ds = spark_tfrecord.torch_dataset("),
}


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # of the opening fence
    language: str
    code: str
    not_run: str | None  # the marker's reason

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def first_line(self) -> str:
        return self.code.splitlines()[0] if self.code else ""


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, with the marker in the comment lines right above each."""
    lines = page.read_text().splitlines()
    found = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        above = i - 1
        reason = None
        while above >= 0 and lines[above].startswith("<!--"):
            marker = MARKER.search(lines[above])
            if marker:
                reason = marker.group(1)
            above -= 1
        code = "\n".join(lines[i + 1 : end]) + "\n"
        found.append(Block(page.name, i + 1, fence.group(1), code, reason))
        i = end + 1
    return found


ALL = [b for page in PAGES for b in blocks(page)]


def test_benchmarks_page_is_rendered_from_its_results(tmp_path: Path) -> None:
    """docs/benchmarks.md is generated: `benchmarks/run.py --page` renders it again from the
    results it shows (benchmarks/results.json), by benchmarks/page.toml and page.md, to the
    byte. So its figures are data, and an edit made to the page alone fails here."""
    results = ROOT / "benchmarks" / "results.json"
    command = [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--page"]
    command += ["--results", str(results), "--docs", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rendered = (tmp_path / "benchmarks.md").read_text()
    assert rendered == (ROOT / "docs" / "benchmarks.md").read_text()


def test_the_benchmarks_page_names_no_folder_of_the_machine_that_ran_it() -> None:
    """The page's command line and its previous page's results file are shown relative to the
    repository (tfrbench.data.in_repository), whatever machine ran them."""
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    command = next(line for line in page.splitlines() if line.startswith("benchmarks/run.py"))
    previous = next(line for line in page.splitlines() if line.startswith("| previous page |"))
    for line in (command, previous):
        assert not [w for w in re.split(r"[\s`=]+", line) if w.startswith("/")], line
    code = (
        "import sys, json; sys.path.insert(0, 'benchmarks'); from tfrbench.data import "
        "in_repository as r; print(json.dumps([r(a) for a in sys.argv[1:]]))"
    )
    given = [str(ROOT / "benchmarks" / "results.json"), f"--previous={ROOT}/x.json", "/else/y"]
    done = subprocess.run(
        [sys.executable, "-c", code, *given], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["benchmarks/results.json", "--previous=x.json", "/else/y"]


#: A ratio as the README and the benchmarks page write it: 1.9x, 12.76x, 4,267x.
RATIO = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)x\b")


def test_readme_speed_figures_are_the_benchmarks_pages() -> None:
    """The README's speed figures (its **Fast** point) are ratios shown on docs/benchmarks.md,
    rounded half up to the digits the README gives. A page published without them, or a figure
    written from memory, fails here."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index("- **Fast**")
    fast = readme[start : readme.index("\n- **", start)]
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    shown = {Decimal(r.replace(",", "")) for r in RATIO.findall(page)}
    quoted = RATIO.findall(fast)
    assert len(quoted) >= 10, quoted
    for figure in quoted:
        value = Decimal(figure.replace(",", ""))
        step = Decimal(1).scaleb(-len(figure.partition(".")[2]))
        rounded = {s.quantize(step, rounding=ROUND_HALF_UP) for s in shown}
        assert value in rounded, f"README quotes {figure}x, which docs/benchmarks.md does not show"


def test_every_block_is_tagged_and_every_marker_is_listed(capsys: pytest.CaptureFixture) -> None:
    """Each block has a language, runnable or `text`; the markers are exactly MARKED, and are
    printed as a table in the test output."""
    untagged = [b.name for b in ALL if b.language not in RUNNABLE | NOT_COMMANDS]
    assert untagged == [], "blocks without a known language (python, bash, sh, scala, text)"
    marked_text = [b.name for b in ALL if b.not_run and b.language not in RUNNABLE]
    assert marked_text == [], "a not-run marker above a block that is not a command"
    marked = [b for b in ALL if b.not_run]
    width = max(len(b.name) for b in marked)
    table = "\n".join(f"  {b.name:<{width}}  {b.first_line[:40]:<40}  {b.not_run}" for b in marked)
    with capsys.disabled():
        print(f"\ndocs blocks not run ({len(marked)} of {len(ALL)}):\n{table}")

    def listed(page: str, first_line: str) -> bool:
        return any(page == p and first_line.startswith(prefix) for p, prefix in MARKED)

    unlisted = [b.name for b in marked if not listed(b.page, b.first_line)]
    assert unlisted == [], "markers not in MARKED"
    gone = [
        m
        for m in MARKED
        if not any(b.page == m[0] and b.first_line.startswith(m[1]) for b in marked)
    ]
    assert gone == [], "MARKED blocks without a marker"


@dataclass
class Ran:
    """What a run of a page did: each block's output (stdout), in order."""

    blocks: list[tuple[Block, str]]
    seconds: dict[str, float]  # by block name; a spark-shell's under its Scala block

    def output(self, containing: str) -> str:
        """The output of the one block whose code contains the text."""
        (found,) = [out for block, out in self.blocks if containing in block.code]
        return found


class PythonSession:
    """The page's Python process (tests/support/docs_session.py), started at its first block."""

    def __init__(self, cwd: Path, env: dict[str, str], log: IO[str]) -> None:
        read, write = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "support.docs_session", str(write)],
            cwd=cwd,
            env={
                **env,
                "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH")])),
            },
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            pass_fds=[write],
        )
        os.close(write)
        self.answers = os.fdopen(read)

    def run(self, block: Block) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"name": block.name, "code": block.code}) + "\n")
        self.process.stdin.flush()
        line = self.answers.readline()
        assert line, f"{block.name}: the Python session ended (exit {self.process.wait()})"
        answer = json.loads(line)
        return "" if answer["ok"] else answer["error"]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=300)
        self.answers.close()


def spark_shell_failure(output: str) -> str:
    """The REPL's compile errors and uncaught exceptions in a spark-shell transcript."""
    bad = [
        line
        for line in output.splitlines()
        if re.match(r"^(scala> )?(<console>:\d+: )?error:", line)
        or re.match(r"^(scala> )?[\w.$]+(Exception|Error)(: |$)", line)
    ]
    return "\n".join(bad)


def starts_spark_shell(block: Block) -> bool:
    return block.language in ("bash", "sh") and block.code.lstrip().startswith("spark-shell ")


def run_page(page: Path, cwd: Path, env: dict[str, str]) -> Ran:
    """Runs every block of the page not marked, in order; fails at the first that fails."""
    todo = [b for b in blocks(page) if b.language in RUNNABLE and not b.not_run]
    outputs: dict[str, str] = {}
    seconds: dict[str, float] = {}
    log_path = cwd.parent / f"{page.stem}-python.log"
    with open(log_path, "a") as log:
        session: PythonSession | None = None
        try:
            i = 0
            while i < len(todo):
                block = todo[i]
                started = time.monotonic()
                if block.language == "python":
                    if session is None:
                        session = PythonSession(cwd, env, log)
                    start = log_path.stat().st_size
                    error = session.run(block)
                    log.flush()
                    with open(log_path) as read:
                        read.seek(start)
                        outputs[block.name] = read.read()
                    assert error == "", (
                        f"{block.name} failed:\n{error}\n{outputs[block.name][-3000:]}"
                    )
                    seconds[block.name] = time.monotonic() - started
                    i += 1
                    continue
                shell_input = None
                if block.language == "scala":
                    command = default_spark_shell()
                    shell_input, ran = block.code, [block]
                else:
                    command = ["bash", "-e", "-o", "pipefail", "-c", block.code]
                    ran = [block]
                    if (
                        starts_spark_shell(block)
                        and i + 1 < len(todo)
                        and todo[i + 1].language == "scala"
                    ):
                        shell_input, ran = todo[i + 1].code, [block, todo[i + 1]]
                done = subprocess.run(
                    command,
                    cwd=cwd,
                    env=env,
                    input=shell_input or "",
                    capture_output=True,
                    text=True,
                    timeout=900,
                )
                output = done.stdout + done.stderr
                for b in ran:
                    outputs[b.name] = done.stdout
                failure = spark_shell_failure(done.stdout) if shell_input is not None else ""
                assert done.returncode == 0 and not failure, (
                    f"{ran[-1].name} failed (exit {done.returncode}):\n{failure}\n{output[-5000:]}"
                )
                seconds[ran[-1].name] = time.monotonic() - started
                i += len(ran)
        finally:
            if session is not None:
                session.close()
    assert sorted(outputs) == sorted(b.name for b in todo)  # every block not marked ran
    return Ran([(b, outputs[b.name]) for b in todo], seconds)


def default_spark_shell() -> list[str]:
    """A spark-shell with the jar for this pyspark and the session extension, for a Scala block
    whose page says `spark-shell --jars …` in prose."""
    return [
        "spark-shell",
        "--master",
        "local[2]",
        "--jars",
        spark_tfrecord.jar_path(),
        "--conf",
        f"spark.sql.extensions={spark_tfrecord.EXTENSIONS}",
    ]


def page_env() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")])}


def table(output: str) -> list[list[str]]:
    """The cells of the rows of the DataFrame.show() tables in an output."""
    return [
        [cell.strip() for cell in line.split("|")[1:-1]]
        for line in output.splitlines()
        if line.startswith("|")
    ]


def check_readme(ran: Ran, cwd: Path) -> None:
    shown = table(ran.output('.toDF("id", "lang", "x")'))
    assert shown[0] == ["id", "x", "lang"] and sorted(shown[1:]) == [
        ["1", "[0.5, 1.5]", "a"],
        ["2", "[2.5]", "b"],
    ], shown
    assert sorted(p.name for p in (cwd / "out" / "people").iterdir() if p.is_dir()) == [
        "country=CN",
        "country=GB",
        "country=RU",
        "country=US",
    ]


def check_getting_started(ran: Ran, cwd: Path) -> None:
    shown = table(ran.output("train.show()"))
    assert shown[0] == ["id", "embedding", "tokens", "lang"], shown
    assert sorted(shown[1:]) == [["1", "[0.1, 0.2]", "[a, b]", "en"], ["2", "[0.3]", "[]", "fr"]]
    copies = sorted(p for p in (cwd / "train-gzip").iterdir() if p.name.startswith("part-r-"))
    assert copies and all(gzip.decompress(p.read_bytes()) for p in copies), copies
    assert "1 passed" in ran.output("pytest_plugins"), ran.output("pytest_plugins")
    shown = table(ran.output("toDF"))
    assert sorted(shown[1:]) == [["1", "[0.5, 1.5]", "a"], ["2", "[2.5]", "b"]], shown


def check_errors(ran: Ran, cwd: Path) -> None:
    printed = ran.output("errors.matches").split("\n")
    (line,) = [p for p in printed if p.startswith("TFRECORD_CORRUPT_RECORD.")]
    assert line.startswith("TFRECORD_CORRUPT_RECORD.TRUNCATED file:"), line
    assert f"{cwd}/damaged/part-" in line, line


def check_types(ran: Ran, cwd: Path) -> None:
    assert table(ran.output('option("inferNesting", "true")')) == [["height"], ["480"]]


def check_deployment(ran: Ran, cwd: Path) -> None:
    printed = ran.output('torch_dataset("gs://my-bucket/train"').splitlines()
    assert "10000 (256, 2) torch.float32" in printed, printed


def check_training(ran: Ran, cwd: Path) -> None:
    """What the page's comments say its prints give (its output holds TensorFlow's log too)."""

    def lines(containing: str) -> list[str]:
        return ran.output(containing).splitlines()

    assert "(32, 3)" in lines("by_hand = ")
    assert "32 (None, 3) (None,)" in lines("ds.element_spec")
    printed = lines("shard=(i, 3)")
    assert [p for p in printed if p in ("16", "[11, 11, 11]", "999")] == [
        "16",
        "[11, 11, 11]",
        "999",
    ], printed
    tfx = lines('tfx_split="eval"')
    assert "['data_tfrecord-00000-of-00002.gz', 'data_tfrecord-00001-of-00002.gz']" in tfx, tfx
    assert "1000" in tfx, tfx


def check_no_jar(ran: Ran, cwd: Path) -> None:
    """The session has no jar: the rows come from the Python data source, which Spark plans as a
    Python scan, refuses partitionBy and mode errorifexists for, and which refuses shardPrefix
    with the jar's condition."""
    shown = table(ran.output('train.orderBy("id").show()'))
    assert shown == [
        ["id", "lang", "embedding", "tokens"],
        ["1", "en", "[0.1, 0.2]", "[a, b]"],
        ["2", "fr", "[0.3]", "[]"],
    ], shown
    french = ran.output("french.explain()")
    assert table(french) == [["id", "lang"], ["2", "fr"]], french
    assert "BatchScan tfrecord[" in french and "(Python)" in french, french
    refused = ran.output("def refusal")
    assert "requirement failed: The provided partitioning or clustering columns" in refused
    assert '[UNSUPPORTED_DATA_SOURCE_SAVE_MODE] The data source "tfrecord"' in refused
    assert "TFRECORD_INVALID_OPTION" in refused, refused
    assert table(refused) == [
        ["id", "embedding", "tokens", "lang"],
        ["1", "[0.1, 0.2]", "[a, b]", "en"],
        ["2", "[0.3]", "[]", "fr"],
    ]


CHECKS: dict[str, Callable[[Ran, Path], None]] = {
    "README.md": check_readme,
    "getting-started.md": check_getting_started,
    "errors.md": check_errors,
    "deployment.md": check_deployment,
    "types.md": check_types,
    "training.md": check_training,
    "no-jar.md": check_no_jar,
}
RUNNABLE_PAGES = [
    p for p in PAGES if any(b.language in RUNNABLE and not b.not_run for b in blocks(p))
]


#: The pages, slowest first (seconds a run took in CI): how ci/test deals their second runs.
SLOWEST_FIRST = [
    "README.md",  # 175
    "getting-started.md",  # 165
    "tfds.md",  # 165
    "pytorch.md",  # 75
    "types.md",  # 65
    "training.md",  # 45
    "deployment.md",  # 35
    "tensorflow.md",  # 30
    "errors.md",  # 25
]


def _runs(page: str, setting: str) -> int:
    """How many times ``page`` runs in a row. SPARK_TFRECORD_DOCS_RUNS is 1, 2 (the default),
    or ``k/n``: ci/test's n suites, one per Spark of its matrix, each run every page once, and
    suite k runs twice the pages dealt to it round robin from the slowest (the second run
    checks the page, not Spark): every page runs twice in CI, and no suite waits for the
    others' second runs."""
    if setting in ("1", "2"):
        return int(setting)
    k, n = (int(x) for x in setting.split("/"))
    order = SLOWEST_FIRST + sorted(p.name for p in PAGES if p.name not in SLOWEST_FIRST)
    return 2 if order.index(page) % n == k else 1


RUNS_SETTING = os.environ.get("SPARK_TFRECORD_DOCS_RUNS", "2")
assert re.fullmatch(r"[12]|\d+/\d+", RUNS_SETTING), (
    f"SPARK_TFRECORD_DOCS_RUNS is 1, 2 or k/n, not {RUNS_SETTING}"
)


@contextmanager
def cloud_storage_as_on_dataproc(folder: Path) -> Iterator[dict[str, str]]:
    """deployment.md's environment: a Cloud Storage server (fake-gcs-server on 127.0.0.1, with
    the bucket ``my-bucket``) that gs:// reaches as on a Dataproc cluster, whose image puts
    Google's connector on Spark's class path and its settings in spark-defaults.conf (here
    pointing at the server), and that gcsfs reaches through ``STORAGE_EMULATOR_HOST``."""
    from support.gcs_server import gcs_bucket, gcs_conf, gcs_jar

    jar = gcs_jar()
    with gcs_bucket(folder / "gcs.log", "my-bucket") as gcs:
        conf = folder / "spark-conf"
        conf.mkdir(exist_ok=True)
        suite = Path(os.environ.get("SPARK_CONF_DIR", TESTS / "spark-conf"), "spark-defaults.conf")
        lines = [suite.read_text() if suite.is_file() else ""]
        lines += [f"spark.driver.extraClassPath {jar}", f"spark.executor.extraClassPath {jar}"]
        lines += [f"{key} {value}" for key, value in gcs_conf(gcs.endpoint).items()]
        (conf / "spark-defaults.conf").write_text("\n".join(lines) + "\n")
        yield {"SPARK_CONF_DIR": str(conf), "STORAGE_EMULATOR_HOST": gcs.endpoint}


#: What a page needs around it, as its readers have it: the servers it talks to.
ENVIRONMENTS: dict[str, Callable[[Path], AbstractContextManager[dict[str, str]]]] = {
    "deployment.md": cloud_storage_as_on_dataproc,
}


@pytest.mark.parametrize("page", RUNNABLE_PAGES, ids=[p.name for p in RUNNABLE_PAGES])
def test_page_runs_twice(page: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The page's blocks run in order in a fresh folder, then all again in the same folder
    (once only where ``SPARK_TFRECORD_DOCS_RUNS`` says so)."""
    cwd = tmp_path / "work"
    shutil.copytree(ROOT / "examples", cwd / "examples")
    around = ENVIRONMENTS.get(page.name, lambda _: nullcontext({}))
    with around(tmp_path) as extra:
        for run in range(1, _runs(page.name, RUNS_SETTING) + 1):
            ran = run_page(page, cwd, {**page_env(), **extra})
            if page.name in CHECKS:
                CHECKS[page.name](ran, cwd)
            times = ", ".join(f"{name.split(':')[1]} {s:.0f}s" for name, s in ran.seconds.items())
            with capsys.disabled():
                total = sum(ran.seconds.values())
                print(f"\n{page.name} run {run}: {total:.0f}s (by line: {times})")
