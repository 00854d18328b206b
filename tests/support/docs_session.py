"""One Python session for the Python blocks of a docs page (tests/test_docs.py).

Reads blocks as JSON lines on stdin (``{"name": ..., "code": ...}``) and runs each in one
namespace, in order, as a reader pasting them into one interpreter would; answers each with a
JSON line (``{"ok": ..., "error": ...}``) on the file descriptor given as the argument. The
blocks' own output goes to stdout and stderr, which the test sends to a log.
"""

from __future__ import annotations

import json
import os
import sys
import traceback


def main(answers_fd: int) -> None:
    answers = os.fdopen(answers_fd, "w", buffering=1)
    namespace: dict[str, object] = {"__name__": "__main__"}
    for line in sys.stdin:
        block = json.loads(line)
        try:
            exec(compile(block["code"], block["name"], "exec"), namespace)
            answer = {"ok": True, "error": ""}
        except BaseException:
            answer = {"ok": False, "error": traceback.format_exc()}
        sys.stdout.flush()
        sys.stderr.flush()
        answers.write(json.dumps(answer) + "\n")


if __name__ == "__main__":
    main(int(sys.argv[1]))
