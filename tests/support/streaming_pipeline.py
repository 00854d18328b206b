"""The streaming query of test_streaming's exactly-once tests, and its child driver.

`start_pipeline` starts it in a given session (the tests stop it mid-batch there). Run as
``python -m support.streaming_pipeline SRC SINK CHECKPOINT HOLD_MS TRIGGER``, this module is the
driver that the test kills with SIGKILL and then restarts: it runs the query to its end and
prints the progress of its batches as one JSON line.
"""

from __future__ import annotations

import json
import sys
from typing import Any

SCHEMA = "id long, name string"
FILES, ROWS_PER_FILE = 6, 50  # input file i holds ids 100 * i up to 100 * i + ROWS_PER_FILE - 1
HELD = 3 * 100 + ROWS_PER_FILE - 1  # the last id of file 3, in batch 1 (files 2 and 3)


def start_pipeline(
    spark: Any, src: str, sink: str, checkpoint: str, hold_ms: str, trigger: str
) -> Any:
    """tfrecord files → tfrecord sink, two files a batch. The row HELD sleeps `hold_ms` on its
    way (Thread.sleep, through `reflect`): batch 1's task for file 3 waits there, while its task
    for file 2 writes its whole file. Spark's task kill interrupts the sleep."""
    sleep = f"reflect('java.lang.Thread', 'sleep', cast({int(hold_ms)} as bigint))"
    writer = (
        spark.readStream.format("tfrecord")
        .schema(SCHEMA)
        .option("maxFilesPerTrigger", 2)
        .load(src)
        .selectExpr(
            f"if(id = {HELD}, id + 0 * length(coalesce({sleep}, '')), id) as id",
            "name",
        )
        .writeStream.format("tfrecord")
        .option("checkpointLocation", checkpoint)
    )
    if trigger == "availableNow":
        writer = writer.trigger(availableNow=True)
    return writer.start(sink)


def main(args: list[str]) -> None:
    from spark_tfrecord.testing import local_session

    # A short-lived driver starts in about half the time when the JIT compiles with C1 only.
    jit = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1"}
    session = local_session(app_name="streaming-child", conf=jit)
    query = start_pipeline(session, *args)
    query.awaitTermination()
    progress = [[p["batchId"], p["numInputRows"]] for p in query.recentProgress]
    session.stop()
    print("RESULT " + json.dumps(progress), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:6])
