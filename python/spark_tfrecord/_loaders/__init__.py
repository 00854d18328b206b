"""Trainers' loaders (PyTorch, Grain, ``tf.data``) and ``feature_spec``: no pyspark, no JVM."""
