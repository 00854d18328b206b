"""The trainers' loaders of TFRecord folders (PyTorch, Grain, ``tf.data``) and ``feature_spec``.

Built on :mod:`spark_tfrecord._format`; never imports pyspark, py4j or JPype, so that a trainer
needs neither Spark nor a JVM. torch, grain and tensorflow are imported when a loader is made.
"""
