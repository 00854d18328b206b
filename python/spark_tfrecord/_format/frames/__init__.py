"""Stage two, frames: TFRecord framing and CRC32C, compression, records, the manifest."""
