"""Reading, tailing, indexing and writing DSH session logs (raw ``session.jsonl`` and zstd ``session.jsonl.zstd``)."""
