"""The ``tfrecord`` data source with no jar: a Spark 4 Python data source
(``pyspark.sql.datasource``) on the format package, for Spark that takes no jar (Databricks
serverless, shared clusters, managed Spark Connect servers). It may import ``_format``,
``errors``, pyspark and pyarrow; never ``_spark``, ``_loaders``, ``cli``, py4j or JPype
(issue 43). Its reading core (``arrow_read``, ``arrow_schema`` and what they import) imports no
pyspark: :func:`spark_tfrecord.read_arrow` runs it with no Spark (ci/check-python-layers.py
checks that)."""
