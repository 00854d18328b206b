"""TFRecord files on this machine without Spark: the bundled jar's decoder in a JVM via JPype.

Example (not a doctest: the JVM it starts would outlive the test)::

    from spark_tfrecord import local
    local.count_records("/data/train/part-00000.tfrecord")  # e.g. 1000
"""

from __future__ import annotations

import atexit
import ctypes
import importlib.util
import json
import signal
import sys
from pathlib import Path
from typing import Any, cast

from spark_tfrecord._spark.io import RecordType

#: The JVM's logging configuration: off (the command reports failures itself, in one line).
_LOG4J2 = Path(__file__).resolve().parent / "log4j2-cli.properties"
#: Flags of a JVM for one short command (log4j-core stays: Spark casts its root logger to it).
_JVM_FLAGS = (
    "-Xmx1g",
    "-Xshare:auto",
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-Dlog4j2.StatusLogger.level=OFF",
)
#: pyspark's jars the inspector uses, by name prefix, most used first; the others follow them
#: (spark-common-utils: and spark-common-utils-java, 4.1 and later; kryo-shaded: UTF8String is
#: KryoSerializable).
_SPARK_JARS = (
    "scala-library-", "spark-catalyst_", "spark-sql-api_", "spark-unsafe_", "spark-common-utils",
    "spark-sql_", "hadoop-client-api-", "hadoop-client-runtime-", "jackson-", "json4s-",
    "scala-reflect-", "scala-collection-compat_", "scala-parser-combinators_", "icu4j-",
    "slf4j-api-", "log4j-", "kryo-shaded-", "commons-logging-", "jcl-over-slf4j-", "paranamer-",
    "javax.servlet-api-", "jakarta.servlet-api-",
)  # fmt: skip


def _pyspark_jars() -> Path:
    """pyspark's ``jars`` folder, found without importing pyspark (slow)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("spark_tfrecord.local needs pyspark installed (its jars)")
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


def _class_path() -> list[str]:
    """The bundled jar, the jars of pyspark it uses most (:data:`_SPARK_JARS`), then the rest."""
    from spark_tfrecord._spark.session import jar_path

    jars = sorted(p.name for p in _pyspark_jars().glob("*.jar"))
    first = [n for prefix in _SPARK_JARS for n in jars if n.startswith(prefix)]
    rest = [n for n in jars if n not in set(first)]
    return [jar_path(), *(str(_pyspark_jars() / n) for n in first + rest)]


def _tools() -> Any:
    """The JVM class ``tools.TFRecordInspector`` of our jar, starting the JVM if needed."""
    import jpype

    if not jpype.isJVMStarted():
        jpype.startJVM(
            *_JVM_FLAGS,
            f"-Dlog4j2.configurationFile={_LOG4J2.as_uri()}",
            classpath=_class_path(),
            convertStrings=True,
        )
        _JVM_HANDLERS.update(_signal_actions())
        atexit.register(_give_back_handlers)  # runs before JPype's stop at exit (LIFO)
    _give_back_handlers()
    return jpype.JClass("io.github.sparktfrecord.tools.TFRecordInspector")


#: Signals the JVM must handle itself: HotSpot raises SIGSEGV by design (null checks).
_JVM_SIGNALS = ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL")
#: The JVM's ``struct sigaction`` of each, as raw bytes, read when it started.
_JVM_HANDLERS: dict[int, bytes] = {}
#: Larger than any platform's ``struct sigaction`` (152 bytes on Linux x86-64).
_SIGACTION_SIZE = 512


def _signal_actions() -> dict[int, bytes]:
    """The ``sigaction`` of each of :data:`_JVM_SIGNALS` as raw bytes ({} off Linux and macOS)."""
    if sys.platform not in ("linux", "darwin"):
        return {}
    libc = ctypes.CDLL(None, use_errno=True)
    found = {}
    for name in _JVM_SIGNALS:
        number = int(getattr(signal, name))
        action = ctypes.create_string_buffer(_SIGACTION_SIZE)
        if libc.sigaction(number, None, action) != 0:
            raise OSError(ctypes.get_errno(), f"sigaction({name}) failed")
        found[number] = action.raw
    return found


def _give_back_handlers() -> None:
    """Restore the JVM's signal handlers that others replaced (ray, faulthandler), lest it die."""
    if not _JVM_HANDLERS:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    pointer = ctypes.sizeof(ctypes.c_void_p)  # the handler: the first field on both platforms
    for number, action in _signal_actions().items():
        if action[:pointer] != _JVM_HANDLERS[number][:pointer]:
            given = ctypes.create_string_buffer(_JVM_HANDLERS[number], _SIGACTION_SIZE)
            if libc.sigaction(number, given, None) != 0:
                raise OSError(ctypes.get_errno(), f"sigaction({number}) failed")


def stop_jvm() -> None:
    """Stop this module's JVM if it runs; it cannot start again in this process (JPype)."""
    jpype = sys.modules.get("jpype")
    if jpype is not None and jpype.isJVMStarted():
        _give_back_handlers()
        jpype.shutdownJVM()


def _options(options: dict[str, str]) -> Any:
    import jpype

    return jpype.JClass("java.util.HashMap")(options)


def _paths(paths: list[str]) -> Any:
    import jpype

    return jpype.JArray(jpype.JString)(paths)


def count_records(path: str, **options: str) -> int:
    """Records in one file, checksums checked; ``options`` are the data source's read options."""
    return int(_tools().countRecords(path, _options(options)))


def tfds_schema(folder: str) -> dict[str, Any]:
    """The schema of a TFDS version folder's records, from its ``features.json``."""
    return cast("dict[str, Any]", json.loads(str(_tools().tfdsSchemaJson(folder))))


def infer_schema(
    paths: list[str], *, record_type: RecordType = "Example", **options: str
) -> dict[str, Any]:
    """The schema the data source infers, as Spark's JSON form of a ``StructType``."""
    tools = _tools()  # starts the JVM, which the arguments below need
    text = tools.inferSchemaJson(_paths(paths), _options({"recordType": record_type, **options}))
    return cast("dict[str, Any]", json.loads(str(text)))


def head(
    paths: list[str],
    schema: dict[str, Any],
    n: int,
    *,
    record_type: RecordType = "Example",
    **options: str,
) -> list[dict[str, Any]]:
    """The first ``n`` records as dicts; bytes as text when valid UTF-8, else ``0x…`` hex."""
    tools = _tools()  # starts the JVM, which the arguments below need
    java_options = _options({"recordType": record_type, **options})
    rows = tools.readRecordsJson(_paths(paths), json.dumps(schema), java_options, n)
    return [json.loads(str(r)) for r in rows]
