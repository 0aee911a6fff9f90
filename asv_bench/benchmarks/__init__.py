"""zarrx asv benchmarks, one module per area: codecs, indexing, sharding, metadata, threads."""
