"""The fixtures of the suite; the project's own tests use those it ships to users
(spark_tfrecord.testing). Helpers that tests import live in the `support` package."""

from __future__ import annotations

import importlib.util
import os
from importlib.metadata import version
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

pytest_plugins = ["spark_tfrecord.testing"]

# Files of one Spark line, which the other lines' suites do not collect (nothing is skipped):
# test_old_jackson puts the class path of issue 41 first, Spark 3.5's jackson-databind with an
# older jackson-core.
collect_ignore = [] if version("pyspark").startswith("3.") else ["test_old_jackson.py"]
# test_python_source reads through the Python data source API (pyspark.sql.datasource), which
# open-source Spark 3.5 has not: detected by its module, as spark_tfrecord.register detects it.
_PYSPARK = importlib.util.find_spec("pyspark")
if _PYSPARK is None or not any(
    (Path(p) / "sql" / "datasource.py").is_file() for p in _PYSPARK.submodule_search_locations or []
):
    collect_ignore.append("test_python_source.py")
#: The files (and docs pages) that check the package's own Python code rather than the jar in a
#: given Spark: the codec, the loaders, the CLI, the docs. ci/test runs each of them in one suite
#: of its matrix, not in all (SPARK_TFRECORD_SHARE=k/n: this suite is k of n), for CI's time:
#: three suites of everything ran past 75 minutes on 2 cores. Each goes to the suite with the
#: fewest seconds dealt so far, slowest first (the seconds one run took, measured on Spark 4.3.0
#: alone on 2 cores), so that the suites end together. Every other file exercises the jar
#: through Spark (reads, writes, errors, Connect, clusters, object stores, TFDS) and runs in
#: every suite. A suite run alone (no SPARK_TFRECORD_SHARE) runs everything.
ONCE = {
    "test_docs.py[tfds.md]": 323,
    "test_docs.py[getting-started.md]": 171,
    "test_docs.py[README.md]": 150,
    "test_docs.py[types.md]": 135,
    "test_docs.py[training.md]": 70,
    "test_docs.py[tensorflow.md]": 63,
    "test_docs.py[pytorch.md]": 49,
    "test_docs.py[deployment.md]": 40,
    "test_docs.py[errors.md]": 21,
    "test_cli.py": 400,
    "test_cli_without_java.py": 30,
    "test_codec_differential.py": 120,
    "test_loader_parity.py": 90,
    "test_python_encoder.py": 120,
    "test_python_inference.py": 90,
    "test_python_decoder.py": 60,
    "test_python_layers.py": 5,
    "test_dataset_info.py": 60,
    "test_torch_dataset.py": 90,
    "test_grain_source.py": 40,
    "test_tf_dataset.py": 90,
    "test_s3_loaders.py": 90,
    "test_converter.py": 90,
}


for _unit_name in ONCE:
    assert (Path(__file__).parent / _unit_name.split("[")[0]).is_file(), f"no {_unit_name}"


def _unit(item: pytest.Item) -> str:
    """The name ONCE knows ``item`` by: its file, or for a docs page, the file and the page."""
    callspec = getattr(item, "callspec", None)
    if item.path.name == "test_docs.py" and callspec is not None:
        return f"test_docs.py[{callspec.id}]"
    return item.path.name


def _dealt(k: int, n: int) -> set[str]:
    """The ONCE units that suite ``k`` of ``n`` runs."""
    totals = [0] * n
    mine: set[str] = set()
    for unit, seconds in sorted(ONCE.items(), key=lambda kv: (-kv[1], kv[0])):
        share = totals.index(min(totals))
        totals[share] += seconds
        if share == k:
            mine.add(unit)
    return mine


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    setting = os.environ.get("SPARK_TFRECORD_SHARE")
    if not setting:
        return
    k, n = (int(x) for x in setting.split("/"))
    assert 0 <= k < n, f"SPARK_TFRECORD_SHARE is k/n with 0 <= k < n, not {setting}"
    mine = _dealt(k, n)
    kept = [i for i in items if _unit(i) not in ONCE or _unit(i) in mine]
    gone = [i for i in items if i not in kept]
    if gone:
        config.hook.pytest_deselected(items=gone)
        items[:] = kept


@pytest.fixture(scope="session")
def tf() -> object:
    import tensorflow

    return tensorflow


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """A fresh output directory path (not yet created)."""
    return tmp_path / "out"


#: Seconds per file (and docs page) in this run, setup and teardown included: printed at the
#: end, for ONCE's figures.
_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    name = report.nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    if name == "test_docs.py" and "[" in report.nodeid:
        name = f"test_docs.py[{report.nodeid.rsplit('[', 1)[1].rstrip(']')}]"
    _SECONDS[name] = _SECONDS.get(name, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _SECONDS:
        return
    terminalreporter.section("seconds per file")
    for name, seconds in sorted(_SECONDS.items(), key=lambda kv: -kv[1]):
        mark = " (ONCE)" if name in ONCE else ""
        terminalreporter.write_line(f"{seconds:8.1f}  {name}{mark}")
