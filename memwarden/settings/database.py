"""The ``[database]`` section: where memwarden keeps its own state (SQLite in the data folder, or
PostgreSQL shared by several instances)."""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator

from memwarden.settings.sections import _Section


class DatabaseSettings(_Section):
    """Where memwarden keeps its own state (ledger, audit chain, outbox, keys, snapshots, plans)."""

    url: SecretStr | None = Field(
        None,
        description="postgresql://user:password@host:port/database puts memwarden's state on PostgreSQL, shared by"
        " every instance given the same URL (each with the same installation.key). Unset: SQLite in the data"
        " folder (one machine, zero configuration).",
    )
    pool_size: int = Field(
        32,
        ge=2,
        le=1000,
        description="On PostgreSQL: connections each instance keeps for its banks' shared locks (a governed write"
        " holds one for its span; more writes in flight wait for one, within config_guard.write_wait) — and a"
        " quarter as many (at least 2) for config changes and destructive operations, one each while it runs.",
    )

    @field_validator("url")
    @classmethod
    def _postgres_only(cls, v: SecretStr | None) -> SecretStr | None:
        if v is None or not v.get_secret_value():
            return None
        scheme = v.get_secret_value().split("://", 1)[0].lower()
        if scheme not in ("postgresql", "postgres"):
            raise ValueError("must be a postgresql:// URL (SQLite, the default, needs none)")
        return v
