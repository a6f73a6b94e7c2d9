"""The database layer: SQLite connections and the one writer thread, migrations, the audit chain,
and the repositories of the ledger's tables. The only SQL outside the self-hosted store lives here;
it imports nothing of memwarden's but ``policies``.
"""
