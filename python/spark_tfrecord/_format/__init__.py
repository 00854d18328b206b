"""The TFRecord format in plain Python: framing, compression, manifests and the Example codec."""
