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


def run(
    code: str, env: dict[str, str] | None = None, timeout: float | None = None
) -> dict[str, Any]:
    """Runs ``code`` in a fresh Python (this module as ``python -m``, the suite's child
    environment plus ``env``) and returns its JSON line; fails with its stderr if it fails."""
    import subprocess

    from support import child_env, module_command

    done = subprocess.run(
        module_command("trainer_side", code),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(env),
    )
    assert done.returncode == 0, done.stderr[-5000:]
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


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
