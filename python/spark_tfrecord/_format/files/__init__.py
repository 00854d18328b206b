"""The pipeline's first stage, files: where the bytes are. Local and fsspec file systems
(:mod:`.files`), listing and partition folders (:mod:`.partitions`), index files
(:mod:`.index`), and the closed names of the format's options (:mod:`.names`)."""
