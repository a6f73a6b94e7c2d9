"""memwarden's self-hosted memory store (SPEC §6)."""
