"""The ``memwarden`` command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from proxy import __version__
from proxy.settings import Settings, SettingsError, load_settings


def _settings(config: Path | None, overrides: dict[str, Any]) -> Settings:
    try:
        return load_settings(config_file=config, overrides=overrides)
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memwarden")
def main() -> None:
    """memwarden: a governance proxy for AI-agent memory."""


@main.command()
@click.option("--config", "config", type=click.Path(path_type=Path), help="memwarden.toml (or MEMWARDEN_CONFIG).")
@click.option("--host", help="Address to listen on [default: 127.0.0.1].")
@click.option("--port", type=int, help="Port to listen on [default: 8890].")
@click.option("--data-dir", type=click.Path(path_type=Path), help="Data directory [default: ./memwarden-data].")
@click.option("--upstream", help="Govern the Hindsight server at this URL (no config file needed).")
def serve(config: Path | None, host: str | None, port: int | None, data_dir: Path | None, upstream: str | None) -> None:
    """Run the memwarden server.

    \b
    Example, in front of a Hindsight server on port 8888:
        memwarden serve --upstream http://127.0.0.1:8888
    then point clients at http://127.0.0.1:8890 instead of :8888.
    """
    overrides: dict[str, Any] = {}
    if host is not None:
        overrides.setdefault("server", {})["host"] = host
    if port is not None:
        overrides.setdefault("server", {})["port"] = port
    if data_dir is not None:
        overrides["data_dir"] = str(data_dir)
    if upstream is not None:
        overrides["backend"] = "hindsight"
        overrides["backends"] = {"hindsight": {"url": upstream}}
    settings = _settings(config, overrides)

    import uvicorn

    from proxy.app import check_runnable, create_app
    from proxy.logging import configure_logging

    try:
        check_runnable(settings)
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None
    configure_logging(settings.server)
    app = create_app(settings)
    uvicorn.run(
        app,
        host=settings.server.host,
        port=settings.server.port,
        loop="uvloop" if sys.platform != "win32" else "asyncio",
        http="httptools",
        log_config=None,
        access_log=False,
        server_header=False,
        date_header=False,
    )
