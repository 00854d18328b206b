"""The pipeline's columns stage: schema walk, type table, loaders' layout, encoder, JSON values."""
