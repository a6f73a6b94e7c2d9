"""``memwarden outbox``: the writes accepted for a backend that wait for it (or that it refused)."""

from __future__ import annotations

from typing import Any

import click

from memwarden.proxy.cli.client import URL_OPTION, Client
from memwarden.proxy.cli.common import JSON_OPTION, echo_json


@click.group("outbox")
def outbox_group() -> None:
    """The delivery outbox in front of a backend: list, retry now, give up."""


def _line(entry: dict[str, Any]) -> str:
    said = entry.get("last_error") or ""
    return (
        f"{entry['operation_id']}  {entry['state']:<9} {entry['bank']:<16} items {entry['items']:<4}"
        f" attempts {entry['attempts']:<3} {entry['created_at'][:19]}  {said[:60]}"
    )


@outbox_group.command("list")
@click.option(
    "--state", type=click.Choice(["sending", "queued", "delivered", "dead", "given_up"]), help="Only this state."
)
@click.option("--bank")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@URL_OPTION
@JSON_OPTION
def outbox_list(state: str | None, bank: str | None, limit: int, url: str, as_json: bool) -> None:
    """What waits for the backend, and the dead letters, newest first.

    \b
    Examples:
        memwarden outbox list
        memwarden outbox list --state dead
    """
    params = {k: v for k, v in (("state", state), ("bank", bank), ("limit", limit)) if v is not None}
    page = Client(url).call("GET", "outbox", params=params)
    if as_json:
        echo_json(page)
        return
    s = page["summary"]
    oldest = f", oldest {s['oldest_age_s']:.0f} s" if s["oldest_age_s"] is not None else ""
    click.echo(
        f"queued: {s['queued_items']} items in {s['queued_entries']} entries{oldest}; dead letters: {s['dead_letters']}"
    )
    if s.get("full"):
        click.echo(f"FULL: {s['full']}")
    for entry in page["items"]:
        click.echo(_line(entry))
    if page["total"] > len(page["items"]):
        click.echo(f"… {page['total'] - len(page['items'])} more")


@outbox_group.command("retry")
@click.argument("operation_id")
@URL_OPTION
@JSON_OPTION
def outbox_retry(operation_id: str, url: str, as_json: bool) -> None:
    """Deliver now: a queued entry skips its backoff; a dead or given-up one is queued again."""
    entry = Client(url).call("POST", "outbox", operation_id, "retry")
    echo_json(entry) if as_json else click.echo(_line(entry))


@outbox_group.command("give-up")
@click.argument("operation_id")
@click.option("--yes", is_flag=True, help="Confirm: the entry's memories become failed.")
@URL_OPTION
@JSON_OPTION
def outbox_give_up(operation_id: str, yes: bool, url: str, as_json: bool) -> None:
    """Stop trying to deliver an entry; its memories become failed (audited; it can be retried)."""
    if not yes:
        raise click.UsageError("giving up makes the entry's memories failed: add --yes")
    client = Client(url)
    bank = client.call("GET", "outbox", operation_id)["bank"]  # the confirmation names it
    entry = client.call("POST", "outbox", operation_id, "give-up", headers={"X-Warden-Confirm": bank})
    echo_json(entry) if as_json else click.echo(_line(entry))
