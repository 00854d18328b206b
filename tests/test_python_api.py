"""The Python surface: picking jars, configuring sessions, the typed helpers, the CLI."""

from __future__ import annotations

import doctest
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import spark_tfrecord
from support import child_env, module_command
from support.tfrecord_bytes import frame


def test_jar_path_picks_the_jar_for_each_spark_line() -> None:
    v = re.escape(spark_tfrecord.__version__)
    assert re.search(rf"spark-tfrecord-spark3\.5_2\.12-{v}\.jar$", spark_tfrecord.jar_path("3.5.1"))
    assert re.search(
        rf"spark-tfrecord-spark3\.5_2\.13-{v}\.jar$",
        spark_tfrecord.jar_path("3.5.1", scala_version="2.13"),
    )
    for version in ("4.0.0", "4.1.1", "4.3.0"):
        assert re.search(
            rf"spark-tfrecord-spark4_2\.13-{v}\.jar$", spark_tfrecord.jar_path(version)
        )
    assert all(Path(spark_tfrecord.jar_path(s)).is_file() for s in ("3.5.0", "4.0.0"))


def test_jar_path_defaults_to_installed_pyspark() -> None:
    import pyspark

    assert spark_tfrecord.jar_path() == spark_tfrecord.jar_path(pyspark.__version__)


@pytest.mark.parametrize(
    "version,message",
    [
        ("3.4.1", "no jar for Spark 3.4.1: it supports Spark 3.5.x"),
        ("2.4.8", "no jar for Spark 2.4.8"),
        ("five", "Not a Spark version: 'five'"),
    ],
)
def test_jar_path_rejects_unsupported_versions(version: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        spark_tfrecord.jar_path(version)


def test_configure_takes_the_scala_version() -> None:
    from pyspark.sql import SparkSession

    v = re.escape(spark_tfrecord.__version__)
    builder = spark_tfrecord.configure(
        SparkSession.builder, spark_version="3.5.4", scala_version="2.13"
    )
    assert re.search(rf"/spark-tfrecord-spark3\.5_2\.13-{v}\.jar$", builder._options["spark.jars"])
    message = "No jar for Spark 4 with Scala 2.12: the jars for Spark 4 are built for Scala 2.13."
    with pytest.raises(ValueError, match=re.escape(message)):
        spark_tfrecord.configure(SparkSession.builder, spark_version="4.1.0", scala_version="2.12")


def test_configure_keeps_the_users_jars() -> None:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.config("spark.jars", "/opt/a.jar,/opt/b.jar")
    configured = spark_tfrecord.configure(builder)
    jars = configured._options["spark.jars"].split(",")
    assert jars == ["/opt/a.jar", "/opt/b.jar", spark_tfrecord.jar_path()]
    # Configuring twice does not add the jar twice.
    assert spark_tfrecord.configure(configured)._options["spark.jars"].split(",") == jars


def test_configure_adds_the_session_extension_once() -> None:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.config("spark.sql.extensions", "com.example.Other")
    configured = spark_tfrecord.configure(spark_tfrecord.configure(builder))
    assert configured._options["spark.sql.extensions"] == (
        "com.example.Other,io.github.sparktfrecord.TFRecordExtensions"
    )


def test_import_starts_nothing() -> None:
    result = subprocess.run(
        module_command("imported_modules", "spark_tfrecord"),
        capture_output=True,
        text=True,
        check=True,
        env=child_env(),
    )
    assert result.stdout.strip() == "[]"


def test_import_needs_no_pyspark_and_the_spark_names_load_when_used() -> None:
    """In an environment without pyspark, py4j and JPype (a trainer's), the package imports;
    the Spark side's and the loaders' names are listed, and each loads (from its module) when
    first used."""
    code = (
        "from support.imported_modules import main\n"
        "assert main('spark_tfrecord', ['pyspark', 'py4j', 'jpype']) == []\n"
        "import spark_tfrecord\n"
        "print(sorted(n for n in spark_tfrecord.__all__ if n not in vars(spark_tfrecord)))\n"
        "print('read' in dir(spark_tfrecord), spark_tfrecord.read.__module__)\n"
        "print('read' in vars(spark_tfrecord), main('spark_tfrecord'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=child_env()
    )
    assert result.stdout.splitlines() == [
        "['CACHE_DIR_CONF', 'Converter', 'EXTENSIONS', 'RecordType', 'SUPPORTED_SPARK', "
        "'SaveMode', 'ScalaVersion', 'TfdsMode', 'add_jar', 'configure', 'dataset_info', "
        "'feature_spec', 'grain_source', 'infer_schema', 'install_exception_handler', "
        "'jar_path', 'make_converter', 'read', 'read_arrow', 'read_tfds', 'register', "
        "'statistics', 'tf_dataset', 'torch_dataset', 'write', 'write_tfds']",
        "True spark_tfrecord._spark.io",
        "True []",
    ]


def test_helpers_pass_options_and_list_paths(spark, tmp_path: Path) -> None:
    for name in ("a", "b"):
        df = spark.createDataFrame([(name, True)], "name string, flag boolean")
        spark_tfrecord.write(df, str(tmp_path / name), mode="overwrite", verifyChecksums=True)
    both = spark_tfrecord.read(
        spark,
        [str(tmp_path / "a"), str(tmp_path / "b")],
        schema="name string, flag boolean",
        verifyChecksums=False,
    )
    assert sorted((r.name, r.flag) for r in both.collect()) == [("a", True), ("b", True)]


@pytest.mark.parametrize(
    "module",
    [
        "spark_tfrecord",
        "spark_tfrecord.arrow",
        "spark_tfrecord._spark.io",
        "spark_tfrecord._spark.session",
        "spark_tfrecord._spark.converter",
        "spark_tfrecord._format.columns.ddl",
        "spark_tfrecord._format.datasets.datasets",
        "spark_tfrecord._spark.tfds",
        "spark_tfrecord.errors",
        "spark_tfrecord._format.columns.encoder",
        "spark_tfrecord._format.datasets.inference",
        "spark_tfrecord._format.datasets.manifest_write",
        "spark_tfrecord._format.datasets.tfds_features",
        "spark_tfrecord._format.files.files",
        "spark_tfrecord._format.frames.compression",
        "spark_tfrecord._format.frames.record_writer",
        "spark_tfrecord._loaders.api",
        pytest.param("spark_tfrecord._loaders.spec", marks=pytest.mark.tensorflow),
        pytest.param("spark_tfrecord._loaders.tf", marks=pytest.mark.tensorflow),
    ],
)
def test_docstring_examples_run(spark, module: str) -> None:
    """The examples in the docstrings, with ``spark`` the test session (doctest prints failures)."""
    results = doctest.testmod(
        importlib.import_module(module), extraglobs={"spark": spark}, optionflags=doctest.ELLIPSIS
    )
    assert results.failed == 0 and results.attempted >= 1, results


def test_every_module_with_examples_has_them_run() -> None:
    """A docstring example no test runs goes stale unseen: every module of the package that has
    one is in a list of modules whose examples a test runs (here, test_ray's, test_statistics')."""
    root = Path(spark_tfrecord.__file__).parent
    with_examples = {
        ".".join(("spark_tfrecord", *p.relative_to(root).with_suffix("").parts)).removesuffix(
            ".__init__"
        )
        for p in root.rglob("*.py")
        if ">>> " in p.read_text(encoding="utf-8")
    }
    tests = Path(__file__).parent
    listed = "".join(
        (tests / f).read_text(encoding="utf-8")
        for f in ("test_python_api.py", "test_statistics.py")
    )
    ray_listed = (tests / "test_ray.py").read_text(encoding="utf-8")  # names in spark_tfrecord.ray
    run = {
        m
        for m in with_examples
        if f'"{m}"' in listed
        or (m.startswith("spark_tfrecord.ray.") and f'"{m.rsplit(".", 1)[1]}"' in ray_listed)
    }
    assert with_examples - run == set()
    assert len(with_examples) >= 20


def test_helpers_refuse_a_keyword_spark_would_ignore(spark, tmp_path: Path) -> None:
    df = spark.createDataFrame([(1, "a")], "id long, s string")
    out = str(tmp_path / "out")
    with pytest.raises(
        TypeError, match=r"unknown option 'partitionBy'; did you mean 'partition_by'"
    ):
        spark_tfrecord.write(df, out, partitionBy="s")
    with pytest.raises(TypeError, match=r"unknown option 'compresion'; did you mean 'compression'"):
        spark_tfrecord.write(df, out, compresion="gzip")
    with pytest.raises(TypeError, match=r"unknown option 'shema'; did you mean 'schema'"):
        spark_tfrecord.read(spark, out, shema="id long")
    assert not Path(out).exists()
    # Ours and Spark's file-source options pass, in any case.
    spark_tfrecord.write(df, out, COMPRESSION="gzip", maxRecordsPerFile=1)
    back = spark_tfrecord.read(spark, out, pathGlobFilter="*.gz", inferschemamaxfiles=-1)
    assert back.collect() == [(1, "a")]


def test_the_helpers_know_every_documented_option() -> None:
    from spark_tfrecord._spark.io import OPTIONS

    doc = (Path(__file__).resolve().parent.parent / "docs" / "options.md").read_text()
    documented = re.findall(r"^\| `([^`]+)` \|", doc, flags=re.MULTILINE)
    assert sorted(OPTIONS) == sorted(documented)


def test_the_testing_plugin_stops_the_local_jvm_before_faulthandler_lets_go(tmp_path: Path) -> None:
    """pytest's faulthandler plugin puts back, at the end of a session, the SIGSEGV handler it
    found at start-up, over the one of a JVM that spark_tfrecord.local started in the process
    meanwhile; the JVM must be stopped before that, or its stop at exit crashes the process."""
    data = tmp_path / "three.tfrecord"
    data.write_bytes(frame(b"") * 3)  # three empty Examples
    seen = tmp_path / "jvm-running-when-faulthandler-let-go"
    (tmp_path / "conftest.py").write_text(
        "import faulthandler, jpype\n"
        "pytest_plugins = ['spark_tfrecord.testing']\n"
        "_disable = faulthandler.disable\n"
        "def disable():\n"
        f"    with open({str(seen)!r}, 'a') as f:\n"
        "        f.write(str(jpype.isJVMStarted()) + '\\n')\n"
        "    _disable()\n"
        "faulthandler.disable = disable\n"
    )
    (tmp_path / "test_local.py").write_text(
        "from spark_tfrecord import local\n"
        "def test_count():\n"
        f"    assert local.count_records({str(data)!r}) == 3\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_local.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
    assert seen.read_text().split() == ["False"]


#: A child that uses spark_tfrecord.local after another library put SIGSEGV's handler (and
#: SIGFPE's and SIGILL's) back to the default, as ``ray.shutdown()`` does, then makes the JVM
#: take SIGSEGVs of its own: a Java thread in a compiled loop while another collects (each
#: collection's safepoint stops the loop at its poll, a SIGSEGV by design); and exits with the
#: handlers taken again. (Only the loop's crash is certain without the handlers given back: a
#: JVM stopped without them crashed about one pytest session in three, as a CI run's did.)
_HANDLERS_TAKEN = """
import ctypes, signal, sys, threading
import jpype
from spark_tfrecord import local
path = sys.argv[1]
assert local.count_records(path) == 3
libc = ctypes.CDLL(None)
def take():
    for taken in (signal.SIGSEGV, signal.SIGFPE, signal.SIGILL):
        libc.signal(taken, ctypes.c_void_p(0))
take()
assert local.count_records(path) == 3
LongStream = jpype.JClass("java.util.stream.LongStream")
done = threading.Event()
def collect():
    while not done.is_set():
        jpype.JClass("java.lang.System").gc()
collector = threading.Thread(target=collect)
collector.start()
print(LongStream.range(0, 300_000_000).sum(), flush=True)
done.set()
collector.join()
take()  # and JPype stops the JVM at exit
"""


@pytest.mark.skipif(sys.platform != "linux", reason="signal handlers set through glibc")
def test_the_local_jvm_gets_its_signal_handlers_back(tmp_path: Path) -> None:
    """spark_tfrecord.local puts the JVM's signal handlers back when another library took them,
    before each use and before JPype stops the JVM at exit: with the default handler the JVM
    dies of its first SIGSEGV (exit 139), which in CI was the end of a pytest session that had
    run Ray after the local JVM started."""
    data = tmp_path / "three.tfrecord"
    data.write_bytes(frame(b"") * 3)
    result = subprocess.run(
        [sys.executable, "-c", _HANDLERS_TAKEN, str(data)],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert result.stdout.split() == [str(sum(range(300_000_000)))]
