"""Stage three, entries: decoding the ``Example`` / ``SequenceExample`` inside a frame."""
