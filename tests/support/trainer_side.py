"""Runs a snippet as a trainer would: in a fresh Python with no Spark session.

``python -m support.trainer_side CODE`` executes CODE (which sets ``result``, anything JSON can
hold) and prints one JSON line: ``{"result": ..., "heavy": [...]}``, ``heavy`` being which of
pyspark, py4j and tensorflow the snippet brought in (`imported_modules`). An exception prints
``{"error": type, "message": str, "condition": ..., "parameters": ...}`` instead.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from support.imported_modules import HEAVY


def main(code: str) -> dict[str, Any]:
    scope: dict[str, Any] = {}
    try:
        exec(code, scope)
    except Exception as e:
        from spark_tfrecord import errors

        return {
            "error": type(e).__name__,
            "message": str(e),
            "condition": errors.condition(e),
            "parameters": errors.parameters(e),
            "heavy": sorted(m for m in HEAVY if m in sys.modules),
        }
    return {"result": scope["result"], "heavy": sorted(m for m in HEAVY if m in sys.modules)}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
