"""The ``memwarden`` command line: the ``main`` group; each command group in a module of its own.

Commands that talk to a running memwarden go through :mod:`memwarden.proxy.cli.client`; the
``--data-dir`` modes read the database read-only through :mod:`memwarden.proxy.cli.offline`.
"""

from __future__ import annotations

import click

from memwarden import __version__
from memwarden.proxy.cli.audit import audit_group
from memwarden.proxy.cli.bank import bank_group
from memwarden.proxy.cli.classify import classify
from memwarden.proxy.cli.config import config_group
from memwarden.proxy.cli.explain import explain_command
from memwarden.proxy.cli.keys import keys_group
from memwarden.proxy.cli.mcp import mcp_command
from memwarden.proxy.cli.memories import memories_group
from memwarden.proxy.cli.outbox import outbox_group
from memwarden.proxy.cli.plans import plan_group
from memwarden.proxy.cli.reports import report_group
from memwarden.proxy.cli.restore import restore
from memwarden.proxy.cli.retention import retention_group
from memwarden.proxy.cli.serve import serve
from memwarden.proxy.cli.state import migrate_state_command
from memwarden.proxy.cli.store import store_group

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memwarden")
def main() -> None:
    """memwarden: a governance proxy for AI-agent memory."""
    # A command's output is its stdout alone: log lines (an audit checkpoint written when a command
    # opens the data directory) go to stderr, warnings and worse. `serve` configures its own.
    from memwarden.proxy.logging import configure_logging
    from memwarden.settings import ServerSettings

    configure_logging(ServerSettings.model_validate({"log_level": "warning"}))


for command in (
    serve,
    classify,
    audit_group,
    config_group,
    restore,
    store_group,
    bank_group,
    explain_command,
    keys_group,
    mcp_command,
    memories_group,
    outbox_group,
    retention_group,
    plan_group,
    report_group,
    migrate_state_command,
):
    main.add_command(command)
