"""``memwarden restore``: undo a DELETE — a bank, its memories, a document, its config — from the
snapshot memwarden took before it (``config_guard.destructive = "reversible"``, the default)."""

from __future__ import annotations

from typing import Any

import click

from memwarden.db.retention import DELETIONS, OPEN
from memwarden.proxy.cli.client import URL_OPTION, Client
from memwarden.proxy.cli.config import run_rollback, snapshot_line


def latest_deletion(items: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The newest snapshot (``items`` are newest first) taken before a DELETE that still can be
    undone — the same reasons and outcomes retention's restore window reads (``db.retention``)."""
    return next((s for s in items if s["reason"] in DELETIONS and (s.get("outcome") or "applied") in OPEN), None)


@click.command("restore")
@click.argument("bank")
@click.argument("snapshot_id", required=False)
@URL_OPTION
@click.option("--yes", is_flag=True, help="Apply without asking (the preview is still printed).")
@click.option("--json", "as_json", is_flag=True, help="Print the preview and the result as JSON.")
def restore(bank: str, snapshot_id: str | None, url: str, yes: bool, as_json: bool) -> None:
    """Undo the latest DELETE of BANK (or the one SNAPSHOT_ID names: the X-Warden-Snapshot header of
    its answer, or `memwarden config snapshots BANK`) by the rollback of the snapshot taken before it:
    the config overrides as they were, and every memory lost since re-created from the ledger. Shows
    what it would do first and asks.

    \b
    Examples:
        memwarden restore team-a                      # the bank's latest deletion
        memwarden restore team-a 3f2a9c0d1e2b4a5f --yes
    """
    client = Client(url)
    if snapshot_id is None:
        items = client.read("banks", bank, "snapshots", failure=f"cannot list snapshots through {url}", timeout=30)
        found = latest_deletion(items["items"])
        if found is None:
            raise click.ClickException(
                f"no deletion of bank {bank} to undo (`memwarden config snapshots {bank} --url {url}` lists its"
                " snapshots; one already restored or past config_guard.restore_days is not offered)"
            )
        snapshot_id = str(found["id"])
        if not as_json:
            click.echo(f"The latest deletion of {bank}:\n  {snapshot_line(found)}")
    run_rollback(client, bank, snapshot_id, yes=yes, as_json=as_json)
