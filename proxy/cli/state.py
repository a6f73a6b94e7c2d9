"""``memwarden migrate-state``: move an installation's state to PostgreSQL, or back to SQLite
(``db/state_transfer.py`` does the copy and its checks)."""

from __future__ import annotations

from pathlib import Path

import click

from memwarden.proxy.cli.common import CONFIG_FILE_OPTION, settings
from memwarden.proxy.cli.offline import database_url

TO_ENV = "MEMWARDEN_MIGRATE_STATE_TO"


@click.command("migrate-state")
@CONFIG_FILE_OPTION
@click.option(
    "--data-dir", type=click.Path(path_type=Path), help="The installation's data directory (its installation.key)."
)
@click.option(
    "--to",
    "to",
    required=True,
    envvar=TO_ENV,
    help=f"postgresql://user@host/database (no password here: PGPASSWORD, ~/.pgpass or {TO_ENV}), or"
    " 'sqlite': memwarden.db in the data directory.",
)
@click.pass_context
def migrate_state_command(ctx: click.Context, config: Path | None, data_dir: Path | None, to: str) -> None:
    """Copy memwarden's state — ledger, audit chain, outbox, keys, snapshots, plans, reports, Mem0
    events and, self-hosted (backend = "local"), the store's banks with their memories and vectors —
    from the database the settings name (the data directory's SQLite file, or database.url) to
    another: all or nothing, checked (each table's rows, the audit chain's head and its
    verification, the vectors and the full-text index). Stop every instance first. The source is
    left as it was (a backup); both chains record the move. Then point the settings at the target
    and start memwarden.

    \b
    Examples:
        memwarden migrate-state --data-dir ./memwarden-data --to postgresql://memwarden@db.internal/memwarden
        MEMWARDEN_DATABASE__URL=postgresql://memwarden@db.internal/memwarden \\
            memwarden migrate-state --data-dir ./memwarden-data --to sqlite
    """
    from memwarden.db.installation import read_installation_key, recorded_chain_start
    from memwarden.db.state_transfer import Location, TransferError, migrate_state

    resolved = settings(config, {"data_dir": str(data_dir)} if data_dir else {})
    directory = resolved.data_dir
    source = Location(directory, database_url(resolved))
    target = Location(directory, _target_url(ctx, to))
    more = None
    try:  # a self-hosted store's banks move with it (when the source holds any, whatever the settings say)
        from memwarden.store.state_move import StoreTables

        more = StoreTables()
    except ImportError:  # no store installed (pip install memwarden without [local]): none to move
        pass
    try:
        moved = migrate_state(
            source,
            target,
            installation_key=read_installation_key(directory),
            recorded=recorded_chain_start(directory),
            checkpoint_dir=resolved.audit.checkpoint_dir or directory / "checkpoints",
            more=more,
        )
    except TransferError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"copied memwarden's state from {source.name} to {target.name}:")
    width = max(len(t) for t in moved.counts)
    for table, rows in moved.counts.items():
        click.echo(f"  {table:<{width}}  {rows:>9,}")
    if moved.head is not None:
        click.echo(f"audit chain: head at event {moved.head[0]} ({moved.head[1][:16]}…), the same on both sides")
    for problem in moved.problems:
        click.echo(f"carried over as it was on the source: {problem}", err=True)
    if not moved.source_recorded:
        click.echo("the source's audit chain could not record the move (the target's did)", err=True)
    if target.url is not None:
        click.echo(
            "next: set database.url to the target (MEMWARDEN_DATABASE__URL; the same installation.key in every"
            " instance's data directory) and start memwarden; the source is left as it was (its audit chain notes the"
            " move): keep it as a backup"
        )
    else:
        click.echo(
            "next: remove database.url from the settings and start memwarden on this data directory;"
            " the PostgreSQL database is left as it was (its audit chain notes the move): keep it as a backup"
        )


def _target_url(ctx: click.Context, to: str) -> str | None:
    """The target's URL (None: SQLite in the data directory); a password given on the command line refused."""
    if to.strip().lower() == "sqlite":
        return None
    try:
        from memwarden.db.postgres import is_postgres_url, passwords
    except ImportError:
        raise click.ClickException("PostgreSQL needs psycopg: pip install 'memwarden[postgresql]'") from None
    if not is_postgres_url(to):
        raise click.BadParameter("a postgresql://… URL, or 'sqlite'", param_hint="--to")
    if passwords(to) and ctx.get_parameter_source("to") == click.core.ParameterSource.COMMANDLINE:
        raise click.UsageError(
            "--to carries a password, which every user of this machine can read on the command line;"
            f" give the URL in {TO_ENV}, or the password in PGPASSWORD or ~/.pgpass"
        )
    return to
