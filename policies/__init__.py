"""Pure, synchronous, deterministic decision functions (filled in by the write-governance work)."""
