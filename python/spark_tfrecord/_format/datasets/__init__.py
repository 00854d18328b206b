"""The datasets stage: a folder as a whole (schema, info, layout, manifest, commit, TFDS)."""
