"""`engram eval`: retrieval quality on public long-conversation benchmarks, through the normal write and
recall paths (SPEC 11)."""
