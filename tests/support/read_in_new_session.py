"""Reads a path with each of several formats in a new local session with the given jars,
for test_errors_troubleshooting (whose messages need a session that lacks our jar, or has another).

``python -m support.read_in_new_session ARGS``, ARGS one JSON list: the jars, the formats,
the path. It prints, per format, the rows read or the chain of Java exceptions (class: message,
outermost first) as one JSON line.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from support import QUICK_JVM


def main(jars: list[str], formats: list[str], path: str) -> list[dict[str, Any]]:
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.extraJavaOptions", QUICK_JVM)
    )
    if jars:
        builder = builder.config("spark.jars", ",".join(jars))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    results: list[dict[str, Any]] = []
    for fmt in formats:
        try:
            rows = spark.read.format(fmt).load(path).collect()
            results.append({"rows": [list(r) for r in rows]})
        except Exception as e:
            java, chain = getattr(e, "java_exception", None), []
            while java is not None:
                chain.append(f"{java.getClass().getName()}: {java.getMessage()}")
                java = java.getCause()
            results.append({"chain": chain or [str(e)]})
    return results


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(*json.loads(sys.argv[1]))))
