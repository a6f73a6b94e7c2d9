"""memwarden's own API under ``/warden/v1``: audit, memories, review, plans, reports, retention,
config snapshots, explain, the store's re-embed, and ``/warden/health``."""
