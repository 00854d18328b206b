"""The pipeline's fourth stage, columns: a schema's columns over the entries. The schema walk
(:mod:`.schema`, :mod:`.feature_paths`), the type table (:mod:`.type_table`,
:mod:`.conversions`), the loaders' columns and batches (:mod:`.layout`, :mod:`.values`), the
encoder from columns to records (:mod:`.encoder` and its parts), and the JSON rows'
readers (``json_*``)."""
