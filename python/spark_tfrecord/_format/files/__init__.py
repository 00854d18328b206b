"""The files stage: file systems, listing, partition folders, index files, option names."""
