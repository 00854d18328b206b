"""The jar-less ``tfrecord`` data source: a Spark 4 Python data source on the format package.
Never imports ``_spark``, ``_loaders``, ``cli``, py4j or JPype (issue 43); its reading core
(``arrow_read``, ``arrow_schema``) imports no pyspark, for :func:`spark_tfrecord.read_arrow`.
"""
