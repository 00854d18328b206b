"""``python -m spark_tfrecord`` is the ``spark-tfrecord`` command."""

from spark_tfrecord.cli import main

raise SystemExit(main())
