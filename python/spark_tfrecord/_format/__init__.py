"""The TFRecord format in plain Python, layered: files → frames → entries → columns → datasets."""
