"""torch_dataset against the ``tfrecord`` package's loader (and Petastorm's), records/s per
worker, in one run, on the same files, every epoch checked.

    python benchmarks/loaders.py --data DIR [--records 100000] [--image-records 2000]

Spark (``local[2]``) writes two data sets under ``--data`` once, 4 files each with its index
(``write_index=True``); a later run with the same sizes reuses them:

- narrow: ``id bigint, label float, x array<float>, name string`` (32 floats, a 10-byte name),
  ``--records`` records;
- image-sized: ``id bigint, label float, image binary`` (3 KB to 100 KB of random bytes),
  ``--image-records`` records.

Then a child process with no JVM (as a trainer) reads each set, an epoch per run, batches of
256, into a loop that checks every batch (each id once per epoch; the labels, floats or image
bytes sum to what Spark computed):

- ``ours, in order`` / ``ours, shuffled``: ``spark_tfrecord.torch_dataset(DIR)`` through
  ``DataLoader(ds, batch_size=256, shuffle=False/True, collate_fn=ds.collate)``, in the
  process (``num_workers=0``: one worker);
- ``tfrecord package``: its ``TFRecordDataset(file, index, description)`` (iterable), one per
  file chained in order, through ``DataLoader(batch_size=256)`` with torch's default collate;
- narrow records only: ours in order and the package's again in batches of 4096 (issue 57's
  goals: ours at least 10x the package at 256, 20x at 4096);
- ``ours, shuffled, 1 worker`` / ``2 workers``: the DataLoader with ``num_workers=1`` and
  ``2`` (persistent workers), for how it scales;
- ``memory copy of the same bytes`` (image-sized set only): the ceiling, the files' bytes held
  in memory (read before the timing) and copied a batch of 256 records at a time into a reused
  buffer (``np.copyto``), no decoding, no checksums; ours in order is reported as a share of it;
- ``one pread and the checksums`` (image-sized set only): what bounds a checked read of
  ``bytes`` values below that ceiling, on the same spans: one ``os.pread`` of a batch's span
  from the page cache and each record's CRC32C (ours: the copy out of the files and the
  checksums it cannot skip), as a share of the copy, and ours in order as a share of it;
- ``the checksums alone`` (image-sized set only): each record's CRC32C over the files' bytes
  held in memory, nothing copied: what bounds every reader that checks the data, as a share of
  the copy.

When ``petastorm`` imports (an optional peer, never a dependency; 0.13.1 needs pyarrow's
legacy Parquet API: in an environment of its own, ``pip install petastorm "pyarrow<15"
"numpy<2" "pandas<2.2"`` beside pyspark, torch, ``tfrecord`` and this package),
``make_spark_converter(df).make_torch_dataloader(batch_size=256, num_epochs=1,
workers_count=1)``, and with ``workers_count=2`` (its reader's threads), reads the same
DataFrames (written as Parquet by the converter) in the Spark driver's process, timed against
ours there, in order, in the process and with 2 DataLoader workers. Its torch loader refuses
binary columns: on the image-sized set the run reports its error instead of a figure.

Loaders take turns in each round after a warm-up round; figures are medians of ``--repeat``
epochs; "others' cores" is the CPU other processes used meanwhile. The goals: ours at least 3x
the tfrecord package's records/s (10x and 20x on narrow records, above) and 1.2x Petastorm's,
and on image-sized records at least 70% of the memory copy.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loaderbench.data import SETS, DataSet, described, frame, write
from tfrbench.child import emit, run, script


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/loaders.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", help="the folder of the data sets (kept; required)")
    parser.add_argument("--records", type=int, default=100_000, help="narrow records")
    parser.add_argument("--image-records", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3, help="timed epochs per loader")
    parser.add_argument("--skip-petastorm", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # the data sets, as JSON
    args = parser.parse_args()
    if args.child:
        from loaderbench.measure import child

        sets = {n: DataSet(**s) for n, s in json.loads(args.child).items()}
        emit(child(sets, args.repeat))
        return 0

    if not args.data:
        parser.error("--data DIR is required")
    from pyspark.sql import SparkSession

    import spark_tfrecord

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    root = Path(args.data).resolve()
    root.mkdir(parents=True, exist_ok=True)
    spark = spark_tfrecord.configure(
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
    ).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    sets = write(spark, root, {"narrow": args.records, "image": args.image_records})

    print("the loaders, in a child process with no JVM:", flush=True)
    cmd = script("loaders", "--child", json.dumps(described(sets)), "--repeat", str(args.repeat))
    measured = run(cmd)
    peers = {}
    if args.skip_petastorm:
        print("Petastorm: left out (--skip-petastorm)")
    elif importlib.util.find_spec("petastorm") is None:
        print("Petastorm: not installed in this Python (optional): left out")
    else:
        from loaderbench.measure import beside_spark

        print("Petastorm, in the Spark driver's process:", flush=True)
        frames = {name: frame(spark, name, sets[name].records) for name in SETS}
        with tempfile.TemporaryDirectory(dir=root) as cache:
            peers = beside_spark(spark, sets, frames, cache, args.repeat)
    spark.stop()

    from loaderbench.report import lines

    print(f"versions: {measured['versions']}; {os.cpu_count()} cores")
    print("\n".join(lines(sets, measured, peers)))
    (root / "loaders-results.json").write_text(
        json.dumps({"sets": described(sets), "child": measured, "peers": peers}, indent=1)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
