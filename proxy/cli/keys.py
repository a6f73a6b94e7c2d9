"""``memwarden keys``: API keys — make one (its token shown once), list them, revoke one.

Against a running memwarden (``--url``; the caller's own key in ``MEMWARDEN_API_KEY``), or directly
in a data directory (``--data-dir``: before the first start, to make the first key; a server running
on it sees the change within a second).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memwarden.proxy.cli.client import URL_OPTION, Client
from memwarden.proxy.cli.common import CONFIG_OPTION, JSON_OPTION, echo_json

DATA_DIR = click.option(
    "--data-dir", type=click.Path(path_type=Path), help="Change this data directory directly (no server needed)."
)
CLI_ACTOR = "cli"


def _line(key: dict[str, Any]) -> str:
    scopes = key["scopes"]
    granted = "; ".join(f"{level} {', '.join(scopes[level])}" for level in ("read", "write", "admin") if scopes[level])
    state = f"revoked {key['revoked_at'][:19]}" if key["revoked_at"] else "usable"
    if key["expires_at"] and not key["revoked_at"]:
        state += f" until {key['expires_at'][:19]}"
    return f"{key['id']}  {key['name']:<20} {state:<28} {granted}"


def _offline(config: Path | None, directory: Path, work: Any) -> Any:
    """Run ``work(ledger)`` on the data directory's database, as the actor ``cli``."""
    from memwarden.db.audit import ACTOR
    from memwarden.db.database import DatabaseError
    from memwarden.proxy.app import open_ledger
    from memwarden.proxy.cli.common import settings

    try:
        ledger = open_ledger(settings(config, {"data_dir": str(directory)}))
    except DatabaseError as exc:
        raise click.ClickException(str(exc)) from None
    acting = ACTOR.set(CLI_ACTOR)
    try:
        return work(ledger)
    finally:
        ACTOR.reset(acting)
        ledger.close()


@click.group("keys")
def keys_group() -> None:
    """API keys: who may read, write and administer which banks."""


@keys_group.command("create")
@click.option("--name", required=True, help="What the key is for (an agent, a team, a job).")
@click.option("--read", "read", multiple=True, metavar="PATTERN", help="Banks it may read ('*' any run). Repeatable.")
@click.option("--write", "write", multiple=True, metavar="PATTERN", help="Banks it may write (and read). Repeatable.")
@click.option(
    "--admin", "admin", multiple=True, metavar="PATTERN", help="Banks it may administer (and write). Repeatable."
)
@click.option("--expires-in-days", type=float, help="The key stops working after this many days.")
@URL_OPTION
@DATA_DIR
@CONFIG_OPTION
@JSON_OPTION
def keys_create(
    name: str,
    read: tuple[str, ...],
    write: tuple[str, ...],
    admin: tuple[str, ...],
    expires_in_days: float | None,
    url: str,
    data_dir: Path | None,
    config: Path | None,
    as_json: bool,
) -> None:
    """Make a key; its token is printed once — keep it, memwarden stores only its hash.

    \b
    Examples:
        memwarden keys create --data-dir ./memwarden-data --name ops --admin '*'
        memwarden keys create --name agent-a --write 'agent-a' --read 'team-*'
    """
    if data_dir is not None:
        from memwarden.governance.errors import Refused
        from memwarden.governance.keys import prepare

        try:
            key = prepare(
                name=name, read=list(read), write=list(write), admin=list(admin), expires_in_days=expires_in_days
            )
        except Refused as exc:
            raise click.ClickException(exc.detail) from None
        record = _offline(config, data_dir, lambda ledger: ledger.write_sync(key.insert))
        made = {**record.public(), "token": key.token.token}
    else:
        body: dict[str, Any] = {"name": name, "read": list(read), "write": list(write), "admin": list(admin)}
        if expires_in_days is not None:
            body["expires_in_days"] = expires_in_days
        made = Client(url).call("POST", "keys", json=body, expect=201)
    if as_json:
        echo_json(made)
        return
    click.echo(_line(made))
    click.echo(f"token (shown once): {made['token']}")


@keys_group.command("list")
@URL_OPTION
@DATA_DIR
@CONFIG_OPTION
@JSON_OPTION
def keys_list(url: str, data_dir: Path | None, config: Path | None, as_json: bool) -> None:
    """Every key, revoked ones too (never a token)."""
    if data_dir is not None:
        from memwarden.db.keys import all_keys

        items = [k.public() for k in _offline(config, data_dir, lambda ledger: ledger.read_sync(all_keys))]
    else:
        items = Client(url).call("GET", "keys")["items"]
    if as_json:
        echo_json({"items": items, "total": len(items)})
        return
    if not items:
        click.echo("no keys: memwarden serves without keys (loopback only)")
    for key in items:
        click.echo(_line(key))


@keys_group.command("revoke")
@click.argument("key_id")
@click.option("--reason", help="Why (kept in the audit log).")
@URL_OPTION
@DATA_DIR
@CONFIG_OPTION
@JSON_OPTION
def keys_revoke(
    key_id: str, reason: str | None, url: str, data_dir: Path | None, config: Path | None, as_json: bool
) -> None:
    """Revoke a key: it stops working at once (a server on --data-dir: within a second)."""
    if data_dir is not None:
        from memwarden.db.keys import revoke_key

        record = _offline(
            config, data_dir, lambda ledger: ledger.write_sync(lambda db: revoke_key(db, key_id, reason=reason))
        )
        if record is None:
            raise click.ClickException(f"no key {key_id!r}")
        revoked = record.public()
    else:
        revoked = Client(url).call("DELETE", "keys", key_id, params={"reason": reason} if reason else None)
    if as_json:
        echo_json(revoked)
        return
    click.echo(_line(revoked))
