"""memwarden's self-hosted memory store: memwarden as the memory server, behind Hindsight's API."""
