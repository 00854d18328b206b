"""The pipeline's last stage, datasets: a folder as a whole. Its schema and info, from a
manifest or inferred from its records (:mod:`.datasets`, :mod:`.inference`), its layout
(:mod:`.folders`), writing its manifest (:mod:`.manifest_write`) and committing a write into it
(:mod:`.commit`), TFDS folders (:mod:`.tfds_dataset`, :mod:`.tfds_features`), and ``inspect``'s
rows (:mod:`.json_rows`)."""
