"""The Spark side: the session and its jars, the read and write helpers, shards, TensorFlow
Datasets folders, the converter, and the translation of Java errors (pyspark and py4j are
imported when used)."""
