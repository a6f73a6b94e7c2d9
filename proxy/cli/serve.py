"""``memwarden serve``: the server."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memwarden.proxy.cli.common import CONFIG_FILE_OPTION, settings

if TYPE_CHECKING:
    from memwarden.db.database import Database
    from memwarden.settings import Settings


@click.command()
@CONFIG_FILE_OPTION
@click.option("--host", help="Address to listen on [default: 127.0.0.1].")
@click.option("--port", type=int, help="Port to listen on [default: 8890].")
@click.option("--data-dir", type=click.Path(path_type=Path), help="Data directory [default: ./memwarden-data].")
@click.option(
    "--upstream",
    help="Govern the Hindsight server at this URL, Mem0's REST server at mem0+http://host:port, or Mem0's"
    " platform API at mem0-platform+https://host (no config file needed).",
)
@click.option(
    "--database-url",
    help="Keep memwarden's state on PostgreSQL (postgresql://user@host/db; database.url). No password here:"
    " a command line is visible to every user — give it in MEMWARDEN_DATABASE__URL, PGPASSWORD or ~/.pgpass.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Processes serving the port, each an instance over the shared state (needs database.url: PostgreSQL).",
)
@click.option(
    "--allow-unauthenticated",
    is_flag=True,
    default=None,
    help="Serve an address other than loopback while no API key exists (server.allow_unauthenticated).",
)
def serve(
    config: Path | None,
    host: str | None,
    port: int | None,
    data_dir: Path | None,
    upstream: str | None,
    database_url: str | None,
    workers: int,
    allow_unauthenticated: bool | None,
) -> None:
    """Run the memwarden server: with no backend configured, memwarden is the memory server itself
    (Hindsight's API on its own store in the data directory); with --upstream, it governs a Hindsight.

    \b
    Examples:
        memwarden serve                                      # self-hosted, 127.0.0.1:8890
        memwarden serve --upstream http://127.0.0.1:8888     # in front of Hindsight
        memwarden serve --upstream mem0+http://127.0.0.1:8888    # in front of Mem0's REST server
        memwarden serve --upstream mem0-platform+https://api.mem0.ai    # Mem0's platform (key in the config)
        memwarden keys create --data-dir ./memwarden-data --name ops --admin '*'
        memwarden serve --host 0.0.0.0                       # beyond loopback: keys required
        MEMWARDEN_DATABASE__URL=postgresql://… memwarden serve --workers 4 --upstream http://127.0.0.1:8888
    Point clients at http://127.0.0.1:8890.
    """
    overrides: dict[str, Any] = {}
    if host is not None:
        overrides.setdefault("server", {})["host"] = host
    if port is not None:
        overrides.setdefault("server", {})["port"] = port
    if data_dir is not None:
        overrides["data_dir"] = str(data_dir)
    if allow_unauthenticated:
        overrides.setdefault("server", {})["allow_unauthenticated"] = True
    if database_url is not None:
        from memwarden.db.postgres import passwords

        if passwords(database_url):
            raise click.UsageError(
                "--database-url carries a password, which every user of this machine can read on the command line;"
                " give the URL in MEMWARDEN_DATABASE__URL, or the password in PGPASSWORD or ~/.pgpass"
            )
        overrides["database"] = {"url": database_url}
    if upstream is not None:
        kind, backend = upstream_of(upstream)
        overrides["backend"] = kind
        overrides["backends"] = {kind: backend}
    resolved = settings(config, overrides)
    if workers > 1 and resolved.database.url is None:
        raise click.UsageError(
            "--workers above 1 needs memwarden's state on PostgreSQL (database.url): on SQLite one process owns"
            " the database's writer"
        )

    import uvicorn

    from memwarden.db.database import DatabaseError
    from memwarden.proxy.app import check_runnable, create_app, open_ledger
    from memwarden.proxy.logging import configure_logging
    from memwarden.settings import SettingsError

    configure_logging(resolved.server)  # before the ledger opens: it logs (audit checkpoints, alarms)
    try:
        check_runnable(resolved)
        ledger = open_ledger(resolved)  # a corrupt or unusable data directory: say so now
        if resolved.backend == "local":
            from memwarden.store.schema import STORE_MIGRATIONS

            ledger.migrate_sync(STORE_MIGRATIONS)  # the store's tables too, before serving
        made, usable = count_keys(ledger)
        refusal = exposure_problem(resolved, made)
        if refusal is not None:
            ledger.close()
            raise SettingsError(refusal)
    except (SettingsError, DatabaseError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(start_line(resolved, made, usable), err=True)
    if workers > 1:
        # Each worker process builds its app from the same settings: the file and environment it
        # inherits, and this command's options (WORKER_OPTIONS).
        ledger.close()
        os.environ[WORKER_OPTIONS] = json.dumps({"config": str(config) if config else None, "overrides": overrides})
        target: Any = f"{__name__}:worker_app"
    else:
        target = create_app(resolved, ledger=ledger)
    uvicorn.run(
        target,
        factory=workers > 1,
        workers=workers if workers > 1 else None,
        host=resolved.server.host,
        port=resolved.server.port,
        loop="uvloop" if sys.platform != "win32" else "asyncio",
        http="httptools",
        log_config=None,
        access_log=False,
        server_header=False,
        date_header=False,
        # SIGTERM: requests in flight get this long to finish (a governed retain cut short is settled
        # at the next start), then the lifespan stops deliveries and background work, and closes
        # the database after the last write.
        timeout_graceful_shutdown=math.ceil(resolved.server.shutdown_grace),
    )


WORKER_OPTIONS = "MEMWARDEN_SERVE_OPTIONS"  # settings.ENV_RESERVED: not a settings key


def worker_app() -> Any:
    """One ``serve --workers N`` process's app (uvicorn's factory): the settings the command
    resolved, read again from its options and the inherited environment."""
    from memwarden.proxy.app import create_app
    from memwarden.proxy.logging import configure_logging

    options = json.loads(os.environ[WORKER_OPTIONS])
    config = Path(options["config"]) if options["config"] else None
    resolved = settings(config, options["overrides"])
    configure_logging(resolved.server)
    try:  # several processes, each its own e5 encoder: a lone query takes one core, not two
        from memwarden.store import e5_onnx

        e5_onnx.LONE_QUERY_THREADS = 1
    except ImportError:  # pragma: no cover - without the local extra: no encoder
        pass
    return create_app(resolved)


def upstream_of(value: str) -> tuple[str, dict[str, str]]:
    """``--upstream``'s backend and its settings: ``mem0+http(s)://…`` is Mem0's REST server,
    ``mem0-platform+https://…`` Mem0's platform API, any other URL a Hindsight (``hindsight+http://…``
    may say so)."""
    scheme, plus, rest = value.partition("+")
    if plus and scheme == "mem0":
        return "mem0", {"url": rest, "dialect": "rest"}
    if plus and scheme == "mem0-platform":
        return "mem0", {"url": rest, "dialect": "platform"}
    if plus and scheme == "hindsight":
        return "hindsight", {"url": rest}
    return "hindsight", {"url": value}


def count_keys(ledger: Database) -> tuple[int, int]:
    """How many keys were ever made, and how many are usable now."""
    from memwarden.db.common import now
    from memwarden.db.keys import all_keys

    at = now()
    keys = ledger.read_sync(all_keys)
    return len(keys), sum(key.usable(at) for key in keys)


def exposure_problem(settings: Settings, made: int) -> str | None:
    """Why memwarden must not serve this address as configured (None: it may). Once a key was made,
    keys are required (even if none is usable now: every request is then refused, not let in)."""
    from memwarden.governance.keys import is_loopback

    server = settings.server
    if made or is_loopback(server.host) or server.allow_unauthenticated:
        return None
    return (
        f"refusing to serve {server.host} without API keys: anyone who reaches it could read, write and delete "
        f"every bank. Make a key first (memwarden keys create --data-dir {settings.data_dir.resolve()} --name ops "
        "--admin '*'), bind 127.0.0.1, or pass --allow-unauthenticated (server.allow_unauthenticated) to accept that"
    )


def start_line(settings: Settings, made: int, usable: int) -> str:
    """The one line that says how this memwarden serves."""
    from memwarden.governance.keys import is_loopback

    server = settings.server
    if settings.backend == "local":
        mode = "self-hosted"
    elif settings.backend == "mem0":
        mode = f"proxy in front of Mem0 at {settings.backends.mem0.url}"
    else:
        mode = f"proxy in front of {settings.backends.hindsight.url}"
    host = f"[{server.host}]" if ":" in server.host else server.host
    if made:
        keys = f"API keys required ({usable} usable)"
    elif is_loopback(server.host):
        keys = "no API keys: open to programs on this machine only"
    else:
        keys = "no API keys and NOT loopback: open to anyone who reaches it (--allow-unauthenticated)"
    return f"memwarden: {mode}; data {settings.data_dir.resolve()}; http://{host}:{server.port}; {keys}"
